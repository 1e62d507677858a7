// What a dump's file name says. jemalloc names automatic dumps
//   <prefix>.<pid>.<seq>.<letter><n>.heap        (letter: i interval, m manual, u high-water, f final)
//   <prefix>.<pidns>.<pid>.<seq>.<letter><n>.heap   with prof_pid_namespace (5.3.1+)
// and the final one "<prefix>.<pid>.<seq>.f.heap". Copies may carry .gz.

import type { Trigger } from './dump-types.js';

export interface DumpName {
  prefix: string;
  pidNamespace: number | null;
  pid: number;
  seq: number;
  trigger: Trigger;
  triggerSeq: number | null;
}

const LETTER: Record<string, Trigger> = { i: 'interval', m: 'manual', u: 'high-water', f: 'final' };
const NAME = /^(.*)\.(\d+)\.(\d+)\.([imuf])(\d*)\.heap(?:\.gz)?$/;
// Namespace ids are /proc/<pid>/ns/pid inode numbers: the initial namespace is 0xEFFFFFFC (4026531836)
// and others are allocated near it, so a 10-digit field before the pid is read as a namespace.
const PIDNS = /^(.*)\.(\d{10,})$/;

/** The last component of a path ("libc.so.6", "job" for "runs/job/"): the one basename of every layer. */
export function basename(path: string): string {
  const t = path.endsWith('/') ? path.slice(0, -1) : path;
  return t.slice(t.lastIndexOf('/') + 1);
}

export function dirName(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(0, i) : '';
}

export function parseDumpName(path: string): DumpName | null {
  const m = NAME.exec(basename(path));
  if (!m) return null;
  let prefix = m[1];
  let pidNamespace: number | null = null;
  const ns = PIDNS.exec(prefix);
  if (ns) {
    prefix = ns[1];
    pidNamespace = Number(ns[2]);
  }
  const trigger = LETTER[m[4]];
  return {
    prefix,
    pidNamespace,
    pid: Number(m[2]),
    seq: Number(m[3]),
    trigger,
    triggerSeq: m[5] === '' ? null : Number(m[5]),
  };
}

export type SideFileKind = 'maps' | 'pyframes' | 'perf-map' | 'pycode-map' | 'rss-log';

export interface SideFile {
  kind: SideFileKind;
  /** pid the file belongs to, when its name says */
  pid: number | null;
}

/** Files that travel with dumps: copies of /proc/<pid>/maps, Python frame tables, perf maps. */
export function classifySideFile(path: string): SideFile | null {
  const name = basename(path);
  if (name.toLowerCase().endsWith('.csv')) return { kind: 'rss-log', pid: null };
  if (name.endsWith('.pyframes'))
    return { kind: 'pyframes', pid: parseDumpName(name.slice(0, -'.pyframes'.length))?.pid ?? null };
  let m = /^perf-(\d+)\.map$/.exec(name);
  if (m) return { kind: 'perf-map', pid: Number(m[1]) };
  m = /^pycode-(\d+)-[^/]*\.map$/.exec(name);
  if (m) return { kind: 'pycode-map', pid: Number(m[1]) };
  if (name === 'maps') {
    // proc/<pid>/maps keeps its pid in the folder name
    const p = /(?:^|\/)(\d+)\/maps$/.exec(path);
    return { kind: 'maps', pid: p ? Number(p[1]) : null };
  }
  m = /^maps\.(\d+)$/.exec(name) ?? /^(\d+)\.maps$/.exec(name);
  if (m) return { kind: 'maps', pid: Number(m[1]) };
  return null;
}

/**
 * A file libheaplens_capture is still writing, or that a kill cut: `<dump>.<16 hex>.tmp` (jemalloc writes each
 * dump there and the library renames it when complete) and `<dump>.pyframes.<16 hex>.tmp`
 * (docs/pyframes-format.md §5a); older versions of the library wrote `<dump>.tmp` and `<dump>.pyframes.tmp`.
 * Never a dump: its bytes start like one, but it may end anywhere.
 */
export function isCaptureTempName(path: string): boolean {
  return /\.(?:heap|pyframes)(?:\.[0-9a-f]{16})?\.tmp$/.test(path);
}

/** A file to try as a dump: by name, or (for unknown names) by its first bytes. */
export function looksLikeDumpName(path: string): boolean {
  return /\.heap(?:\.gz)?$/.test(path) || /\.prof(?:\.gz)?$/.test(path);
}

export function looksLikeDumpBytes(head: Uint8Array): boolean {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return true;
  const s = String.fromCharCode(...head.subarray(0, 32));
  return s.startsWith('heap_v2/') || s.startsWith('heap profile:') || s.startsWith('<jemalloc>:');
}

/** A folder listing's side files: its `.pyframes` tables by name, and its other side files, each with its place. */
interface SideIndex {
  tables: Map<string, number[]>;
  others: (readonly [name: string, side: SideFile, at: number])[];
}
const sideIndexOf = new WeakMap<readonly string[], SideIndex>();

/**
 * The folder's side files, classified once per listing: a folder of N dumps asks for each dump's side files
 * among the same N-odd names (a shell's `dumps/*.heap*`), and classifying them anew each time was N² regular-
 * expression tests; a dump's own table is then found by its name.
 */
