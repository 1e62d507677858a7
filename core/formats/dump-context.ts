// Reader of the context records (`C <key> <value>`, context version 1) that libheaplens_capture
// writes into each dump's PYFRAMES/1 table (docs/pyframes-format.md §5a): when the dump was taken,
// which process took it, and the allocator / RSS / cgroup counters at that moment.
// The values come from the profiled process: strings are decoded defensively and bounded.

import { dateProblem, MAX_COUNT } from './limits.js';
import { decodePyString } from './pyframes.js';

/** The context version this reader knows; a newer one is ignored with a warning. */
export const CONTEXT_VERSION = 1;
/** Bounds on decoded strings: comm is 16 bytes in the kernel, cmdline is cut at 4 KiB by the producer. */
const MAX_COMM_CHARS = 64;
const MAX_CMDLINE_CHARS = 8192;
const MAX_HOST_CHARS = 256;
const MAX_CGPATH_CHARS = 4096;
/** A context has some 30 keys; more records than this is not a context we wrote. */
const MAX_RECORDS = 256;

export interface JemallocStats {
  allocated: number | null;
  active: number | null;
  resident: number | null;
  mapped: number | null;
  retained: number | null;
  metadata: number | null;
}

export interface CgroupMemory {
  /** 2 for cgroup v2; 1 when the producer fell back to v1's memory controller (usage/limit_in_bytes, rss/cache) */
  version: number | null;
  /** the directory the counters were read from */
  path: string | null;
  /** memory.current, bytes */
  current: number | null;
  /** memory.max, bytes; null when unlimited ("max") or unreadable — see `maxUnlimited` */
  max: number | null;
  maxUnlimited: boolean;
  /** memory.stat anon and file, bytes */
  anon: number | null;
  file: number | null;
}

/** /proc/self/smaps_rollup at the dump, bytes (the kernel's kB × 1,024): where the resident pages are. */
export interface PageBreakdown {
  rss: number | null;
  pss: number | null;
  pssAnon: number | null;
  pssFile: number | null;
  pssShmem: number | null;
  sharedClean: number | null;
  sharedDirty: number | null;
  privateClean: number | null;
  privateDirty: number | null;
  anonymous: number | null;
  swap: number | null;
  swapPss: number | null;
}

/** jemalloc's unused pages it still holds (stats.arenas.<all>.pdirty / pmuzzy), in pages and bytes. */
export interface JemallocPages {
  dirty: number | null;
  muzzy: number | null;
  /** the page size the counts are in (sysconf(_SC_PAGESIZE)); null when the producer did not say */
  pageSize: number | null;
  dirtyBytes: number | null;
  muzzyBytes: number | null;
}

/** Recorded in a forked child at fork: whose pages it started with, and when. */
export interface ForkOrigin {
  parentPid: number;
  timeRealMs: number | null;
  timeMonoMs: number | null;
}

/** The inode of the initial pid namespace (the kernel's PROC_PID_INIT_INO, fixed since Linux 3.8): a process in it
 * has the pids the kernel's own messages name. */
export const INIT_PID_NAMESPACE = 0xeffffffc;
/** The kernel nests pid namespaces at most 32 deep (MAX_PID_NS_LEVEL). */
const MAX_NS_LEVELS = 32;
const NSPID = /^\d{1,10}(?:,\d{1,10}){0,31}$/;
/** /proc/sys/kernel/random/boot_id: a UUID in lowercase hex */
export const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What made the producer write this dump (jemalloc's own triggers, or the memory policy's). */
export type DumpTrigger =
  'interval' | 'manual' | 'final' | 'high-water' | 'rss-step' | 'cgroup-fraction' | 'cgroup-high' | 'cgroup-pressure';
/** Every trigger a context line may name (the report's shape check reads the same list). */
export const DUMP_TRIGGERS: readonly DumpTrigger[] = [
  'interval',
  'manual',
  'final',
  'high-water',
  'rss-step',
  'cgroup-fraction',
  'cgroup-high',
  'cgroup-pressure',
];
const TRIGGERS: ReadonlySet<string> = new Set(DUMP_TRIGGERS);

