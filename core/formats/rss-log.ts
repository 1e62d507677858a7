// Reader of RSS logs given as CSV (docs/formats.md, "RSS log"): for dumps from jemalloc alone, which
// carry no process memory figures, a job's own monitoring (a `ps`/`psutil` loop, a sidecar script)
// supplies RSS over time. One header row names the columns; rows that cannot be read become
// problems naming their line, the rest is kept.

import { bytesProblem, dateProblem } from './limits.js';

/** How the time column is written. */
export type RssTimeKind = 'iso' | 'epoch-s' | 'epoch-ms' | 'since-start';

export interface RssSample {
  /** ms since the Unix epoch ('iso', 'epoch-*'), or ms since the process start ('since-start') */
  timeMs: number;
  pid: number | null;
  /** bytes */
  rss: number;
}

export interface RssLogProblem {
  line: number;
  message: string;
}

export interface RssLog {
  timeKind: RssTimeKind;
  /** the header's names of the columns used */
  columns: { time: string; pid: string | null; rss: string };
  rssUnit: 'KiB' | 'bytes';
  samples: RssSample[];
  problems: RssLogProblem[];
}

/** A log with more rows than this is read up to it (a sample a second for 11 days). */
export const MAX_RSS_ROWS = 1_000_000;
const MAX_PROBLEMS = 50;
/** Epoch seconds before this (2001-09-09) are taken as seconds since start (numbers alone do not say). */
const EPOCH_S_MIN = 1e9;

// Accepted column names (lowercase, after trimming, quotes removed, and blanks/dashes as "_").
const TIME_NAMES: Record<string, RssTimeKind | 'auto'> = {
  time: 'auto',
  timestamp: 'auto',
  ts: 'auto',
  date: 'iso',
  datetime: 'iso',
  time_iso: 'iso',
  epoch: 'epoch-s',
  epoch_s: 'epoch-s',
  unix: 'epoch-s',
  unix_time: 'epoch-s',
  time_s: 'auto',
  epoch_ms: 'epoch-ms',
  time_ms: 'epoch-ms',
  timestamp_ms: 'epoch-ms',
  elapsed: 'since-start',
  elapsed_s: 'since-start',
  seconds: 'since-start',
  since_start: 'since-start',
  seconds_since_start: 'since-start',
  uptime_s: 'since-start',
  t: 'auto',
};
const PID_NAMES = new Set(['pid', 'process_id', 'procid']);
const RSS_KIB_NAMES = new Set([
  'rss',
  'vmrss',
  'vm_rss',
  'rss_kb',
  'rss_kib',
  'vmrss_kb',
  'rss_kbytes',
  'rss(kb)',
  'rss_kilobytes',
  'rss_k',
]);
const RSS_BYTE_NAMES = new Set(['rss_bytes', 'rss_b', 'vmrss_bytes', 'rss(bytes)', 'rss_byte', 'memory_rss_bytes']);

