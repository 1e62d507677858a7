// Growth patterns of a (process, stack) series: steady / plateau / step / fluctuating / declining /
// flat, or unknown when the series is too short. Every comparison of two points is against the
// sampling noise of those points (sampling-error.ts), so a change sampling alone can explain is never
// called growth. Rules, thresholds and their reasons: docs/analysis.md, "Growth patterns".

import type { ProcessSeries } from '../model/model.js';
import { NOISE_Z } from '../model/sampling-error.js';
import { theilSen } from './robust-slope.js';
import { secondsOf } from '../model/snapshot-time.js';
import { seriesIndexes, teardownDump } from '../model/series-end.js';

export type GrowthPattern = 'steady' | 'plateau' | 'step' | 'fluctuating' | 'declining' | 'flat' | 'unknown';

/** Fewer complete snapshots than this: the shape of a series cannot be told (two points give a change, not a shape). */
export const MIN_PATTERN_SNAPSHOTS = 3;
/**
 * Changes below this share of a series' peak are not shape: allocator size-class rounding and small
 * bookkeeping churn move exact (period-1) series by a few bytes, which are real but not growth.
 */
export const REL_FLOOR = 0.02;
/** A fall smaller than this share of the rise (or the reverse) is a dip in a trend, not a cycle. */
export const FLUCT_SHARE = 0.3;
/** The late window (where "still growing" is decided) is the last third of the series, at least this many points. */
export const MIN_LATE_POINTS = 3;
/**
 * A one-time allocation larger than jemalloc's dump interval triggers a dump in its middle (interval
 * dumps fire on allocation volume), so a step's jump may span this many consecutive intervals.
 */
export const STEP_MAX_INTERVALS = 2;
/**
 * A rate per second needs its points at least this far apart end to end. Interval dumps fire on allocation
 * volume, so a burst of allocation writes several dumps within milliseconds, and a slope per second over them
 * scales the burst to a second it never lasted (a forked worker that allocated 4 MiB once and exited read
 * "+347 MiB/s"; fixtures/oom-job's trainer wrote its first dumps 40–60 ms apart while it loaded its dataset).
 * A tenth of a second keeps the rates of a steady series dumped every 100 ms (fixtures/job's rollouts: 7 dumps in
 * 661 ms at the end of the killed one, +26 MiB/s) and refuses a burst's.
 */
export const MIN_RATE_SECONDS = 0.1;
/** Series matrices are built this many cells at a time (≈ 32 MB of Float64), so huge processes stay bounded in memory. */
const MAX_CHUNK_CELLS = 1 << 22;

export interface SeriesVerdict {
  /** the stack the series belongs to (−1 for a series of something else, e.g. a total) */
  stackId: number;
  pattern: GrowthPattern;
  /** why the pattern is unknown, or a caveat; null otherwise */
  note: string | null;
  /** complete snapshots in the series */
  points: number;
  firstBytes: number;
  lastBytes: number;
  peakBytes: number;
  deltaBytes: number;
  /** 1σ of lastBytes (sampling) */
  sigmaBytes: number;
  /** 1σ of deltaBytes (Var_first + Var_last: conservative within a process) */
  sigmaDeltaBytes: number;
  /** deltaBytes / sigmaDeltaBytes (±∞ for an exact non-zero change) */
  z: number;
  /** |deltaBytes| < 2σ: sampling alone can explain the change */
  withinNoise: boolean;
  /** Theil–Sen slope over the whole series, bytes per snapshot */
  slopePerSnapshot: number;
  /** the same per second, null without usable times or when the points are too close in time (MIN_RATE_SECONDS) */
  slopePerSecond: number | null;
  /** Theil–Sen slope over the late window (last third), bytes per snapshot / per second */
  lateSlopePerSnapshot: number;
  lateSlopePerSecond: number | null;
  /** z of the late growth (late slope × window length against the window ends' noise) */
  lateZ: number;
  /**
   * false when the series is too short to carry a rate (fewer than MIN_PATTERN_SNAPSHOTS points: two points give a
   * change, not a rate): its slopes are 0 and mean nothing, and every front-end says "no rate" with `rateNote`
   */
  hasRate: boolean;
  /** why there is no rate, or no rate per second ("2 dumps in 12 ms: no rate"), null when both hold */
  rateNote: string | null;
  /**
   * Ranking score, bytes: growth that sampling cannot explain and that is still going on at the end —
   * min(Δ − 2σ_Δ, (late growth − 2σ_late) × (n−1)/(L−1)), floored at 0. Plateaus and steps score ≈ 0.
   */
  score: number;
}