export interface DumpContext {
  version: number;
  /** wall clock at the dump, ms since the Unix epoch (sub-millisecond fraction kept) */
  timeRealMs: number;
  /** CLOCK_MONOTONIC and CLOCK_BOOTTIME at the dump, ms */
  timeMonoMs: number | null;
  timeBootMs: number | null;
  pid: number;
  ppid: number | null;
  /**
   * The process's pid in each pid namespace /proc showed it (`NSpid:` of /proc/self/status), outermost first; the
   * last is `pid`. A process in a container that mounted its own /proc sees one entry (its own namespace's); one
   * that sees its host's /proc (e.g. `unshare --pid` without `--mount-proc`) sees the host's pid first. Null from
   * producers before this key.
   */
  nsPids: number[] | null;
  /** the inode of the process's pid namespace (/proc/self/ns/pid); INIT_PID_NAMESPACE on the host itself */
  pidNamespace: number | null;
  /** the machine's boot (/proc/sys/kernel/random/boot_id, shared by every container on it): same boot, same host */
  bootId: string | null;
  /** process start, wall clock (ms since the epoch) and since boot (ms); one clock tick resolution */
  startRealMs: number | null;
  startBootMs: number | null;
  comm: string | null;
  /** argv, decoded and bounded; null when unreadable */
  cmdline: string[] | null;
  /** true when the producer cut the command line */
  cmdlineCut: boolean;
  hostname: string | null;
  /** jemalloc stats.* after an epoch refresh; null when the producer could not read any */
  jemalloc: JemallocStats | null;
  /** VmRSS and RssAnon, bytes */
  rss: number | null;
  rssAnon: number | null;
  /** cgroup v2 counters; null outside cgroup v2 or when unreadable */
  cgroup: CgroupMemory | null;
  /** smaps_rollup: shared vs private, clean vs dirty, swapped; null from producers before these keys */
  pages: PageBreakdown | null;
  /** /dev/shm in use and its size, bytes (shared memory counts in a cgroup but in no process's heap) */
  shm: { used: number | null; size: number | null } | null;
  /** jemalloc's dirty and muzzy pages (freed, not yet returned to the kernel) */
  jemallocPages: JemallocPages | null;
  /** set when the process was forked from a process running the library */
  fork: ForkOrigin | null;
  /** why the dump was written; null when the producer did not say (older files) or said something unknown */
  trigger: DumpTrigger | null;
  /** for `cgroup-fraction`: the fraction of the limit that was crossed */
  triggerFraction: number | null;
  /** time the producer spent collecting the context, ns */
  costNs: number | null;
  /** how long after the dump's clock reading jemalloc's stats were read (after jemalloc released its dump lock), ns */
  jemallocDelayNs: number | null;
  /** keys this reader does not know (newer producers), kept for display */
  extra: Record<string, string>;
}

/** One `C` line as the table reader saw it (1-based line within the table, fields after the `C`). */
export interface ContextRecord {
  line: number;
  fields: string[];
}

export interface ContextProblem {
  line?: number;
  message: string;
}

export interface ContextResult {
  context: DumpContext | null;
  /** why the context was ignored (damaged, newer, another pid); null when it was read or absent */
  problem: ContextProblem | null;
}

const INT = /^-?\d{1,19}$/;
const KEY = /^[a-z][a-z0-9_]{0,63}$/;

/** smaps_rollup keys (`sr_<field>`) and where they go */
const SMAPS_KEYS: readonly (readonly [string, keyof PageBreakdown])[] = [
  ['sr_rss', 'rss'],
  ['sr_pss', 'pss'],
  ['sr_pss_anon', 'pssAnon'],
  ['sr_pss_file', 'pssFile'],
  ['sr_pss_shmem', 'pssShmem'],
  ['sr_shared_clean', 'sharedClean'],
  ['sr_shared_dirty', 'sharedDirty'],
  ['sr_private_clean', 'privateClean'],
  ['sr_private_dirty', 'privateDirty'],
  ['sr_anonymous', 'anonymous'],
  ['sr_swap', 'swap'],
  ['sr_swap_pss', 'swapPss'],
];

