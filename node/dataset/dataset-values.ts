// A dataset's columns are untrusted input (issue 24 items 6 and 15): a copied or damaged Parquet file may hold
// any value its column type allows, or another type. The dump readers' bounds (core/formats/limits.ts) are
// applied to every figure read back, and every JSON text column is parsed here, so that each failure is a
// DatasetError naming the file and the column, never NaN in a total or an internal error with a stack.

import { MAX_COUNT, periodProblem } from '../../core/formats/limits.js';
import { DatasetError } from './errors.js';

/**
 * The one bound on a figure read back: a count or size in bytes is finite, not negative, at most 2^53 (unbiased
 * figures need not be whole); a pprof profile's (`signed`) is finite within ±2^53 (a delta profile's values are
 * negative where its window freed). null when `v` is within it, else what it should have been, for the message.
 */
export function figureProblem(v: number, signed: boolean): string | null {
  if (signed ? Math.abs(v) <= MAX_COUNT : v >= 0 && v <= MAX_COUNT) return null;
  return signed ? 'figure (-2^53 to 2^53)' : 'size (0 to 2^53)';
}

function figureValue(file: string, column: string, v: unknown, signed: boolean): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number') throw new DatasetError(file, `column ${column} holds ${typeName(v)}, not a number`);
  const bad = figureProblem(n, signed);
  if (bad !== null) throw new DatasetError(file, `column ${column} holds ${String(n)}, not a ${bad}`);
  return n;
}

/** A count or size in bytes (figureProblem's bound). */
export function sizeValue(file: string, column: string, v: unknown): number {
  return figureValue(file, column, v, false);
}

/** A pprof profile's figure (figureProblem's signed bound). */
export function signedValue(file: string, column: string, v: unknown): number {
  return figureValue(file, column, v, true);
}

/** A sampling period: whole, up to 2^63 (lg_prof_sample is at most 63). */
export function periodValue(file: string, v: unknown): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number') throw new DatasetError(file, `column sample_period holds ${typeName(v)}, not a number`);
  const bad = periodProblem(n);
  if (bad !== null) throw new DatasetError(file, `column sample_period: ${bad}`);
  return n;
}

export function sizeOrNull(file: string, column: string, v: unknown): number | null {
  return v === null || v === undefined ? null : sizeValue(file, column, v);
}

/** A whole number in 0..max (indexes, sequence numbers, line numbers). */
export function wholeValue(file: string, column: string, v: unknown, max = MAX_COUNT): number {
  const n = sizeValue(file, column, v);
  if (!Number.isInteger(n) || n > max)
    throw new DatasetError(file, `column ${column} holds ${n}, not a whole number up to ${max}`);
  return n;
}

export function wholeOrNull(file: string, column: string, v: unknown): number | null {
  return v === null || v === undefined ? null : wholeValue(file, column, v);
}

export function textValue(file: string, column: string, v: unknown): string {
  if (typeof v !== 'string') throw new DatasetError(file, `column ${column} holds ${typeName(v)}, not text`);
  return v;
}

export function textOrNullValue(file: string, column: string, v: unknown): string | null {
  return v === null || v === undefined ? null : textValue(file, column, v);
}

/** JSON text parsed, with `check` saying whether the parsed value has the shape the reader needs. */
export function jsonValue<T>(
  file: string,
  column: string,
  v: unknown,
  check: (x: unknown) => boolean,
  parse = JSON.parse,
): T {
  const text = textValue(file, column, v);
  let x: unknown;
  try {
    x = parse(text);
  } catch (e) {
    throw new DatasetError(file, `column ${column} is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!check(x)) throw new DatasetError(file, `column ${column} does not have the shape this reader writes`);
  return x as T;
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : `a ${typeof v}`;
}