function normName(s: string): string {
  return s
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

function splitRow(line: string, sep: string): string[] {
  if (!line.includes('"')) return line.split(sep).map((c) => c.trim());
  // quoted cells ("2026-12-01 09:00:00", "a,b"): minimal RFC 4180
  const out: string[] = [];
  let cur = '';
  let q = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (q) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') q = false;
      else cur += c;
    } else if (c === '"') q = true;
    else if (c === sep) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const NUM = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Longest span of a 'since-start' time: a job of 10 years is damage, and larger values lose their ms. */
const MAX_SINCE_START_MS = 10 * 366 * 24 * 3600 * 1000;

/**
 * ms for one time cell, or why it is unusable. ISO without a zone is taken as UTC (logs from clusters usually
 * are). Dates are bounded (limits.ts dateProblem) so that a sample from year 0 is not matched to dumps of now.
 */
function parseTime(cell: string, kind: RssTimeKind, nowMs: number): number | string {
  let t: number;
  if (kind === 'iso') {
    if (!ISO.test(cell)) return 'is not an ISO-8601 date';
    const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(cell) || !cell.includes(':') ? cell : cell + 'Z';
    t = Date.parse(zoned.replace(' ', 'T'));
  } else {
    if (!NUM.test(cell)) return 'is not a number of seconds';
    const v = Number(cell);
    if (!Number.isFinite(v) || v < 0) return 'is not a non-negative number of seconds';
    t = kind === 'epoch-ms' ? v : v * 1000;
    if (kind === 'since-start') return t <= MAX_SINCE_START_MS ? t : 'is more than 10 years after the start';
  }
  const bad = dateProblem(t, nowMs);
  return bad === null ? t : bad;
}

/**
 * Parses a whole CSV text; null when it has no header naming a time and an RSS column. `nowMs` is the
 * reading's clock, for the bound on dates in the future.
 */
export function parseRssLog(text: string, nowMs: number = Date.now()): RssLog | null {
  const lines = text.split('\n');
  let h = 0;
  while (h < lines.length && (lines[h].trim() === '' || lines[h].startsWith('#'))) h++;
  if (h >= lines.length) return null;
  const headerLine = lines[h].replace(/\r$/, '');
  const sep = headerLine.includes('\t') ? '\t' : headerLine.includes(';') && !headerLine.includes(',') ? ';' : ',';
  const names = splitRow(headerLine, sep).map(normName);
  const ti = names.findIndex((n) => n in TIME_NAMES);
  const pi = names.findIndex((n) => PID_NAMES.has(n));
  const ri = names.findIndex((n) => RSS_KIB_NAMES.has(n) || RSS_BYTE_NAMES.has(n));
  if (ti < 0 || ri < 0) return null;
  const rssUnit = RSS_BYTE_NAMES.has(names[ri]) ? 'bytes' : 'KiB';
  let kind = TIME_NAMES[names[ti]];
  const problems: RssLogProblem[] = [];
  const problem = (line: number, message: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push({ line, message });
  };
  const samples: RssSample[] = [];
  for (let i = h + 1; i < lines.length && samples.length < MAX_RSS_ROWS; i++) {
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const cells = splitRow(raw, sep);
    const lineNo = i + 1;
    if (cells.length <= Math.max(ti, ri, pi)) {
      problem(lineNo, `${cells.length} column(s), the header has ${names.length}: row skipped`);
      continue;
    }
    const tc = cells[ti];
    if (kind === 'auto')
      kind = ISO.test(tc) ? 'iso' : NUM.test(tc) && Number(tc) >= EPOCH_S_MIN ? 'epoch-s' : 'since-start';
    const timeMs = parseTime(tc, kind, nowMs);
    if (typeof timeMs === 'string') {
      problem(lineNo, `time ${JSON.stringify(tc.slice(0, 40))} ${timeMs}: row skipped`);
      continue;
    }
    const rc = cells[ri];
    if (!/^\d+(\.\d+)?$/.test(rc)) {
      problem(lineNo, `RSS ${JSON.stringify(rc.slice(0, 40))} is not a non-negative number: row skipped`);
      continue;
    }
    let pid: number | null = null;
    if (pi >= 0) {
      if (!/^\d{1,10}$/.test(cells[pi])) {
        problem(lineNo, `pid ${JSON.stringify(cells[pi].slice(0, 20))} is not a number: row skipped`);
        continue;
      }
      pid = Number(cells[pi]);
    }
    const rss = Math.round(Number(rc) * (rssUnit === 'KiB' ? 1024 : 1));
    const badRss = bytesProblem(rss);
    if (badRss !== null) {
      problem(
        lineNo,
        `RSS ${JSON.stringify(rc.slice(0, 40))}${rssUnit === 'KiB' ? ' KiB' : ''}: ${badRss}: row skipped`,
      );
      continue;
    }
    samples.push({ timeMs, pid, rss });
  }
  if (samples.length >= MAX_RSS_ROWS) problem(lines.length, `only the first ${MAX_RSS_ROWS} rows were read`);
  return {
    timeKind: kind === 'auto' ? 'since-start' : kind,
    columns: { time: names[ti], pid: pi >= 0 ? names[pi] : null, rss: names[ri] },
    rssUnit,
    samples,
    problems,
  };
}
