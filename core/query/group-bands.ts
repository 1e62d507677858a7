// A group of processes on a timeline as one band (issue 49 item 4: above ~50 processes, a line each is a smear):
// at each of a fixed number of points across the group's time, the median, 90th percentile and maximum of its
// members' values — each member's last value at or before that point, over its own span only (a process that
// has not started or has ended is not counted there). Pure figures; the timeline draws them.

/** One member's series: x (the timeline's axis, increasing) and y per point. */
export interface BandMember {
  xs: readonly number[];
  ys: readonly number[];
}

export interface BandPoint {
  x: number;
  /** members with a value at x */
  n: number;
  median: number;
  p90: number;
  max: number;
}

/** Processes above which a timeline draws groups as bands (and only the processes that matter as lines). */
export const BANDS_ABOVE = 50;

function quantileSorted(s: Float64Array, n: number, q: number): number {
  const at = (n - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo] + (s[hi] - s[lo]) * (at - lo);
}

/**
 * The band of a group at `steps` evenly spaced points from its first x to its last (each member's own points are
 * held until its next, never extended past its last). Empty without members or points.
 */
export function groupBand(members: readonly BandMember[], steps = 64): BandPoint[] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const m of members)
    if (m.xs.length > 0) {
      lo = Math.min(lo, m.xs[0]);
      hi = Math.max(hi, m.xs[m.xs.length - 1]);
    }
  if (!Number.isFinite(lo)) return [];
  const n = hi > lo ? Math.max(2, steps) : 1;
  const at = new Int32Array(members.length); // each member's current point (the grid only moves right)
  const values = new Float64Array(members.length);
  const out: BandPoint[] = [];
  for (let k = 0; k < n; k++) {
    const x = n === 1 ? lo : lo + ((hi - lo) * k) / (n - 1);
    let c = 0;
    members.forEach((m, j) => {
      const last = m.xs.length - 1;
      if (last < 0 || x < m.xs[0] || x > m.xs[last]) return;
      while (at[j] < last && m.xs[at[j] + 1] <= x) at[j]++;
      values[c++] = m.ys[at[j]];
    });
    if (c === 0) continue;
    const s = values.subarray(0, c).sort();
    out.push({ x, n: c, median: quantileSorted(s, c, 0.5), p90: quantileSorted(s, c, 0.9), max: s[c - 1] });
  }
  return out;
}