const INT_KEYS = new Set([
  'context',
  'time_real_ns',
  'time_mono_ns',
  'time_boot_ns',
  'pid',
  'ppid',
  'start_boot_ns',
  'start_real_ns',
  'cmdline_cut',
  'je_allocated',
  'je_active',
  'je_resident',
  'je_mapped',
  'je_retained',
  'je_metadata',
  'rss',
  'rss_anon',
  'cg_version',
  'cg_current',
  'cg_anon',
  'cg_file',
  'ctx_cost_ns',
  'je_delay_ns',
  'hook_alloc_bytes',
  ...SMAPS_KEYS.map(([k]) => k),
  'shm_used',
  'shm_size',
  'je_pdirty',
  'je_pmuzzy',
  'page_size',
  'fork_ppid',
  'fork_real_ns',
  'fork_mono_ns',
  'trigger_ppm',
  'pid_ns',
]);
const STRING_KEYS = new Set(['comm', 'cmdline', 'hostname', 'cg_path', 'trigger', 'nspid', 'boot_id']);

/** ns (decimal string, may exceed 2^53) → ms as a float, exact to well under a microsecond. */
function nsToMs(s: string): number {
  const v = BigInt(s);
  return Number(v / 1000000n) + Number(v % 1000000n) / 1e6;
}

/**
 * Interprets a table's `C` records. `expect` holds what the dump says about itself (the table
 * header's pid, the file name's pid): a context naming another process is ignored.
 */
