// OOM post-mortem: which process died, its last complete snapshot, how fast it was growing at the
// end, and — given a memory limit — when each process (and the job, since a cgroup limit applies to
// the sum of its processes) would reach it, with an interval from the slope's confidence bounds.
// Research: shared/docs/next-features.md §6.

import type { Job, ProcessSeries } from '../model/model.js';
import { theilSen } from './robust-slope.js';
import { snapshotTotalBytes } from '../model/snapshot-status.js';
import { seriesIndexes } from '../model/series-end.js';
import { secondsOf } from '../model/snapshot-time.js';
import { MIN_LATE_POINTS, rateBasis } from './patterns.js';
import { rankJob, type JobSuspects } from './suspects.js';
import type { ProcessFate } from './process-fate.js';
import { totalVariance } from '../model/sampling-error.js';

export interface EndRate {
  /** Theil–Sen slope of the process total over its late window (last third, ≥ 3 complete snapshots) */
  perSnapshot: number;
  /** 95 % bounds (Sen) */
  perSnapshotLo: number;
  perSnapshotHi: number;
  perSecond: number | null;
  perSecondLo: number | null;
  perSecondHi: number | null;
  /** complete snapshots the rate was fitted on */
  points: number;
}

export interface Projection {
  /** limit − the last known total (negative: already above) */
  headroomBytes: number;
  /** time to the limit at the fitted rate, and its interval (Infinity when the bound does not grow) */
  seconds: number | null;
  secondsLo: number | null;
  secondsHi: number | null;
  /** the same in dumps (interval dumps fire on allocation volume, so this holds without times) */
  snapshots: number | null;
  snapshotsLo: number | null;
  snapshotsHi: number | null;
}

export interface ProcessPostmortem {
  processIndex: number;
  process: string;
  pid: number | null;
  fate: ProcessFate;
  snapshots: number;
  /** total of the last complete snapshot */
  lastCompleteBytes: number;
  lastCompleteSigmaBytes: number;
  /** the last known total: a cut last dump's header total when it has one, else the last complete one */
  lastKnownBytes: number;
  lastKnownFromHeader: boolean;
  rate: EndRate | null;
  projection: Projection | null;
  notes: string[];
}

export interface JobPostmortem {
  processes: ProcessPostmortem[];
  /** processes judged killed, most evidence first, then largest */
  died: number[];
  suspects: JobSuspects;
  limitBytes: number | null;
  /** the job as one cgroup: sum of last totals and of per-second rates (processes with times only) */
  job: {
    lastKnownBytes: number;
    perSecond: number | null;
    perSecondLo: number | null;
    perSecondHi: number | null;
    projection: Projection | null;
    /** what the job's headroom was measured from (the post-mortem query replaces the sum with a better figure) */
    basis?: string;
    note: string | null;
  };
}

function ratio(headroom: number, rate: number | null): number | null {
  if (rate === null) return null;
  if (headroom <= 0) return 0;
  return rate > 0 ? headroom / rate : Number.POSITIVE_INFINITY;
}

export function project(headroom: number, r: EndRate): Projection {
  return {
    headroomBytes: headroom,
    seconds: ratio(headroom, r.perSecond),
    // a faster bound reaches the limit sooner: the interval of times comes from the slope's upper and lower bounds
    secondsLo: ratio(headroom, r.perSecondHi),
    secondsHi: ratio(headroom, r.perSecondLo),
    snapshots: ratio(headroom, r.perSnapshot),
    snapshotsLo: ratio(headroom, r.perSnapshotHi),
    snapshotsHi: ratio(headroom, r.perSnapshotLo),
  };
}

/** The rate of a process's total at the end of its series. */
export function endRate(proc: ProcessSeries): { rate: EndRate | null; note: string | null } {
  const idx = seriesIndexes(proc);
  const n = idx.length;
  const times = secondsOf(idx.map((i) => proc.snapshots[i]));
  const span = (from: number): number | null =>
    times.seconds && n > 1 ? times.seconds[n - 1] - times.seconds[from] : null;
  // too few dumps, or too close in time, carry no rate (patterns.ts rateBasis: "2 dumps in 12 ms: no rate")
  const whole = rateBasis(n, span(0));
  if (!whole.perDump) return { rate: null, note: whole.note };
  const totals = Float64Array.from(idx, (i) => proc.snapshots[i].live.bytes);
  const L = Math.min(n, Math.max(MIN_LATE_POINTS, Math.ceil(n / 3)));
  const late = rateBasis(L, span(n - L));
  const ts = theilSen(totals, null, n - L, n, true);
  const tt = times.seconds && late.perSecond ? theilSen(totals, times.seconds, n - L, n, true) : null;
  return {
    rate: {
      perSnapshot: ts.slope,
      perSnapshotLo: ts.lo,
      perSnapshotHi: ts.hi,
      perSecond: tt ? tt.slope : null,
      perSecondLo: tt ? tt.lo : null,
      perSecondHi: tt ? tt.hi : null,
      points: L,
    },
    note: times.note ? `no rate per second: ${times.note}` : late.note,
  };
}