function sideIndex(folderNames: readonly string[]): SideIndex {
  let x = sideIndexOf.get(folderNames);
  if (x === undefined) {
    x = { tables: new Map(), others: [] };
    for (let at = 0; at < folderNames.length; at++) {
      const n = folderNames[at];
      if (n.endsWith('.pyframes')) {
        const ats = x.tables.get(n);
        if (ats) ats.push(at);
        else x.tables.set(n, [at]);
        continue;
      }
      const side = classifySideFile(n);
      if (side) x.others.push([n, side, at]);
    }
    sideIndexOf.set(folderNames, x);
  }
  return x;
}

/**
 * The side files of one dump among the names of its folder, as a folder holding them would supply them: its
 * `<dump>.pyframes` table, the maps files and perf/code maps of its pid (`maps.<pid>`, `<pid>.maps`, a
 * pid-less `maps`, `perf-<pid>.map`, `pycode-<pid>-….map`). `proc` lists `proc/<pid>/` when the folder has one.
 */
export function sideFilesOfDump(
  dumpName: string,
  folderNames: readonly string[],
  procPidNames: readonly string[] = [],
): string[] {
  const pid = parseDumpName(dumpName)?.pid ?? null;
  const plain = dumpName.endsWith('.gz') ? dumpName.slice(0, -3) : dumpName;
  const { tables, others } = sideIndex(folderNames);
  // in the folder's order, as one pass over its names gives them
  const found: (readonly [string, number])[] = [];
  for (const t of new Set([dumpName + '.pyframes', plain + '.pyframes'])) {
    for (const at of tables.get(t) ?? []) found.push([t, at]);
  }
  for (const [n, side, at] of others)
    if (n !== dumpName && (side.pid === null ? side.kind === 'maps' : side.pid === pid)) found.push([n, at]);
  found.sort((x, y) => x[1] - y[1]);
  const out = found.map(([n]) => n);
  if (pid !== null && procPidNames.includes('maps')) out.push(`proc/${pid}/maps`);
  return out;
}

/** What a profile's name says beyond jemalloc's naming (pprof files): its process and place in the series. */
export interface ProfileName {
  /** the name before the pid (or the whole name's pattern without one) */
  prefix: string;
  pid: number | null;
  /** the sequence number the name carries (pprof's own `.001.pb.gz`, a scraper's counter), else null */
  seq: number | null;
}

const PROFILE_SUFFIX = /(?:\.(?:pb|pprof|prof|proto|heap))*(?:\.(?:gz|zst|bz2|xz))?$/;
const PID_LIMIT = 4194304; // Linux's PID_MAX_LIMIT

/**
 * Pids and sequence numbers of profiles from their names (`heap.1234.pb.gz`, `svc-1234-007.pb.gz`,
 * `pprof.svc.inuse_space.003.pb.gz`), judged over the files of one folder that share a name pattern: a number
 * zero-padded in any of them, or counting 0/1, 2, 3… across them, is a sequence number; a date's time of day,
 * an epoch time or a number past Linux's pid limit is not a pid; the first number left is the pid.
 */
export function profileNames(paths: readonly string[]): ProfileName[] {
  const parsed = paths.map((path) => {
    const stem = basename(path).replace(PROFILE_SUFFIX, '');
    const tokens = [...stem.matchAll(/[^.\-_]+/g)].map((m) => ({ text: m[0], at: m.index }));
    const pattern = tokens.map((t) => (/^\d+$/.test(t.text) ? '#' : t.text)).join('.');
    return { stem, tokens, group: `${dirName(path)}\u0000${pattern}` };
  });
  const groups = new Map<string, number[]>();
  parsed.forEach((p, i) => groups.set(p.group, [...(groups.get(p.group) ?? []), i]));
  const out: ProfileName[] = parsed.map((p) => ({ prefix: p.stem, pid: null, seq: null }));
  for (const members of groups.values()) {
    const first = parsed[members[0]];
    let pidAt = -1;
    let seqAt = -1;
    first.tokens.forEach((t, k) => {
      if (!/^\d+$/.test(t.text)) return;
      const values = members.map((i) => parsed[i].tokens[k].text);
      const sorted = [...new Set(values.map(Number))].sort((a, b) => a - b);
      const counts =
        members.length >= 2 &&
        sorted.length === members.length &&
        (sorted[0] === 0 || sorted[0] === 1) &&
        sorted.every((v, j) => v === sorted[0] + j);
      if (values.some((v) => /^0\d/.test(v)) || counts) {
        seqAt = k;
        return;
      }
      const timeOfDay = k > 0 && /^(?:19|20)\d{6}$/.test(first.tokens[k - 1].text);
      const pidLike = values.every((v) => /^[1-9]\d*$/.test(v) && Number(v) <= PID_LIMIT);
      if (pidAt < 0 && pidLike && !timeOfDay) pidAt = k;
      // after the pid, a number that differs between each process's files counts them (heap.1234.2.pb.gz)
      else if (pidAt >= 0 && seqAt < 0) {
        const seen = new Set(members.map((i) => `${parsed[i].tokens[pidAt].text}.${Number(parsed[i].tokens[k].text)}`));
        if (seen.size === members.length) seqAt = k;
      }
    });
    for (const i of members) {
      const p = parsed[i];
      const prefix = pidAt >= 0 ? p.stem.slice(0, p.tokens[pidAt].at).replace(/[.\-_]+$/, '') : p.stem;
      out[i] = {
        prefix: prefix || 'profile',
        pid: pidAt >= 0 ? Number(p.tokens[pidAt].text) : null,
        seq: seqAt >= 0 ? Number(p.tokens[seqAt].text) : null,
      };
    }
  }
  return out;
}