export function parseDumpContext(
  records: readonly ContextRecord[],
  expect: { pids?: readonly (number | null)[]; nowMs?: number } = {},
): ContextResult {
  if (records.length === 0) return { context: null, problem: null };
  const bad = (message: string, line?: number): ContextResult => ({
    context: null,
    problem: line !== undefined ? { line, message } : { message },
  });
  const first = records[0];
  if (first.fields[0] !== 'context') return bad('context records do not start with "C context <version>"', first.line);
  if (first.fields.length < 2 || !INT.test(first.fields[1])) return bad('context version is not a number', first.line);
  const version = Number(first.fields[1]);
  if (version > CONTEXT_VERSION)
    return bad(`context from a newer version (${version}; this reader knows ${CONTEXT_VERSION})`, first.line);
  if (version < 1) return bad(`unknown context version ${version}`, first.line);
  if (records.length > MAX_RECORDS) return bad(`more than ${MAX_RECORDS} context records`, records[MAX_RECORDS].line);

  const raw = new Map<string, string>();
  for (const r of records) {
    if (r.fields.length !== 2)
      return bad(`context record with ${r.fields.length} fields (want "C <key> <value>")`, r.line);
    const [key, value] = r.fields;
    if (!KEY.test(key)) return bad('context record with a malformed key', r.line);
    if (raw.has(key)) return bad(`context key ${key} repeats`, r.line);
    if (INT_KEYS.has(key) && !INT.test(value)) return bad(`context key ${key} is not an integer`, r.line);
    if (key === 'cg_max' && value !== 'max' && !INT.test(value))
      return bad('context key cg_max is neither an integer nor "max"', r.line);
    // Sizes and counts past 2^53 (8 PiB) are damage, as in the dump readers (limits.ts); times in ns are
    // bounded as dates below.
    if ((INT_KEYS.has(key) || key === 'cg_max') && !key.endsWith('_ns') && value !== 'max' && Number(value) > MAX_COUNT)
      return bad(`context key ${key} is ${value}, past 2^53 (8 PiB)`, r.line);
    if (key === 'nspid' && !NSPID.test(value))
      return bad(`context key nspid is not a list of up to ${MAX_NS_LEVELS} pids ("<outer>,…,<own>")`, r.line);
    if (key === 'boot_id' && !BOOT_ID.test(value)) return bad('context key boot_id is not a boot id (a UUID)', r.line);
    // A cgroup cannot run, let alone dump, under a limit of 0 bytes.
    if (key === 'cg_max' && value !== 'max' && !(Number(value) > 0))
      return bad(`context key cg_max is ${value}, not a limit a process could run under`, r.line);
    raw.set(key, value);
  }
  for (const k of ['time_real_ns', 'pid']) if (!raw.has(k)) return bad(`context has no ${k}`);
  const pid = Number(raw.get('pid'));
  const nowMs = expect.nowMs ?? Date.now();
  const timeRealMs = nsToMs(raw.get('time_real_ns') as string);
  const badTime = dateProblem(timeRealMs, nowMs);
  if (badTime !== null) return bad(`context time_real_ns: ${badTime}`);
  const startNs = raw.get('start_real_ns');
  if (startNs !== undefined && !startNs.startsWith('-')) {
    const start = nsToMs(startNs);
    // one clock tick of slack: start times are read in ticks of 10 ms
    if (start > timeRealMs + 10) return bad('context start_real_ns: the process started after its own dump');
  }
  const nsPids = raw.get('nspid')?.split(',').map(Number) ?? null;
  if (nsPids !== null && (nsPids[nsPids.length - 1] !== pid || nsPids.some((p) => p < 1 || p > 2 ** 32)))
    return bad(`context key nspid ${raw.get('nspid')} does not end in the process's pid ${pid}`);
  for (const p of expect.pids ?? []) {
    if (p !== null && p !== pid)
      return bad(`context is for pid ${pid} but the dump is pid ${p} (stale or renamed file)`);
  }

  const int = (k: string): number | null => {
    const v = raw.get(k);
    if (v === undefined) return null;
    const n = Number(v);
    return n < 0 ? null : n;
  };
  const ms = (k: string): number | null => {
    const v = raw.get(k);
    return v === undefined || v.startsWith('-') ? null : nsToMs(v);
  };
  const str = (k: string, max: number): string | null => {
    const v = raw.get(k);
    return v === undefined ? null : decodePyString(v, max);
  };
  const je: JemallocStats = {
    allocated: int('je_allocated'),
    active: int('je_active'),
    resident: int('je_resident'),
    mapped: int('je_mapped'),
    retained: int('je_retained'),
    metadata: int('je_metadata'),
  };
  const hasJe = Object.values(je).some((v) => v !== null);
  const cgMax = raw.get('cg_max');
  const cg: CgroupMemory = {
    version: int('cg_version'),
    path: str('cg_path', MAX_CGPATH_CHARS),
    current: int('cg_current'),
    max: cgMax !== undefined && cgMax !== 'max' ? int('cg_max') : null,
    maxUnlimited: cgMax === 'max',
    anon: int('cg_anon'),
    file: int('cg_file'),
  };
  const hasCg = cg.current !== null || cg.max !== null || cg.maxUnlimited || cg.anon !== null || cg.file !== null;
  const pages: PageBreakdown = {
    rss: null,
    pss: null,
    pssAnon: null,
    pssFile: null,
    pssShmem: null,
    sharedClean: null,
    sharedDirty: null,
    privateClean: null,
    privateDirty: null,
    anonymous: null,
    swap: null,
    swapPss: null,
  };
  for (const [k, field] of SMAPS_KEYS) pages[field] = int(k);
  const hasPages = Object.values(pages).some((v) => v !== null);
  const shm = { used: int('shm_used'), size: int('shm_size') };
  const pageSize = int('page_size');
  const dirty = int('je_pdirty');
  const muzzy = int('je_pmuzzy');
  const forkPpid = int('fork_ppid');
  const trig = raw.get('trigger');
  const trigger = trig !== undefined && TRIGGERS.has(trig) ? (trig as DumpTrigger) : null;
  const ppm = int('trigger_ppm');
  const cmd = raw.get('cmdline');
  const argv = cmd === undefined ? null : decodeCmdline(cmd);
  const extra: Record<string, string> = {};
  for (const [k, v] of raw)
    if (!INT_KEYS.has(k) && !STRING_KEYS.has(k) && k !== 'cg_max') extra[k] = decodePyString(v, 256);
  // a trigger this reader does not know is kept for display, like an unknown key
  if (trig !== undefined && trigger === null) extra.trigger = decodePyString(trig, 64);
  return {
    context: {
      version,
      timeRealMs,
      timeMonoMs: ms('time_mono_ns'),
      timeBootMs: ms('time_boot_ns'),
      pid,
      ppid: int('ppid'),
      nsPids,
      pidNamespace: int('pid_ns'),
      bootId: raw.get('boot_id') ?? null,
      startRealMs: ms('start_real_ns'),
      startBootMs: ms('start_boot_ns'),
      comm: str('comm', MAX_COMM_CHARS),
      // arguments are NUL-separated; the producer's cut may leave a trailing empty one
      cmdline: argv === null ? null : argv.args,
      cmdlineCut: raw.get('cmdline_cut') === '1' || (argv !== null && argv.cut),
      hostname: str('hostname', MAX_HOST_CHARS),
      jemalloc: hasJe ? je : null,
      rss: int('rss'),
      rssAnon: int('rss_anon'),
      cgroup: hasCg ? cg : null,
      pages: hasPages ? pages : null,
      shm: shm.used !== null || shm.size !== null ? shm : null,
      jemallocPages:
        dirty !== null || muzzy !== null
          ? {
              dirty,
              muzzy,
              pageSize,
              dirtyBytes: dirty !== null && pageSize !== null ? dirty * pageSize : null,
              muzzyBytes: muzzy !== null && pageSize !== null ? muzzy * pageSize : null,
            }
          : null,
      fork:
        forkPpid !== null
          ? { parentPid: forkPpid, timeRealMs: ms('fork_real_ns'), timeMonoMs: ms('fork_mono_ns') }
          : null,
      trigger,
      triggerFraction: trigger === 'cgroup-fraction' && ppm !== null ? ppm / 1e6 : null,
      costNs: int('ctx_cost_ns'),
      jemallocDelayNs: int('je_delay_ns'),
      extra,
    },
    problem: null,
  };
}

