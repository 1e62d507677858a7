// A dump's context (dump-context.ts) read back from JSON someone else wrote (a report's payload, a dataset's
// context_json column): every field the views read checked against the bounds the `C`-line reader applies,
// and the object rebuilt from the checked fields only (unknown keys dropped). Throws ShapeError.

import type { CgroupMemory, DumpContext, JemallocPages, JemallocStats, PageBreakdown } from './dump-context.js';
import { BOOT_ID, DUMP_TRIGGERS } from './dump-context.js';
import { dateProblem, MAX_COUNT } from './limits.js';
import {
  arr,
  bool,
  num,
  numOrNull,
  obj,
  oneOfOrNull,
  ShapeError,
  sizeOrNull,
  str,
  strOrNull,
  textRecord,
  whole,
  wholeOrNull,
  type Obj,
} from './shape.js';

/** ms on a clock that starts at boot or earlier: up to a century */
const MAX_CLOCK_MS = 100 * 365.25 * 24 * 3600 * 1000;

function sizes<K extends string>(o: Obj, at: string, keys: readonly K[]): Record<K, number | null> {
  const out = {} as Record<K, number | null>;
  for (const k of keys) out[k] = sizeOrNull(o[k], `${at}.${k}`);
  return out;
}

function date(v: unknown, at: string, nowMs: number): number {
  const ms = num(v, at, -MAX_COUNT, MAX_COUNT);
  const p = dateProblem(ms, nowMs);
  if (p !== null) throw new ShapeError(at, p);
  return ms;
}

const dateOrNull = (v: unknown, at: string, nowMs: number): number | null =>
  v === null || v === undefined ? null : date(v, at, nowMs);

function bootId(v: unknown, at: string): string | null {
  const s = strOrNull(v, at, 36);
  if (s !== null && !BOOT_ID.test(s)) throw new ShapeError(at, 'not a boot id (a UUID)');
  return s;
}

/** NSpid, outermost first: its last entry is the process's own pid */
function nsPids(v: unknown, pid: unknown, at: string): number[] | null {
  if (v === null || v === undefined) return null;
  const out = arr(v, at, 32).map((p, i) => whole(p, `${at}[${i}]`, 2 ** 32));
  if (out.length === 0 || out[out.length - 1] !== pid)
    throw new ShapeError(at, `does not end in the process's pid ${String(pid)}`);
  return out;
}

