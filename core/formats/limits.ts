// What the dump readers accept: every bound on hostile or damaged input in one place, each with the
// reason it is safe. Crossing one is a warning naming the file and line (or byte offset), never a hang,
// a crash or a wrong total.

import type { RawCounts } from './dump-types.js';

/**
 * Largest count accepted. jemalloc prints uint64 counters, but no process holds 2^53 bytes (8 PiB) or
 * objects, and above 2^53 doubles stop being exact integers: a larger figure is damage.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** heap_v2/N has N = 2^lg_prof_sample and jemalloc bounds lg_prof_sample to 0..63. */
export const MAX_SAMPLE_PERIOD = 2 ** 63;

/**
 * Frames kept per stack. jemalloc writes at most 128 (PROF_BT_MAX; 5.3.1's prof_bt_max at most 256),
 * gperftools 64; 1024 leaves room for any real writer while one damaged line cannot cost gigabytes.
 */
export const MAX_FRAMES_PER_STACK = 1024;

/**
 * Longest line read. The longest line a writer makes is a backtrace: 1024 frames × 19 bytes ≈ 20 KB (a
 * maps path is at most PATH_MAX, 4 KB). A longer line is skipped without being held in memory whole.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Inflated bytes allowed per compressed byte. Dumps are hex text and inflate 5–20× (7.5× for the
 * fixtures); deflate's ceiling is 1032×, reached only by runs such as zeros (a "gzip bomb").
 */
export const MAX_INFLATE_RATIO = 256;

/** Inflated size always allowed, whatever the ratio (a tiny gzip of a small dump may inflate more). */
export const MIN_INFLATE_ALLOWANCE = 16 * 1024 * 1024;

/** Absolute bound on one inflated dump: far beyond real dumps (hundreds of MB at most), below disk-filling. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024 * 1024;

/**
 * Largest window a zstd frame may ask for: zstd's own default (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27; the zstd tool
 * refuses more unless given --long or --memory). fzstd allocates the window whole and moves all of it once per
 * block, so the frame header alone decided memory: up to 2 GiB from 18 bytes.
 */
export const MAX_ZSTD_WINDOW = 128 * 1024 * 1024;

/** The inflated size a gzip of `compressedBytes` may reach. */
export function inflateLimit(compressedBytes: number): number {
  return Math.min(MAX_INFLATED_BYTES, Math.max(MIN_INFLATE_ALLOWANCE, compressedBytes * MAX_INFLATE_RATIO));
}

/**
 * Why counts cannot have been written by jemalloc (null when they can): a negative or non-integer
 * figure, one above MAX_COUNT, or objects without bytes (or bytes without objects: every allocation
 * has a size of at least 1, and sampling scales by bytes/objects, so 0 of either gives Infinity or NaN).
 */
export function countsProblem(c: RawCounts): string | null {
  // Fast path (every record passes here): whole, in range, and zero together.
  const { liveObjects: a, liveBytes: b, accumObjects: x, accumBytes: y } = c;
  if (
    a >= 0 &&
    b >= 0 &&
    x >= 0 &&
    y >= 0 &&
    a <= MAX_COUNT &&
    b <= MAX_COUNT &&
    x <= MAX_COUNT &&
    y <= MAX_COUNT &&
    a <= b &&
    x <= y &&
    (a === 0) === (b === 0) &&
    (x === 0) === (y === 0)
  ) {
    if (Number.isInteger(a) && Number.isInteger(b) && Number.isInteger(x) && Number.isInteger(y)) return null;
  }
  for (const v of [c.liveObjects, c.liveBytes, c.accumObjects, c.accumBytes]) {
    if (!Number.isFinite(v)) return 'count with over 300 digits';
    if (!Number.isInteger(v)) return `count ${v} is not a whole number`;
    if (v < 0) return `negative count ${v}`;
    if (v > MAX_COUNT) return `count ${v > 1e30 ? 'with ' + String(v).length + '+ digits' : v} is above 2^53`;
  }
  if ((c.liveObjects === 0) !== (c.liveBytes === 0)) return `${c.liveObjects} live objects with ${c.liveBytes} bytes`;
  if ((c.accumObjects === 0) !== (c.accumBytes === 0))
    return `${c.accumObjects} allocated objects with ${c.accumBytes} bytes`;
  // Every allocation is at least one byte; unbiasing such a record would invent megabytes from nothing.
  if (c.liveObjects > c.liveBytes)
    return `${c.liveObjects} live objects in ${c.liveBytes} bytes (every allocation is at least 1 byte)`;
  if (c.accumObjects > c.accumBytes)
    return `${c.accumObjects} allocated objects in ${c.accumBytes} bytes (every allocation is at least 1 byte)`;
  return null;
}

/**
 * A number from a file as a message quotes it: exact up to 2^53, past it in a few digits and a power of ten ("1.84e19,
 * past 2^53"), so no message prints a figure the model cannot hold as if it were one.
 */
export function numberText(v: number | bigint): string {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (!Number.isFinite(n)) return String(v).length > 24 ? `a number of ${String(v).length} digits` : String(v);
  if (Math.abs(n) <= MAX_COUNT) return String(v);
  return `${n.toExponential(2).replace('e+', 'e')}, past 2^53`;
}

/**
 * Dates accepted from logs and context lines: from the epoch to a year past the reading (a clock a little
 * ahead is common; a date in 1653 or 2286 is damage, and matching it to dumps gives nonsense).
 */
export const MAX_FUTURE_MS = 366 * 24 * 3600 * 1000;
export function dateProblem(ms: number, nowMs: number = Date.now()): string | null {
  if (!Number.isFinite(ms)) return 'not a date';
  if (ms < 0) return `${new Date(ms).toISOString().slice(0, 10)} is before 1970`;
  if (ms > nowMs + MAX_FUTURE_MS) {
    const d = new Date(ms);
    return `${Number.isFinite(d.getTime()) ? d.toISOString().slice(0, 10) : 'a date'} is more than a year in the future`;
  }
  return null;
}

/** Why a size in bytes (RSS, a limit) is unusable: not finite, negative, fractional, or past 2^53 (8 PiB). */
export function bytesProblem(v: number): string | null {
  if (!Number.isFinite(v)) return 'size with over 300 digits';
  if (v < 0) return `negative size ${v}`;
  if (v > MAX_COUNT) return `size ${v > 1e30 ? `of ${Math.floor(Math.log10(v)) + 1} digits` : v} B is past 8 PiB`;
  return null;
}

/** Why a sampling period is unusable (null when it is fine). */
export function periodProblem(period: number): string | null {
  if (!Number.isFinite(period) || !Number.isInteger(period) || period < 0)
    return `sampling period ${period} is not a whole number`;
  if (period > MAX_SAMPLE_PERIOD) return `sampling period ${period} is above 2^63 (lg_prof_sample is at most 63)`;
  return null;
}
