// A process's stack verdicts (patterns.ts SeriesVerdict) kept as columns, each row's object made when read. A loaded
// job's ranking keeps every (process, stack)'s verdict: at 1,000 processes × 1,000 stacks that was a million objects
// of 20 fields, each double its own heap number, which every major GC marked again. A loading job's dumps arrive
// as buffers from the readers, and V8 starts a major GC every ~64 MB of them (its external-memory limit): with the
// verdicts in the heap, the GC threads of a 1,000-process load took ~25 s of CPU, against ~6 s without them.

import type { ProcessSeries } from '../model/model.js';
import {
  blankVerdict,
  classifyStacks,
  type GrowthPattern,
  type ProcessPatterns,
  type SeriesVerdict,
} from './patterns.js';

/** The patterns by a small code, for typed arrays: 0 is 'unknown' (and a ranking's "no verdict"). */
export const PATTERN_CODES: readonly GrowthPattern[] = [
  'unknown',
  'steady',
  'plateau',
  'step',
  'fluctuating',
  'declining',
  'flat',
];

/** A pattern's PATTERN_CODES index (0, 'unknown', for a name not among them). */
export function patternCode(pattern: GrowthPattern): number {
  const code = PATTERN_CODES.indexOf(pattern);
  return code < 0 ? 0 : code;
}

// the numeric fields, a column each
const STACK_ID = 0;
const POINTS = 1;
const FIRST = 2;
const LAST = 3;
const PEAK = 4;
const DELTA = 5;
const SIGMA = 6;
const SIGMA_DELTA = 7;
const Z = 8;
const SLOPE = 9;
const SLOPE_SECOND = 10;
const LATE_SLOPE = 11;
const LATE_SLOPE_SECOND = 12;
const LATE_Z = 13;
const SCORE = 14;
const COLUMNS = 15;

// flag bits
const WITHIN_NOISE = 1;
const HAS_RATE = 2;
const NO_SLOPE_SECOND = 4;
const NO_LATE_SLOPE_SECOND = 8;

/** Rows of verdicts, read by row: the ranking reads a row's score and pattern, and makes a row's verdict to show it. */
export class VerdictTable {
  readonly length: number;
  private readonly num: Float64Array<ArrayBuffer>;
  private readonly pattern: Uint8Array<ArrayBuffer>;
  private readonly flags: Uint8Array<ArrayBuffer>;
  /** each row's note and rate note, by number in `texts` (0: null): a process's rows share a few texts */
  private readonly note: Uint32Array<ArrayBuffer>;
  private readonly rateNote: Uint32Array<ArrayBuffer>;
  private readonly texts: (string | null)[];

  private constructor(n: number, texts: (string | null)[]) {
    this.length = n;
    this.num = new Float64Array(COLUMNS * n);
    this.pattern = new Uint8Array(n);
    this.flags = new Uint8Array(n);
    this.note = new Uint32Array(n);
    this.rateNote = new Uint32Array(n);
    this.texts = texts;
  }

  /** The verdicts in this order, as columns. */
  static of(verdicts: readonly SeriesVerdict[]): VerdictTable {
    const t = VerdictTable.rows(verdicts.length);
    verdicts.forEach((v, r) => t.set(r, v));
    return t;
  }

  /** A table of n rows, each to be `set` (until then each reads as a blank verdict). */
  static rows(n: number): VerdictTable {
    return new VerdictTable(n, [null]);
  }

  /** The text's number in `texts` (0: null), added when new. */
  private textOf(s: string | null): number {
    if (s === null) return 0;
    // a process's rows share a few texts (its series' length and times decide them): a look-up along them
    const at = this.texts.indexOf(s, 1);
    if (at > 0) return at;
    this.texts.push(s);
    return this.texts.length - 1;
  }

