// Theil–Sen slope: the median of the slopes between all pairs of points. Robust to a few outliers
// and to step-like series (an interval dump can land just before or after a burst), unlike least
// squares. Sen's (1968) rank interval gives confidence bounds for projections.

/**
 * Series longer than this are thinned to this many evenly spaced points before pairing: the pair
 * count grows as n², and 24 points (276 pairs) keep the estimate close to the full one on smooth
 * series while the job-wide ranking stays a small fraction of load time (bench/verdict-bench.mjs).
 */
export const THEIL_SEN_MAX_POINTS = 24;
/** normal quantile of the two-sided 95 % interval */
const Z95 = 1.959964;

export interface RobustSlope {
  slope: number;
  /** 95 % bounds of the slope (Sen's rank interval); equal to slope for fewer than 3 points */
  lo: number;
  hi: number;
  /** points used (after thinning) */
  points: number;
}

let pairBuf = new Float64Array(1024);
const idxBuf = new Int32Array(THEIL_SEN_MAX_POINTS);

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
  // after selecting rank n/2, the lower half holds the smaller values: the lower middle is their largest
  let lower = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n >> 1; i++) if (a[i] > lower) lower = a[i];
  return (lower + m) / 2;
}

/**
 * Theil–Sen slope of y over x on [from, to) (x null: the index). `interval` adds Sen's 95 % bounds;
 * without it lo = hi = slope.
 */
export function theilSen(
  y: ArrayLike<number>,
  x: ArrayLike<number> | null,
  from = 0,
  to = y.length,
  interval = false,
): RobustSlope {
  const n = to - from;
  if (n < 2) return { slope: 0, lo: 0, hi: 0, points: n };
  const m = Math.min(n, THEIL_SEN_MAX_POINTS);
  const idx = idxBuf;
  for (let k = 0; k < m; k++) idx[k] = from + (n <= THEIL_SEN_MAX_POINTS ? k : Math.round((k * (n - 1)) / (m - 1)));
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
  if (np === 0) return { slope: 0, lo: 0, hi: 0, points: m };
  const slope = median(buf, np);
  if (!interval || m < 3) return { slope, lo: slope, hi: slope, points: m };
  // Sen's interval: C = z·√(Var of Kendall's S) without ties; the bounds are the slopes of ranks (N ∓ C)/2
  const c = Z95 * Math.sqrt((m * (m - 1) * (2 * m + 5)) / 18);
  const lo = select(buf, np, Math.max(0, Math.floor((np - c) / 2)));
  const hi = select(buf, np, Math.min(np - 1, Math.ceil((np + c) / 2)));
  return { slope, lo, hi, points: m };
}