export function postmortem(
  job: Pick<Job, 'processes'>,
  limitBytes: number | null = null,
  rank: (job: Pick<Job, 'processes'>) => JobSuspects = rankJob,
): JobPostmortem {
  const suspects = rank(job);
  const processes: ProcessPostmortem[] = job.processes.map((proc, pi) => {
    const fate = suspects.processes[pi].fate;
    const li = fate.lastCompleteIndex;
    const lc = li >= 0 ? proc.snapshots[li] : null;
    const last = proc.snapshots[proc.snapshots.length - 1];
    const fromHeader = last !== undefined && !last.complete && last.headerLiveBytes !== null;
    const lastKnown = last ? (fromHeader ? snapshotTotalBytes(last) : (lc?.live.bytes ?? last.live.bytes)) : 0;
    const { rate, note } = endRate(proc);
    const notes = [...suspects.processes[pi].notes];
    if (note && !notes.some((x) => x.includes(note.replace(/^no rate per second: /, '')))) notes.push(note);
    return {
      processIndex: pi,
      process: proc.key,
      pid: proc.pid,
      fate,
      snapshots: proc.snapshots.length,
      lastCompleteBytes: lc?.live.bytes ?? 0,
      lastCompleteSigmaBytes: lc ? Math.sqrt(totalVariance(lc)) : 0,
      lastKnownBytes: lastKnown,
      lastKnownFromHeader: fromHeader,
      rate,
      projection: limitBytes !== null && rate ? project(limitBytes - lastKnown, rate) : null,
      notes,
    };
  });
  const died = processes
    .filter((p) => p.fate.killed)
    .sort((a, b) => b.fate.evidence.length - a.fate.evidence.length || b.lastKnownBytes - a.lastKnownBytes)
    .map((p) => p.processIndex);
  // the job as one cgroup: rates add (processes grow independently); only meaningful with times for all
  const lastKnownBytes = processes.reduce((a, p) => a + p.lastKnownBytes, 0);
  const timed = processes.filter((p) => p.rate?.perSecond !== null && p.rate?.perSecond !== undefined);
  const alive = processes.filter((p) => !p.fate.killed);
  let perSecond: number | null = null;
  let perSecondLo: number | null = null;
  let perSecondHi: number | null = null;
  let note: string | null = null;
  if (timed.length === processes.length && processes.length > 0) {
    perSecond = timed.reduce((a, p) => a + (p.rate!.perSecond ?? 0), 0);
    perSecondLo = timed.reduce((a, p) => a + (p.rate!.perSecondLo ?? 0), 0);
    perSecondHi = timed.reduce((a, p) => a + (p.rate!.perSecondHi ?? 0), 0);
  } else {
    // name why the others have none: no usable times, or too few dumps or too close in time for a rate
    const why = processes
      .filter((p) => !timed.includes(p))
      .slice(0, 3)
      .map((p) => `pid ${p.pid ?? '?'}: ${p.notes.find((x) => /no rate|no per-second/.test(x)) ?? 'no usable times'}`);
    note = `a job-wide rate needs a rate per second from every process (${timed.length} of ${processes.length} have one; ${why.join('; ')}${processes.length - timed.length > why.length ? '; …' : ''})`;
  }
  if (alive.length < processes.length && note === null)
    note = 'the sum includes the killed processes at their last dumps';
  const jobRate: EndRate | null =
    perSecond === null
      ? null
      : { perSnapshot: 0, perSnapshotLo: 0, perSnapshotHi: 0, perSecond, perSecondLo, perSecondHi, points: 0 };
  const jobProjection =
    limitBytes !== null && jobRate
      ? { ...project(limitBytes - lastKnownBytes, jobRate), snapshots: null, snapshotsLo: null, snapshotsHi: null }
      : null;
  return {
    processes,
    died,
    suspects,
    limitBytes,
    job: { lastKnownBytes, perSecond, perSecondLo, perSecondHi, projection: jobProjection, note },
  };
}

// ---- limits ----------------------------------------------------------------------------------

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  // the kernel's memparse (what memory.max accepts): K, M, G, T are binary
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  // SI spellings are decimal
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

export type LimitParse = { ok: true; bytes: number | null; note: string | null } | { ok: false; message: string };

/**
 * A memory limit as text: a number with an optional unit (8G, 8GiB, 7.5 GB, 8589934592), or the
 * contents of a cgroup v2 `memory.max` ("max" = no limit, bytes: null). K/M/G/T and KiB/MiB/GiB/TiB
 * are binary (as the kernel reads memory.max); kB/MB/GB/TB are decimal.
 */
export function parseLimit(text: string): LimitParse {
  const t = text.trim();
  if (t === 'max') return { ok: true, bytes: null, note: 'the cgroup had no memory limit (memory.max is "max")' };
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(t);
  if (!m)
    return {
      ok: false,
      message: `not a byte count: ${JSON.stringify(t.slice(0, 40))} (use e.g. 8G, 8GiB, 7.5GB, 8589934592, or a memory.max file)`,
    };
  const unit = m[2].toLowerCase();
  const mult = UNITS[unit];
  if (mult === undefined)
    return { ok: false, message: `unknown unit "${m[2]}" (use K, M, G, T, KiB…, kB, MB, GB, TB)` };
  // memory.max is a whole byte count: a bare number must be whole, a scaled one is cut to whole bytes.
  if (unit === '' && m[1].includes('.'))
    return { ok: false, message: `not a whole byte count: ${JSON.stringify(t.slice(0, 40))}` };
  const bytes = Math.floor(Number(m[1]) * mult);
  if (!(bytes >= 1)) return { ok: false, message: 'the limit must be at least 1 byte' };
  // Past 2^53 bytes (8 PiB) no machine has the memory and figures stop being exact.
  if (!(bytes <= Number.MAX_SAFE_INTEGER))
    return { ok: false, message: `the limit ${JSON.stringify(t.slice(0, 40))} is past 8 PiB, not a real memory limit` };
  return { ok: true, bytes, note: null };
}
