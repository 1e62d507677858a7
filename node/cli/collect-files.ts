// What `heaplens collect` reads on the node: when the job started (--since, else the dumps' own context), the kernel's
// log since then (dmesg, else the journal), the job's memory cgroup files. Each reader says what it could not read
// rather than failing: the collection goes on with the rest.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseDumpContext, type ContextRecord } from '../../core/formats/dump-context.js';
import { parseDumpName } from '../../core/formats/dump-filename.js';

/**
 * A time as `--since` takes it: ISO 8601 (`2026-12-07T04:00:00Z`; without a zone, the machine's local time, as
 * `date` prints it), `@<seconds since the epoch>`, or a duration ago (`90m`, `2h`, `1d`, `30s`). Milliseconds since the
 * epoch, or a message.
 */
export function parseSince(v: string, nowMs = Date.now()): { ok: true; ms: number } | { ok: false; message: string } {
  const t = v.trim();
  const at = /^@(\d+(?:\.\d+)?)$/.exec(t);
  if (at) return { ok: true, ms: Number(at[1]) * 1000 };
  const ago = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(t);
  if (ago) return { ok: true, ms: nowMs - Number(ago[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[ago[2] as 's'] };
  if (/^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.test(t)) {
    const ms = Date.parse(t.includes(' ') || t.includes('T') ? t.replace(' ', 'T') : `${t}T00:00`);
    if (Number.isFinite(ms)) return { ok: true, ms };
  }
  return {
    ok: false,
    message: 'takes a time: 2026-12-07T04:00 (local), 2026-12-07T04:00:00Z, @<epoch seconds>, or 90m / 2h / 1d ago',
  };
}

export interface DumpFolderFacts {
  /** dump files (by jemalloc's name) found in the folder, recursively */
  dumps: string[];
  /** every file in the folder, recursively, as paths relative to it */
  files: string[];
  pids: Set<number>;
  /** the earliest process start the dumps' contexts record, ms since the epoch */
  startMs: number | null;
  /** the oldest dump's modification time, ms */
  oldestMtimeMs: number | null;
  /** the memory cgroup directories the contexts recorded */
  cgroupPaths: Set<string>;
}

/** Reads a dump folder's names and the context lines of its `.pyframes` tables (only the `C` lines). */
export function dumpFolderFacts(dir: string): DumpFolderFacts {
  const f: DumpFolderFacts = {
    dumps: [],
    files: [],
    pids: new Set(),
    startMs: null,
    oldestMtimeMs: null,
    cgroupPaths: new Set(),
  };
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) f.files.push(r);
    }
  };
  walk('');
  for (const r of f.files) {
    const name = parseDumpName(r);
    if (name && !r.endsWith('.tmp')) {
      f.dumps.push(r);
      f.pids.add(name.pid);
      const m = statSync(join(dir, r)).mtimeMs;
      f.oldestMtimeMs = f.oldestMtimeMs === null ? m : Math.min(f.oldestMtimeMs, m);
    }
    if (!r.endsWith('.pyframes')) continue;
    const ctx = contextOf(join(dir, r));
    if (!ctx) continue;
    if (ctx.startRealMs !== null)
      f.startMs = f.startMs === null ? ctx.startRealMs : Math.min(f.startMs, ctx.startRealMs);
    if (ctx.cgroup?.path) f.cgroupPaths.add(ctx.cgroup.path);
  }
  return f;
}

function contextOf(path: string) {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch {
    return null;
  }
  const records: ContextRecord[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.startsWith('C ')) records.push({ line: i + 1, fields: l.slice(2).split(' ') });
  });
  return parseDumpContext(records).context;
}

export interface KernelLog {
  /** the log's text (empty when none could be read) */
  text: string;
  /** how it was read: `dmesg` (seconds since boot, the form the dumps' boot clock places exactly) or `journalctl -k` */
  source: string | null;
  lines: number;
  /** why a source could not be used */
  problems: string[];
}

type Run = (cmd: string, args: string[]) => { status: number | null; stdout: string; stderr: string; error?: Error };

const runTool: Run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
};

function why(cmd: string, r: ReturnType<Run>): string {
  const e = r.error as NodeJS.ErrnoException | undefined;
  if (e?.code === 'ENOENT') return `${cmd}: not installed`;
  const msg = r.stderr.trim().split('\n')[0];
  // the tools name themselves already ("dmesg: read kernel buffer failed: …")
  if (msg.startsWith(`${cmd}:`)) return msg;
  return `${cmd}: ${msg || (e ? e.message : `exit ${r.status}`)}`;
}