  /** Writes row r from `v` (which it does not keep). */
  set(r: number, v: SeriesVerdict): void {
    const n = this.length;
    const x = this.num;
    x[STACK_ID * n + r] = v.stackId;
    x[POINTS * n + r] = v.points;
    x[FIRST * n + r] = v.firstBytes;
    x[LAST * n + r] = v.lastBytes;
    x[PEAK * n + r] = v.peakBytes;
    x[DELTA * n + r] = v.deltaBytes;
    x[SIGMA * n + r] = v.sigmaBytes;
    x[SIGMA_DELTA * n + r] = v.sigmaDeltaBytes;
    x[Z * n + r] = v.z;
    x[SLOPE * n + r] = v.slopePerSnapshot;
    x[SLOPE_SECOND * n + r] = v.slopePerSecond ?? 0;
    x[LATE_SLOPE * n + r] = v.lateSlopePerSnapshot;
    x[LATE_SLOPE_SECOND * n + r] = v.lateSlopePerSecond ?? 0;
    x[LATE_Z * n + r] = v.lateZ;
    x[SCORE * n + r] = v.score;
    this.pattern[r] = patternCode(v.pattern);
    this.flags[r] =
      (v.withinNoise ? WITHIN_NOISE : 0) |
      (v.hasRate ? HAS_RATE : 0) |
      (v.slopePerSecond === null ? NO_SLOPE_SECOND : 0) |
      (v.lateSlopePerSecond === null ? NO_LATE_SLOPE_SECOND : 0);
    this.note[r] = this.textOf(v.note);
    this.rateNote[r] = this.textOf(v.rateNote);
  }

  /** These rows, in this order, as a table of their own. */
  pick(rows: ArrayLike<number>): VerdictTable {
    const n = rows.length;
    const t = new VerdictTable(n, this.texts);
    const m = this.length;
    for (let c = 0; c < COLUMNS; c++) for (let k = 0; k < n; k++) t.num[c * n + k] = this.num[c * m + rows[k]];
    for (let k = 0; k < n; k++) {
      const r = rows[k];
      t.pattern[k] = this.pattern[r];
      t.flags[k] = this.flags[r];
      t.note[k] = this.note[r];
      t.rateNote[k] = this.rateNote[r];
    }
    return t;
  }

  stackId(r: number): number {
    return this.num[STACK_ID * this.length + r];
  }

  score(r: number): number {
    return this.num[SCORE * this.length + r];
  }

  /** the row's pattern as its PATTERN_CODES index */
  patternCode(r: number): number {
    return this.pattern[r];
  }

  /** every row's first, last bytes and σ of the last (the ranking's totals), in row order, without a copy */
  column(name: 'firstBytes' | 'lastBytes' | 'sigmaBytes'): Float64Array<ArrayBuffer> {
    const c = name === 'firstBytes' ? FIRST : name === 'lastBytes' ? LAST : SIGMA;
    return this.num.subarray(c * this.length, (c + 1) * this.length);
  }

  /** The row's verdict, as classifySeries made it (the same fields in the same order). */
  at(r: number): SeriesVerdict {
    const n = this.length;
    const x = this.num;
    const f = this.flags[r];
    return {
      stackId: x[STACK_ID * n + r],
      pattern: PATTERN_CODES[this.pattern[r]],
      note: this.texts[this.note[r]],
      points: x[POINTS * n + r],
      firstBytes: x[FIRST * n + r],
      lastBytes: x[LAST * n + r],
      peakBytes: x[PEAK * n + r],
      deltaBytes: x[DELTA * n + r],
      sigmaBytes: x[SIGMA * n + r],
      sigmaDeltaBytes: x[SIGMA_DELTA * n + r],
      z: x[Z * n + r],
      withinNoise: (f & WITHIN_NOISE) !== 0,
      slopePerSnapshot: x[SLOPE * n + r],
      slopePerSecond: f & NO_SLOPE_SECOND ? null : x[SLOPE_SECOND * n + r],
      lateSlopePerSnapshot: x[LATE_SLOPE * n + r],
      lateSlopePerSecond: f & NO_LATE_SLOPE_SECOND ? null : x[LATE_SLOPE_SECOND * n + r],
      lateZ: x[LATE_Z * n + r],
      hasRate: (f & HAS_RATE) !== 0,
      rateNote: this.texts[this.rateNote[r]],
      score: x[SCORE * n + r],
    };
  }
}

/**
 * patterns.ts processPatterns as a table: every stack classified into one verdict object, refilled, and written to
 * columns (as objects, a 1,000-process job's verdicts were 0.76 GB of the loading thread's garbage).
 */
export function processPatternTable(proc: ProcessSeries): Omit<ProcessPatterns, 'stacks'> & { table: VerdictTable } {
  let table = VerdictTable.rows(0);
  let r = 0;
  const frame = classifyStacks(
    proc,
    (count) => (table = VerdictTable.rows(count)),
    (v) => table.set(r++, v),
    blankVerdict(),
  );
  return { ...frame, table };
}