export function checkDumpContext(v: unknown, at: string, nowMs: number = Date.now()): DumpContext | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, at);
  const timeRealMs = date(o.timeRealMs, `${at}.timeRealMs`, nowMs);
  const startRealMs = dateOrNull(o.startRealMs, `${at}.startRealMs`, nowMs);
  if (startRealMs !== null && startRealMs > timeRealMs + 10)
    throw new ShapeError(`${at}.startRealMs`, 'the process started after its own dump');
  const je = o.jemalloc === null || o.jemalloc === undefined ? null : obj(o.jemalloc, `${at}.jemalloc`);
  const cg = o.cgroup === null || o.cgroup === undefined ? null : obj(o.cgroup, `${at}.cgroup`);
  const pages = o.pages === null || o.pages === undefined ? null : obj(o.pages, `${at}.pages`);
  const shm = o.shm === null || o.shm === undefined ? null : obj(o.shm, `${at}.shm`);
  const jp =
    o.jemallocPages === null || o.jemallocPages === undefined ? null : obj(o.jemallocPages, `${at}.jemallocPages`);
  const fork = o.fork === null || o.fork === undefined ? null : obj(o.fork, `${at}.fork`);
  let cgroup: CgroupMemory | null = null;
  if (cg) {
    const max = sizeOrNull(cg.max, `${at}.cgroup.max`);
    // a cgroup cannot run, let alone dump, under a limit of 0 bytes
    if (max !== null && max < 1)
      throw new ShapeError(`${at}.cgroup.max`, `${max} is not a limit a process could run under`);
    cgroup = {
      version: wholeOrNull(cg.version, `${at}.cgroup.version`, 2),
      path: strOrNull(cg.path, `${at}.cgroup.path`, 4096),
      current: sizeOrNull(cg.current, `${at}.cgroup.current`),
      max,
      maxUnlimited: bool(cg.maxUnlimited, `${at}.cgroup.maxUnlimited`),
      anon: sizeOrNull(cg.anon, `${at}.cgroup.anon`),
      file: sizeOrNull(cg.file, `${at}.cgroup.file`),
    };
  }
  return {
    version: whole(o.version, `${at}.version`, 1),
    timeRealMs,
    timeMonoMs: numOrNull(o.timeMonoMs, `${at}.timeMonoMs`, 0, MAX_CLOCK_MS),
    timeBootMs: numOrNull(o.timeBootMs, `${at}.timeBootMs`, 0, MAX_CLOCK_MS),
    pid: whole(o.pid, `${at}.pid`, 2 ** 32),
    ppid: wholeOrNull(o.ppid, `${at}.ppid`, 2 ** 32),
    nsPids: nsPids(o.nsPids, o.pid, `${at}.nsPids`),
    pidNamespace: wholeOrNull(o.pidNamespace, `${at}.pidNamespace`, 2 ** 32),
    bootId: bootId(o.bootId, `${at}.bootId`),
    startRealMs,
    startBootMs: numOrNull(o.startBootMs, `${at}.startBootMs`, 0, MAX_CLOCK_MS),
    comm: strOrNull(o.comm, `${at}.comm`, 64),
    cmdline:
      o.cmdline === null || o.cmdline === undefined
        ? null
        : arr(o.cmdline, `${at}.cmdline`, 4096).map((c, i) => str(c, `${at}.cmdline[${i}]`, 8192)),
    cmdlineCut: o.cmdlineCut === undefined ? false : bool(o.cmdlineCut, `${at}.cmdlineCut`),
    hostname: strOrNull(o.hostname, `${at}.hostname`, 256),
    jemalloc: je
      ? (sizes(je, `${at}.jemalloc`, [
          'allocated',
          'active',
          'resident',
          'mapped',
          'retained',
          'metadata',
        ] as const) satisfies JemallocStats)
      : null,
    rss: sizeOrNull(o.rss, `${at}.rss`),
    rssAnon: sizeOrNull(o.rssAnon, `${at}.rssAnon`),
    cgroup,
    pages: pages
      ? (sizes(pages, `${at}.pages`, [
          'rss',
          'pss',
          'pssAnon',
          'pssFile',
          'pssShmem',
          'sharedClean',
          'sharedDirty',
          'privateClean',
          'privateDirty',
          'anonymous',
          'swap',
          'swapPss',
        ] as const) satisfies PageBreakdown)
      : null,
    shm: shm ? { used: sizeOrNull(shm.used, `${at}.shm.used`), size: sizeOrNull(shm.size, `${at}.shm.size`) } : null,
    jemallocPages: jp
      ? (sizes(jp, `${at}.jemallocPages`, [
          'dirty',
          'muzzy',
          'pageSize',
          'dirtyBytes',
          'muzzyBytes',
        ] as const) satisfies JemallocPages)
      : null,
    fork: fork
      ? {
          parentPid: whole(fork.parentPid, `${at}.fork.parentPid`, 2 ** 32),
          timeRealMs: dateOrNull(fork.timeRealMs, `${at}.fork.timeRealMs`, nowMs),
          timeMonoMs: numOrNull(fork.timeMonoMs, `${at}.fork.timeMonoMs`, 0, MAX_CLOCK_MS),
        }
      : null,
    trigger: oneOfOrNull(o.trigger, `${at}.trigger`, DUMP_TRIGGERS),
    triggerFraction: numOrNull(o.triggerFraction, `${at}.triggerFraction`, 0, MAX_COUNT / 1e6),
    costNs: numOrNull(o.costNs, `${at}.costNs`, 0, MAX_COUNT),
    jemallocDelayNs: numOrNull(o.jemallocDelayNs, `${at}.jemallocDelayNs`, 0, MAX_COUNT),
    extra: o.extra === undefined ? {} : textRecord(o.extra, `${at}.extra`, 256),
  };
}
