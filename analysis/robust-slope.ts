// Theil–Sen slope: the median of the slopes between all pairs of points. Robust to a few outliers
// and to step-like series (an interval dump can land just before or after a burst), unlike least
// squares. Sen's (1968) rank interval gives confidence bounds for projections.

/**
 * Series longer than this are thinned to this many evenly spaced points before pairing: the pair
 * count grows as n², and 32 points (496 pairs) keep the estimate within a few % of the full one on
 * smooth series while the job-wide ranking stays a small fraction of load time (bench/verdict-bench.mjs).
 */
export const THEIL_SEN_MAX_POINTS = 32;
/** normal quantile of the two-sided 95 % interval */
const Z95 = 1.959964;

export interface RobustSlope {
  slope: number;
  /** median of y − slope·x (computed with `interval` only; NaN otherwise) */
  intercept: number;
  /** 95 % bounds of the slope (Sen's rank interval); equal to slope for fewer than 3 points */
  lo: number;
  hi: number;
  /** points used (after thinning) */
  points: number;
}

let pairBuf = new Float64Array(1024);

function pick(n: number, max: number): number[] {
  if (n <= max) return [...Array(n).keys()];
  const out: number[] = [];
  for (let k = 0; k < max; k++) out.push(Math.round((k * (n - 1)) / (max - 1)));
  return out;
}

/** k-th smallest (0-based) of a[0..n) by quickselect; reorders a. */
function select(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

function median(a: Float64Array, n: number): number {
  if (n === 0) return 0;
  const m = select(a, n, n >> 1);
  if (n % 2 === 1) return m;
  // the lower middle is the largest of the lower half
  let lower = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n >> 1; i++) if (a[i] > lower) lower = a[i];
  return (lower + m) / 2;
}

/**
 * Theil–Sen slope of y over x on [from, to) (x null: the index). `interval` computes Sen's 95 % bounds
 * (a sort of the pairs); without it lo = hi = slope.
 */
export function theilSen(y: ArrayLike<number>, x: ArrayLike<number> | null, from = 0, to = y.length, interval = false): RobustSlope {
  const n = to - from;
  if (n < 2) return { slope: 0, intercept: n === 1 ? y[from] : 0, lo: 0, hi: 0, points: n };
  const idx = pick(n, THEIL_SEN_MAX_POINTS).map((i) => i + from);
  const m = idx.length;
  const maxPairs = (m * (m - 1)) / 2;
  if (pairBuf.length < maxPairs) pairBuf = new Float64Array(maxPairs);
  const buf = pairBuf;
  let np = 0;
  for (let a = 0; a < m; a++) {
    const ia = idx[a];
    const xa = x ? x[ia] : ia;
    const ya = y[ia];
    for (let b = a + 1; b < m; b++) {
      const ib = idx[b];
      const dx = (x ? x[ib] : ib) - xa;
      if (dx === 0) continue;
      buf[np++] = (y[ib] - ya) / dx;
    }
  }
  if (np === 0) return { slope: 0, intercept: y[from], lo: 0, hi: 0, points: m };
  let lo = 0;
  let hi = 0;
  let slope: number;
  if (interval && m >= 3) {
    const sorted = buf.slice(0, np).sort();
    slope = np % 2 === 1 ? sorted[np >> 1] : (sorted[(np >> 1) - 1] + sorted[np >> 1]) / 2;
    // Sen's interval: C = z·√(Var of Kendall's S) without ties; the bounds are the ranks (N ∓ C)/2
    const c = Z95 * Math.sqrt((m * (m - 1) * (2 * m + 5)) / 18);
    const r1 = Math.max(0, Math.floor((np - c) / 2));
    const r2 = Math.min(np - 1, Math.ceil((np + c) / 2));
    lo = sorted[r1];
    hi = sorted[r2];
  } else {
    slope = median(buf, np);
    lo = hi = slope;
  }
  if (!interval) return { slope, intercept: Number.NaN, lo, hi, points: m };
  // intercept: median of residuals over the points used
  const res = new Float64Array(m);
  for (let a = 0; a < m; a++) res[a] = y[idx[a]] - slope * (x ? x[idx[a]] : idx[a]);
  return { slope, intercept: median(res, m), lo, hi, points: m };
}
