// When each snapshot was taken: the one time axis for the CLI, the app's timeline and the verdicts'
// per-second slopes. jemalloc dumps carry no timestamp and fire on allocation volume, so:
//   1. the capture library's wall clock (Snapshot.context.timeRealMs), where the dump has it;
//   1b. else the time a log given with the dumps writes beside its file name (Snapshot.logTime: a listing made on
//      the node, a job's own "wrote …heap" line), when every dump without a capture clock has one;
//   2. else the file's mtime, but only when the series' mtimes are plausible: every snapshot has
//      one, they are distinct and they increase with the dump sequence (scp / git copies lose
//      mtimes: all equal, or in copy order), and where dumps also have a capture time the two agree;
//   3. else the sequence number (no time at all: the axis counts dumps).

import type { ProcessSeries, Snapshot } from './model.js';

export type SnapshotTimeSource = 'capture' | 'log' | 'mtime' | 'seq';

export interface SnapshotTime {
  /** wall-clock time, ms since the Unix epoch; null when only the order is known ('seq') */
  timeMs: number | null;
  source: SnapshotTimeSource;
}

export interface SeriesTimes {
  /** one per snapshot, in the series' order */
  snapshots: SnapshotTime[];
  /**
   * 'wall' when every snapshot has a wall-clock time (x in seconds since `originMs`), else 'seq'
   * (x is the snapshot's index: a mix of timed and untimed snapshots cannot share a time axis)
   */
  axis: 'wall' | 'seq';
  /** the weakest source used (capture < mtime < seq): what a chart's axis label should admit to */
  source: SnapshotTimeSource;
  /** x per snapshot: seconds since originMs ('wall'), or 0, 1, 2, … ('seq') */
  x: number[];
  /** the first snapshot's time ('wall'), else null */
  originMs: number | null;
  /** why mtimes were not used (for a warning or the axis' tooltip); null when they were or were not needed */
  mtimeProblem: string | null;
  /**
   * valgrind massif's own time per snapshot, in its unit (`i` instructions, `ms` since start, `B` allocated and
   * freed): the axis a massif series has instead of a wall clock; null for other series
   */
  massif: { unit: string; x: number[] } | null;
}

/** Why a series' mtimes cannot be trusted as dump times, or null when they look right. */
export function mtimeProblem(snapshots: readonly Pick<Snapshot, 'mtimeMs' | 'seq'>[]): string | null {
  if (snapshots.length === 0) return null;
  if (snapshots.some((s) => s.mtimeMs === null)) return 'some files have no modification time';
  for (let i = 1; i < snapshots.length; i++) {
    const a = snapshots[i - 1];
    const b = snapshots[i];
    if ((b.mtimeMs as number) === (a.mtimeMs as number))
      return 'files share a modification time (copied without keeping times?)';
    if ((b.mtimeMs as number) < (a.mtimeMs as number)) {
      return a.seq !== null && b.seq !== null
        ? `modification times do not increase with the dump sequence (dump ${b.seq} is older than dump ${a.seq}): copied without keeping times?`
        : 'modification times do not increase in the series order';
    }
  }
  return null;
}

/**
 * A dump's mtime and its capture time are the same moment (jemalloc closes the file, then the hook
 * reads the clock): when they differ by more than this for the dumps that have both, the copy did
 * not keep mtimes, and the mtimes of the dumps without a context cannot be trusted either.
 */
export const MTIME_AGREE_MS = 5000;

/** Why mtimes cannot stand in for the missing capture times of a series, or null. */
function mixedMtimeProblem(snaps: readonly Pick<Snapshot, 'mtimeMs' | 'seq' | 'context'>[]): string | null {
  const own = mtimeProblem(snaps.filter((s) => !s.context));
  if (own) return own;
  for (const s of snaps) {
    if (!s.context || s.mtimeMs === null) continue;
    const d = Math.abs(s.mtimeMs - s.context.timeRealMs);
    if (d > MTIME_AGREE_MS)
      return `file modification times differ from the capture clock by ${Math.round(d / 1000)} s (copied without keeping times?)`;
  }
  // together with the capture times, the series must still run forward
  let prev = -Infinity;
  for (const s of snaps) {
    const t = s.context ? s.context.timeRealMs : (s.mtimeMs as number);
    if (t <= prev) return 'file modification times and capture times are out of order';
    prev = t;
  }
  return null;
}

/** The capture times and the log's times together run forward with the series (else the log is not used). */
function logTimesInOrder(snaps: readonly Pick<Snapshot, 'context' | 'logTime'>[]): boolean {
  let prev = -Infinity;
  for (const s of snaps) {
    const t = s.context ? s.context.timeRealMs : (s.logTime?.ms ?? null);
    if (t === null || t < prev) return false;
    prev = t;
  }
  return true;
}

/** Each snapshot's time and where it came from (see the file comment for the rules). */
export function seriesTimes(series: Pick<ProcessSeries, 'snapshots'>): SeriesTimes {
  const snaps = series.snapshots;
  const needMtime = snaps.filter((s) => !s.context);
  // a log's times stand in for the missing capture clocks only when they cover every such dump and run forward
  const useLog = needMtime.length > 0 && needMtime.every((s) => s.logTime) && logTimesInOrder(snaps);
  const problem = needMtime.length > 0 && !useLog ? mixedMtimeProblem(snaps) : null;
  const useMtime = needMtime.length > 0 && !useLog && problem === null;
  const times: SnapshotTime[] = snaps.map((s) => {
    if (s.context) return { timeMs: s.context.timeRealMs, source: 'capture' };
    if (useLog) return { timeMs: s.logTime!.ms, source: 'log' };
    if (useMtime) return { timeMs: s.mtimeMs, source: 'mtime' };
    return { timeMs: null, source: 'seq' };
  });
  const wall = times.length > 0 && times.every((t) => t.timeMs !== null);
  const rank = { capture: 0, log: 1, mtime: 2, seq: 3 } as const;
  const source = wall
    ? times.reduce<SnapshotTimeSource>((w, t) => (rank[t.source] > rank[w] ? t.source : w), 'capture')
    : 'seq';
  const originMs = wall ? (times[0].timeMs as number) : null;
  const x = wall ? times.map((t) => ((t.timeMs as number) - (originMs as number)) / 1000) : times.map((_, i) => i);
  const unit = snaps[0]?.massif?.timeUnit;
  const massif =
    unit !== undefined && snaps.every((s) => s.massif?.timeUnit === unit)
      ? { unit, x: snaps.map((s) => s.massif!.time) }
      : null;
  return { snapshots: times, axis: wall ? 'wall' : 'seq', source, x, originMs, mtimeProblem: problem, massif };
}

/** The time of one snapshot as `seriesTimes` gives it (convenience for single lookups). */
export function snapshotTime(series: Pick<ProcessSeries, 'snapshots'>, index: number): SnapshotTime {
  return seriesTimes(series).snapshots[index];
}

/**
 * Seconds since the first of `snapshots` for slopes per second (patterns, post-mortem), or null with
 * the reason when they have no common wall-clock axis.
 */
export function secondsOf(snapshots: readonly Snapshot[]): { seconds: Float64Array | null; note: string | null } {
  if (snapshots.length < 2) return { seconds: null, note: 'one snapshot: no time span' };
  const t = seriesTimes({ snapshots: [...snapshots] });
  if (t.axis !== 'wall')
    return { seconds: null, note: t.mtimeProblem ?? 'no capture times or file modification times' };
  return { seconds: Float64Array.from(t.x), note: null };
}