/** The arguments, together at most MAX_CMDLINE_CHARS; the one that crosses it is kept cut (ending in "…"). */
function decodeCmdline(field: string): { args: string[]; cut: boolean } {
  // split on the encoded NUL before decoding so that each argument is decoded and bounded alone
  const parts = field === '-' ? [] : field.split('%00');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const args: string[] = [];
  let total = 0;
  for (const p of parts) {
    const budget = MAX_CMDLINE_CHARS - total;
    if (budget <= 0) return { args, cut: true };
    const a = p === '' ? '' : decodePyString(p, budget);
    args.push(a);
    if (a.length > budget) return { args, cut: true };
    total += a.length;
  }
  return { args, cut: false };
}

/** A command line for display: arguments with blanks or quotes quoted, as a shell would show them. */
export function formatCmdline(argv: readonly string[]): string {
  return argv.map((a) => (a === '' || /[\s"'\\$`]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ');
}

/**
 * A context with only its time and pid known (what a capture that is not our library's gives, and tests):
 * every other field absent, as the `C` line's reader leaves a field the line does not carry.
 */
export function bareContext(timeRealMs: number, pid: number): DumpContext {
  return {
    version: 1,
    timeRealMs,
    timeMonoMs: null,
    timeBootMs: null,
    pid,
    ppid: null,
    nsPids: null,
    pidNamespace: null,
    bootId: null,
    startRealMs: null,
    startBootMs: null,
    comm: null,
    cmdline: null,
    cmdlineCut: false,
    hostname: null,
    jemalloc: null,
    rss: null,
    rssAnon: null,
    cgroup: null,
    pages: null,
    shm: null,
    jemallocPages: null,
    fork: null,
    trigger: null,
    triggerFraction: null,
    costNs: null,
    jemallocDelayNs: null,
    extra: {},
  };
}