export interface SeriesInput {
  /** live bytes per point */
  y: ArrayLike<number>;
  /** variance per point */
  v: ArrayLike<number>;
  /** seconds per point, or null */
  t: ArrayLike<number> | null;
  /** accumulated (ever allocated) bytes per point when the dumps have them (prof_accum), else null */
  a?: ArrayLike<number> | null;
}

/** Standard normal quantile (Acklam's rational approximation, relative error < 1.2e−9). */
export function normalQuantile(p: number): number {
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/**
 * The z a range, largest rise or largest fall among m points must pass: it is the extreme of the
 * m(m−1)/2 pairs, so the 2σ of one comparison would be crossed by pure noise (a stack whose sampled
 * objects turn over redraws its samples every dump). Bonferroni over the pairs keeps the false-alarm
 * rate of the whole series near 5 % (within ~3 % of the exact studentized-range quantile for m ≤ 20).
 */
export function zForPairs(m: number): number {
  if (m <= 2) return NOISE_Z;
  if (m < Z_FOR_PAIRS.length) return (Z_FOR_PAIRS[m] ||= Math.max(NOISE_Z, normalQuantile(1 - 0.05 / (m * (m - 1)))));
  return Math.max(NOISE_Z, normalQuantile(1 - 0.05 / (m * (m - 1))));
}

/** zForPairs by m, made once each (every series of a job asks, with one of a few lengths); 0: not made yet */
const Z_FOR_PAIRS = new Float64Array(1024);

/** A span of time as a rate's note says it: "12 ms", "0.4 s", "3 s". */
function spanText(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  return seconds < 10 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds)} s`;
}

/**
 * Whether `points` dumps over `seconds` (null: no usable times) carry a rate and a rate per second, and why not:
 * "2 dumps in 12 ms: no rate", "3 dumps in 40 ms: no rate per second". One rule for the patterns' slopes and the
 * post-mortem's end rates.
 */
export function rateBasis(
  points: number,
  seconds: number | null,
): { perDump: boolean; perSecond: boolean; note: string | null } {
  // the text only where there is a note (every series of a job asks: 10^6 at 1,000 processes)
  if (points < MIN_PATTERN_SNAPSHOTS)
    return { perDump: false, perSecond: false, note: `${dumpsText(points, seconds)}: no rate` };
  if (seconds !== null && seconds < MIN_RATE_SECONDS)
    return { perDump: true, perSecond: false, note: `${dumpsText(points, seconds)}: no rate per second` };
  return seconds !== null ? PER_SECOND : PER_DUMP;
}

/** "12 dumps in 3.0 s": a rate note's subject (a function of its own: a closure was made by every rateBasis call). */
function dumpsText(points: number, seconds: number | null): string {
  return `${points} dump${points === 1 ? '' : 's'}${seconds !== null && points > 1 ? ` in ${spanText(seconds)}` : ''}`;
}

const PER_SECOND = Object.freeze({ perDump: true, perSecond: true, note: null });
const PER_DUMP = Object.freeze({ perDump: true, perSecond: false, note: null });

/** True when y on [from, to) never moves against `dir` (+1 up, −1 down) by more than `tol` between neighbours. */
function monotone(y: ArrayLike<number>, from: number, to: number, tol: number, dir: 1 | -1): boolean {
  for (let i = from + 1; i < to; i++) if (dir * (y[i] - y[i - 1]) < -tol) return false;
  return true;
}

/**
 * The change between points i and j that leaves the noise: z σ of their difference, at least `floor`. Under "no
 * change" both points share one variance; the larger plug-in estimate stands for both (a low draw, few samples,
 * understates its own σ, since σ is estimated from the sample itself).
 */
function noiseBand(v: ArrayLike<number>, i: number, j: number, z: number, floor: number): number {
  return Math.max(z * Math.sqrt(2 * Math.max(v[i], v[j])), floor);
}

const rangeOf = (y: ArrayLike<number>, from: number, to: number): { lo: number; hi: number } => {
  let lo = from;
  let hi = from;
  for (let i = from + 1; i < to; i++) {
    if (y[i] < y[lo]) lo = i;
    if (y[i] > y[hi]) hi = i;
  }
  return { lo, hi };
};

/** Classifies one series. */
export function classifySeries(
  { y, v, t, a = null }: SeriesInput,
  stackId = -1,
  /** an object to fill instead of a new one (a process's stacks classified into columns reuse one: verdict-table.ts) */
  into?: SeriesVerdict,
): SeriesVerdict {
  const n = y.length;
  const base = into ?? blankVerdict();
  base.stackId = stackId;
  base.pattern = 'unknown';
  base.note = null;
  base.points = n;
  base.firstBytes = n > 0 ? y[0] : 0;
  base.lastBytes = n > 0 ? y[n - 1] : 0;
  base.peakBytes = 0;
  base.deltaBytes = n > 0 ? y[n - 1] - y[0] : 0;
  base.sigmaBytes = n > 0 ? Math.sqrt(v[n - 1]) : 0;
  base.sigmaDeltaBytes = n > 0 ? Math.sqrt(v[0] + v[n - 1]) : 0;
  base.z = 0;
  base.withinNoise = true;
  base.slopePerSnapshot = 0;
  base.slopePerSecond = null;
  base.lateSlopePerSnapshot = 0;
  base.lateSlopePerSecond = null;
  base.lateZ = 0;
  base.hasRate = false;
  base.rateNote = null;
  base.score = 0;
  const whole = rateBasis(n, t && n > 1 ? t[n - 1] - t[0] : null);
  base.hasRate = whole.perDump;
  base.rateNote = whole.note;
  for (let i = 0; i < n; i++) if (y[i] > base.peakBytes) base.peakBytes = y[i];
  const floor = REL_FLOOR * base.peakBytes;
  const zN = zForPairs(n);
  base.z =
    base.sigmaDeltaBytes > 0
      ? base.deltaBytes / base.sigmaDeltaBytes
      : base.deltaBytes === 0
        ? 0
        : Math.sign(base.deltaBytes) * Number.POSITIVE_INFINITY;
  base.withinNoise = n < 2 || Math.abs(base.deltaBytes) < NOISE_Z * base.sigmaDeltaBytes;
  const growthBound = Math.max(0, base.deltaBytes - NOISE_Z * base.sigmaDeltaBytes);

  if (n < MIN_PATTERN_SNAPSHOTS) {
    base.note =
      n <= 1
        ? 'one complete snapshot: no series'
        : `${n} complete snapshots: a change but no shape (patterns need ${MIN_PATTERN_SNAPSHOTS})`;
    // two points give a change (it may score) but no rate: the slopes stay 0 with hasRate false
    if (n === 2) base.score = growthBound;
    return base;
  }

  // flat: the whole range is within noise, and the points do not trend consistently either (Sen's
  // interval excludes 0): dumps of one process share their sampled objects, so a real slow change
  // shows as a consistent trend well before it leaves the conservative Var_A + Var_B band
  const r = rangeOf(y, 0, n);
  const range = y[r.hi] - y[r.lo];
  if (base.peakBytes <= 0 || range <= floor) {
    base.pattern = 'flat';
    return base;
  }
  const withinModel = range <= noiseBand(v, r.hi, r.lo, zN, floor);
  // within the model a trend needs a series that never moves against it by more than the floor (below): one that
  // moves both ways is flat without its slope (most of a job's stacks; their Theil–Sen was most of the ranking)
  if (withinModel && !monotone(y, 0, n, floor, 1) && !monotone(y, 0, n, floor, -1)) {
    base.pattern = 'flat';
    return base;
  }
  const ts = theilSen(y, null, 0, n, withinModel);
  // A consistent trend counts only when the series never moves against it by more than the floor: the
  // estimate of a stack that frees nothing cannot fall (its sampled objects stay sampled), while the
  // samples of a stack whose objects turn over drift both ways, in runs (partial redraws), which
  // Sen's interval (made for independent points) would read as a trend.
  const trendUp = withinModel && ts.lo > 0 && monotone(y, 0, n, floor, 1);
  const trendDown = withinModel && ts.hi < 0 && monotone(y, 0, n, floor, -1);
  if (withinModel && !trendUp && !trendDown) {
    base.pattern = 'flat';
    return base;
  }
  base.slopePerSnapshot = ts.slope;
  if (t && whole.perSecond) base.slopePerSecond = theilSen(y, t).slope;

  // largest rise (i < j) and largest fall, with their end points
  let up = 0;
  let upI = 0;
  let upJ = 0;
  let down = 0;
  let downI = 0;
  let downJ = 0;
  let minI = 0;
  let maxI = 0;
  for (let j = 1; j < n; j++) {
    if (y[j] - y[minI] > up) {
      up = y[j] - y[minI];
      upI = minI;
      upJ = j;
    }
    if (y[maxI] - y[j] > down) {
      down = y[maxI] - y[j];
      downI = maxI;
      downJ = j;
    }
    if (y[j] < y[minI]) minI = j;
    if (y[j] > y[maxI]) maxI = j;
  }
  // a rise or fall counts when it leaves the noise band, or (for the whole-series trend) when the
  // points trend consistently
  const sigUp = up > noiseBand(v, upI, upJ, zN, floor) || trendUp;
  const sigDown = down > noiseBand(v, downI, downJ, zN, floor) || trendDown;

  // late window: the last third
  const L = Math.min(n, Math.max(MIN_LATE_POINTS, Math.ceil(n / 3)));
  let ls = n - L;
  let pattern: GrowthPattern;
  if (sigUp && sigDown && Math.min(up, down) >= FLUCT_SHARE * Math.max(up, down)) {
    pattern = 'fluctuating';
  } else if (sigDown && (!sigUp || down > up)) {
    pattern = 'declining';
  } else {
    // rising. One jump (over at most STEP_MAX_INTERVALS intervals) with flat on both sides, and at
    // least two points after it, is a step.
    let ja = 0;
    let jb = 1;
    for (let w = 1; w <= STEP_MAX_INTERVALS; w++) {
      for (let a = 0; a + w < n; a++) if (y[a + w] - y[a] > y[jb] - y[ja]) [ja, jb] = [a, a + w];
    }
    const before = rangeOf(y, 0, ja + 1);
    const after = rangeOf(y, jb, n);
    const flatBefore = y[before.hi] - y[before.lo] <= noiseBand(v, before.hi, before.lo, zForPairs(ja + 1), floor);
    const flatAfter =
      n - jb >= 2 && y[after.hi] - y[after.lo] <= noiseBand(v, after.hi, after.lo, zForPairs(n - jb), floor);
    const jump = y[jb] - y[ja];
    // with accumulated bytes: a stack that went on allocating at least what it holds after the jump
    // turned its contents over — a bounded buffer that filled fast (plateau), not a one-time allocation
    const turnedOver = a !== null && a[n - 1] - a[jb] >= y[n - 1];
    if (flatBefore && flatAfter && jump > noiseBand(v, ja, jb, zN, floor) && !turnedOver) {
      pattern = 'step';
      if (jb > ls) ls = jb; // the late growth of a step is measured after its jump
    } else {
      pattern = 'plateau'; // unless the late window still grows (below)
    }
  }

  const late = theilSen(y, null, ls, n, true);
  const span = n - 1 - ls;
  // the window's own change end to end is what the noise band applies to (a Theil–Sen slope
  // extrapolated over the window reads the runs of a turning-over buffer's redrawn samples as growth)
  const lateEnd = y[n - 1] - y[ls];
  const lateSigma = Math.sqrt(2 * Math.max(v[ls], v[n - 1]));
  // still growing at the end: end to end beyond the noise band with a rising slope, or a consistent
  // late trend (Sen's lower bound > 0, never falling by more than the floor) above the floor
  const lateGrows =
    span > 0 &&
    ((lateEnd > noiseBand(v, ls, n - 1, NOISE_Z, floor) && late.slope > 0) ||
      (late.lo > 0 && late.slope * span > floor && monotone(y, ls, n, floor, 1)));
  if (pattern === 'plateau' && lateGrows) pattern = 'steady';
  base.pattern = pattern;
  base.lateSlopePerSnapshot = late.slope;
  // the late window's own span decides its rate per second (a long series may end in a burst of dumps)
  const lateBasis = rateBasis(n - ls, t ? t[n - 1] - t[ls] : null);
  if (t && whole.perSecond && lateBasis.perSecond) base.lateSlopePerSecond = theilSen(y, t, ls, n).slope;
  else if (t && whole.perSecond && lateBasis.note) base.rateNote = `late window: ${lateBasis.note}`;
  base.lateZ = lateSigma > 0 ? lateEnd / lateSigma : lateEnd === 0 ? 0 : Math.sign(lateEnd) * Number.POSITIVE_INFINITY;
  // the late growth we are confident of: beyond 2σ of the model, or Sen's lower bound, extrapolated to the series
  const confidentLate = Math.max(late.slope * span - NOISE_Z * lateSigma, late.lo * span, 0);
  const lateBound = lateGrows ? (confidentLate * (n - 1)) / span : 0;
  base.score = pattern === 'declining' || pattern === 'step' ? 0 : Math.min(growthBound, lateBound);
  return base;
}

/** A verdict's fields in their order (a JSON answer prints them so), every one set by classifySeries. */
export function blankVerdict(): SeriesVerdict {
  return {
    stackId: -1,
    pattern: 'unknown',
    note: null,
    points: 0,
    firstBytes: 0,
    lastBytes: 0,
    peakBytes: 0,
    deltaBytes: 0,
    sigmaBytes: 0,
    sigmaDeltaBytes: 0,
    z: 0,
    withinNoise: true,
    slopePerSnapshot: 0,
    slopePerSecond: null,
    lateSlopePerSnapshot: 0,
    lateSlopePerSecond: null,
    lateZ: 0,
    hasRate: false,
    rateNote: null,
    score: 0,
  };
}

export type StackSeriesVerdict = SeriesVerdict;

export interface ProcessPatterns {
  /** per stack id present in any complete snapshot of the series */
  stacks: StackSeriesVerdict[];
  /** snapshot indexes the series is made of (the complete ones) */
  snapshotIndexes: number[];
  /** seconds per point, null when the times are not usable */
  seconds: Float64Array | null;
  /** why patterns or per-second slopes are missing (one snapshot, no times, a cut dump left out), or null */
  notes: string[];
}

/** What a process's series are made of, without its cells: the complete snapshots, their times, the notes. */
export interface SeriesFrame {
  /** snapshot indexes of the series (the complete ones) */
  snapshotIndexes: number[];
  /** seconds per point, null when the times are not usable */
  seconds: Float64Array | null;
  /** accumulated bytes only when every snapshot of the series has them (prof_accum on throughout) */
  hasAccum: boolean;
  notes: string[];
}

/** The series frame of `proc`: reads snapshot metadata only (a dataset read without cells gives it too). */
export function seriesFrame(
  proc: Pick<ProcessSeries, 'snapshots'> & Partial<Pick<ProcessSeries, 'pythonFrames'>>,
): SeriesFrame {
  // the one rule of where a series ends (core/model/series-end.ts): cut dumps and an exit dump after teardown out
  const idx = seriesIndexes(proc);
  const notes: string[] = [];
  const teardown = teardownDump(proc, 0);
  const cut = proc.snapshots.length - idx.length - (teardown ? 1 : 0);
  if (cut > 0) notes.push(`${cut} cut dump${cut === 1 ? '' : 's'} left out of the series (records incomplete)`);
  if (teardown) notes.push(teardown.note);
  const snaps = idx.map((i) => proc.snapshots[i]);
  if (snaps.length < MIN_PATTERN_SNAPSHOTS)
    notes.push(
      `${snaps.length} complete snapshot${snaps.length === 1 ? '' : 's'}: patterns need ${MIN_PATTERN_SNAPSHOTS}, so they are unknown`,
    );
  const times = secondsOf(snaps);
  if (times.note && snaps.length >= 2) notes.push(`no per-second slopes: ${times.note}`);
  return {
    snapshotIndexes: idx,
    seconds: times.seconds,
    hasAccum: snaps.every((s) => s.accumBytes !== null),
    notes,
  };
}

/** Patterns of every stack of `proc` over its complete snapshots. */
export function processPatterns(proc: ProcessSeries): ProcessPatterns {
  const stacks: StackSeriesVerdict[] = [];
  const frame = classifyStacks(
    proc,
    () => undefined,
    (s) => stacks.push(s),
  );
  return { stacks, ...frame };
}

/**
 * Every stack of `proc` present in a complete snapshot, classified in stack-id order: `begin` is told how many, then
 * `visit` gets each verdict — the object `into` itself, refilled, when one is given (visit copies what it keeps).
 */
export function classifyStacks(
  proc: ProcessSeries,
  begin: (count: number) => void,
  visit: (s: StackSeriesVerdict) => void,
  into?: StackSeriesVerdict,
): Omit<ProcessPatterns, 'stacks'> {
  const frame = seriesFrame(proc);
  const { snapshotIndexes: idx, notes } = frame;
  const times = { seconds: frame.seconds };
  const snaps = idx.map((i) => proc.snapshots[i]);
  const n = snaps.length;
  const count = proc.stacks.count;
  if (n === 0 || count === 0) {
    begin(0);
    return { snapshotIndexes: idx, seconds: times.seconds, notes };
  }

  // stacks present in any complete snapshot
  const present = new Uint8Array(count);
  for (const s of snaps) for (let i = 0; i < s.stackIds.length; i++) present[s.stackIds[i]] = 1;
  const ids: number[] = [];
  for (let id = 0; id < count; id++) if (present[id]) ids.push(id);
  begin(ids.length);

  const chunk = Math.max(1, Math.min(ids.length, Math.floor(MAX_CHUNK_CELLS / n)));
  const hasAccum = frame.hasAccum;
  const row = new Int32Array(count).fill(-1);
  // One snapshot per column (cell j * chunk + row): a snapshot's stacks fill its column nearly in order, and
  // reading one stack's series back walks all columns together, a cache line serving 8 stacks. Row by row, each
  // scattered add missed the cache (two thirds of this function's time on the 16 × 5,000-stack bench job).
  const ys = new Float64Array(chunk * n);
  const vs = new Float64Array(chunk * n);
  const as = hasAccum ? new Float64Array(chunk * n) : null;
  // one stack's series at a time, copied here (a view per stack and series was ~0.2 GB of a 1,000-process load)
  const y1 = new Float64Array(n);
  const v1 = new Float64Array(n);
  const a1 = hasAccum ? new Float64Array(n) : null;
  const one = { y: y1, v: v1, t: times.seconds, a: a1 };
  for (let c0 = 0; c0 < ids.length; c0 += chunk) {
    const rows = Math.min(chunk, ids.length - c0);
    for (let r = 0; r < rows; r++) row[ids[c0 + r]] = r;
    if (c0 > 0) {
      ys.fill(0);
      vs.fill(0);
      as?.fill(0);
    }
    for (let j = 0; j < n; j++) {
      const s = snaps[j];
      const { stackIds, liveBytes, liveVarBytes } = s;
      const acc = as ? s.accumBytes : undefined;
      const col = j * chunk;
      for (let i = 0; i < stackIds.length; i++) {
        const r = row[stackIds[i]];
        if (r < 0) continue;
        ys[col + r] += liveBytes[i];
        vs[col + r] += liveVarBytes[i];
        if (as && acc) as[col + r] += acc[i];
      }
    }
    for (let r = 0; r < rows; r++) {
      for (let k = 0, cell = r; k < n; k++, cell += chunk) {
        y1[k] = ys[cell];
        v1[k] = vs[cell];
        if (a1 && as) a1[k] = as[cell];
      }
      const id = ids[c0 + r];
      visit(classifySeries(one, id, into));
      row[id] = -1;
    }
  }
  return { snapshotIndexes: idx, seconds: times.seconds, notes };
}
