// Which stacks kept growing across a whole series: least-squares slope over snapshot index, the
// fraction of intervals in which the stack grew, and the total change. A leak grows in (nearly) every
// interval; a cache that filled once, or a buffer that comes and goes, does not.

import type { ProcessSeries } from '../model/model.js';
import { denseValues } from '../model/dense.js';

export interface StackGrowth {
  stackId: number;
  /** bytes per snapshot, least squares over snapshot index */
  slopeBytesPerSnapshot: number;
  /** of the n-1 intervals, the fraction in which live bytes rose */
  growingFraction: number;
  /** coefficient of determination of the linear fit (1 = a straight line) */
  r2: number;
  firstBytes: number;
  lastBytes: number;
  deltaBytes: number;
  /**
   * steadiness of growth (bytes per snapshot): slope × growingFraction × r² for stacks that ended higher, else 0.
   * A leak's is about its slope; a step, a plateau or noise have about 0. Not the suspects' score (growth beyond
   * 2σ still going on at the end, core/stats/patterns.ts): this one ranks the Growth table's rows of one process.
   */
  steadiness: number;
}

export interface GrowthOptions {
  /** first and last snapshot index to consider (default: the whole series) */
  from?: number;
  to?: number;
}

/** Per stack growth statistics, steady growers first (stacks that never grew come last, by delta). */
export function rankGrowth(proc: ProcessSeries, options: GrowthOptions = {}): StackGrowth[] {
  const from = options.from ?? 0;
  const to = options.to ?? proc.snapshots.length - 1;
  const n = to - from + 1;
  const count = proc.stacks.count;
  if (n < 1 || count === 0) return [];
  const sy = new Float64Array(count);
  const sxy = new Float64Array(count);
  const syy = new Float64Array(count);
  const grew = new Uint32Array(count);
  let first: Float64Array | null = null;
  let prev: Float64Array | null = null;
  for (let j = 0; j < n; j++) {
    const y = denseValues(proc, proc.snapshots[from + j]);
    for (let id = 0; id < count; id++) {
      const v = y[id];
      sy[id] += v;
      sxy[id] += j * v;
      syy[id] += v * v;
      if (prev && v > prev[id]) grew[id]++;
    }
    if (!first) first = y;
    prev = y;
  }
  const sx = (n * (n - 1)) / 2;
  const sxx = ((n - 1) * n * (2 * n - 1)) / 6;
  const dx = n * sxx - sx * sx;
  const out: StackGrowth[] = [];
  for (let id = 0; id < count; id++) {
    const f = first![id];
    const l = prev![id];
    if (sy[id] === 0) continue; // never live in this range
    const slope = dx > 0 ? (n * sxy[id] - sx * sy[id]) / dx : 0;
    const dy = n * syy[id] - sy[id] * sy[id];
    const r2 = dx > 0 && dy > 0 ? (n * sxy[id] - sx * sy[id]) ** 2 / (dx * dy) : 0;
    const growingFraction = n > 1 ? grew[id] / (n - 1) : 0;
    out.push({
      stackId: id,
      slopeBytesPerSnapshot: slope,
      growingFraction,
      r2,
      firstBytes: f,
      lastBytes: l,
      deltaBytes: l - f,
      steadiness: slope > 0 && l > f ? slope * growingFraction * r2 : 0,
    });
  }
  out.sort((a, b) => b.steadiness - a.steadiness || b.deltaBytes - a.deltaBytes || a.stackId - b.stackId);
  return out;
}

/** Least-squares slope of `values` over their index (0 for fewer than two values). */
export function leastSquaresSlope(values: ArrayLike<number>): number {
  const n = values.length;
  if (n < 2) return 0;
  let sy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sy += values[i];
    sxy += i * values[i];
  }
  const sx = (n * (n - 1)) / 2;
  const sxx = ((n - 1) * n * (2 * n - 1)) / 6;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/** Live bytes of the given stacks at every snapshot (rows follow `stackIds`), for stacked-area charts. */
export function stackSeries(proc: ProcessSeries, stackIds: readonly number[]): Float64Array[] {
  const rows = stackIds.map(() => new Float64Array(proc.snapshots.length));
  const want = new Map(stackIds.map((id, i) => [id, i]));
  proc.snapshots.forEach((s, j) => {
    for (let i = 0; i < s.stackIds.length; i++) {
      const r = want.get(s.stackIds[i]);
      if (r !== undefined) rows[r][j] += s.liveBytes[i];
    }
  });
  return rows;
}