/**
 * The kernel's log since `sinceMs`. dmesg first: its seconds since boot are the clock the dumps' context records too,
 * so a kill is placed exactly among the dumps; it is used when its ring buffer still reaches back to the job's start.
 * Otherwise the journal's kernel messages (`journalctl -k`, ISO times), which outlive the ring buffer; else whatever
 * part dmesg still has, said so.
 */
export function readKernelLog(
  sinceMs: number,
  run: Run = runTool,
  uptimeS: () => number | null = readUptime,
  nowMs = Date.now(),
): KernelLog {
  const problems: string[] = [];
  let partial: KernelLog | null = null;
  const d = run('dmesg', []);
  const up = uptimeS();
  if (d.status === 0 && up !== null) {
    const sinceBootS = (sinceMs - (nowMs - up * 1000)) / 1000;
    const all = d.stdout.split('\n').filter((l) => l !== '');
    const first = /^\[\s*(\d+\.\d+)\]/.exec(all[0] ?? '');
    let keep = false;
    const kept: string[] = [];
    for (const l of all) {
      const m = /^\[\s*(\d+\.\d+)\]/.exec(l);
      if (m) keep = Number(m[1]) >= sinceBootS;
      if (keep) kept.push(l);
    }
    const log: KernelLog = {
      text: kept.join('\n') + (kept.length ? '\n' : ''),
      source: 'dmesg',
      lines: kept.length,
      problems,
    };
    // the ring buffer starts at boot or after its oldest lines were overwritten
    if (!first || Number(first[1]) <= Math.max(sinceBootS, 1)) return log;
    partial = log;
    problems.push(
      `dmesg: its ring buffer starts ${Math.round(Number(first[1]) - sinceBootS)} s after --since (older lines overwritten)`,
    );
  } else if (d.status === 0) problems.push('dmesg: /proc/uptime unreadable (cannot place its seconds since boot)');
  else problems.push(why('dmesg', d));

  const j = run('journalctl', [
    '-k',
    '--no-pager',
    '-q',
    '-o',
    'short-iso',
    '--since',
    `@${Math.floor(sinceMs / 1000)}`,
  ]);
  if (j.status === 0 && j.stdout.trim() !== '' && !/^-- No entries --\s*$/.test(j.stdout.trim())) {
    const lines = j.stdout.split('\n').filter((l) => l !== '').length;
    return { text: j.stdout, source: 'journalctl -k', lines, problems };
  }
  problems.push(j.status === 0 ? 'journalctl -k: no kernel messages in the journal since then' : why('journalctl', j));
  if (partial) {
    partial.source = 'dmesg (partial)';
    return partial;
  }
  return { text: '', source: null, lines: 0, problems };
}

function readUptime(): number | null {
  try {
    const s = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    return Number.isFinite(s) ? s : null;
  } catch {
    return null;
  }
}

/** The memory files heaplens reads (core/formats/cgroup-memory.ts) and those a reader of the kill wants besides. */
export const CGROUP_FILES = [
  // v2
  'memory.events',
  'memory.events.local',
  'memory.peak',
  'memory.max',
  'memory.high',
  'memory.current',
  'memory.stat',
  'memory.pressure',
  'memory.swap.current',
  'memory.swap.max',
  'memory.swap.events',
  // v1
  'memory.oom_control',
  'memory.max_usage_in_bytes',
  'memory.limit_in_bytes',
  'memory.usage_in_bytes',
  'memory.failcnt',
  'memory.memsw.max_usage_in_bytes',
  'memory.memsw.limit_in_bytes',
  'memory.memsw.failcnt',
];

/**
 * The job's memory cgroup: the directories the dumps' contexts recorded, else this process's own when it is not
 * the hierarchy's root (collect run inside the job's allocation, e.g. at the end of a batch script). The root's
 * files describe the whole machine, not a job: never taken.
 */
export function jobCgroupDirs(recorded: ReadonlySet<string>, self: string | null): string[] {
  if (recorded.size > 0) return [...recorded];
  if (self === null) return [];
  const lines = self.split('\n');
  const v2 = lines.find((l) => l.startsWith('0::'))?.slice(3);
  const v1 = lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
  const v1path = v1 ? v1.slice(v1.indexOf(':', v1.indexOf(':') + 1) + 1) : undefined;
  const out: string[] = [];
  if (v1path && v1path !== '/') out.push(`/sys/fs/cgroup/memory${v1path}`);
  else if (v2 && v2 !== '/') out.push(`/sys/fs/cgroup${v2}`);
  return out;
}

/** The cgroup files present in a directory (existence only: reading them is the copy). */
export function cgroupFilesIn(dir: string): string[] {
  return existsSync(dir) ? CGROUP_FILES.filter((f) => existsSync(join(dir, f))) : [];
}
