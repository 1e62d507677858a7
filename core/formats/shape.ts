// Checks of parsed JSON from an untrusted file (a report's payload, a dataset's JSON columns): each returns the
// value with its type narrowed, or throws a ShapeError naming where in the document it failed and what was
// there. The caller turns that into its own error (ReportError, DatasetError) naming the file.

import { MAX_COUNT } from './limits.js';

export class ShapeError extends Error {
  constructor(
    readonly at: string,
    readonly what: string,
  ) {
    super(`${at}: ${what}`);
    this.name = 'ShapeError';
  }
}

export type Obj = Record<string, unknown>;

function fail(at: string, what: string): never {
  throw new ShapeError(at, what);
}

/** What a value is, briefly, for the message: "a string", "NaN", "-3e+38", "a list of 12". */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v.length > 40 ? `a text of ${v.length} characters` : JSON.stringify(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export function obj(v: unknown, at: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(at, `expected an object, found ${describe(v)}`);
  return v as Obj;
}

export function arr(v: unknown, at: string, max: number): unknown[] {
  if (!Array.isArray(v)) fail(at, `expected a list, found ${describe(v)}`);
  if (v.length > max) fail(at, `${v.length.toLocaleString('en-US')} entries, more than ${max.toLocaleString('en-US')}`);
  return v;
}

export function str(v: unknown, at: string, max = 1 << 16): string {
  if (typeof v !== 'string') fail(at, `expected a text, found ${describe(v)}`);
  if (v.length > max) fail(at, `a text of ${v.length} characters, more than ${max}`);
  return v;
}

export function strOrNull(v: unknown, at: string, max = 1 << 16): string | null {
  return v === null || v === undefined ? null : str(v, at, max);
}

export function bool(v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') fail(at, `expected true or false, found ${describe(v)}`);
  return v;
}

/** A finite number in [lo, hi]. */
export function num(v: unknown, at: string, lo: number, hi: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(at, `expected a number, found ${describe(v)}`);
  if (v < lo || v > hi) fail(at, `${v} is outside ${lo}..${hi}`);
  return v;
}

export function numOrNull(v: unknown, at: string, lo: number, hi: number): number | null {
  return v === null || v === undefined ? null : num(v, at, lo, hi);
}

/** A size or count: finite, 0 to 2^53 (the dump readers' bound, core/formats/limits.ts). */
export function size(v: unknown, at: string): number {
  return num(v, at, 0, MAX_COUNT);
}

export function sizeOrNull(v: unknown, at: string): number | null {
  return v === null || v === undefined ? null : size(v, at);
}

/** A whole number in [0, max]. */
export function whole(v: unknown, at: string, max = MAX_COUNT): number {
  const n = num(v, at, 0, max);
  if (!Number.isInteger(n)) fail(at, `${n} is not a whole number`);
  return n;
}

export function wholeOrNull(v: unknown, at: string, max = MAX_COUNT): number | null {
  return v === null || v === undefined ? null : whole(v, at, max);
}

export function oneOf<T extends string>(v: unknown, at: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    fail(at, `expected one of ${allowed.join(', ')}, found ${describe(v)}`);
  return v as T;
}

export function oneOfOrNull<T extends string>(v: unknown, at: string, allowed: readonly T[]): T | null {
  return v === null || v === undefined ? null : oneOf(v, at, allowed);
}

/** A flat record of texts (a header's key=value pairs, unknown context keys): at most `max` keys. */
export function textRecord(v: unknown, at: string, max: number): Record<string, string> {
  const o = obj(v, at);
  const keys = Object.keys(o);
  if (keys.length > max) fail(at, `${keys.length} keys, more than ${max}`);
  const out: Record<string, string> = {};
  // a key named __proto__ would set the prototype, not a field
  for (const k of keys) if (k !== '__proto__') out[k] = str(o[k], `${at}.${k}`);
  return out;
}

/** A flat record of finite numbers (a table's producer statistics). */
export function numberRecord(v: unknown, at: string, max: number): Record<string, number> {
  const o = obj(v, at);
  const keys = Object.keys(o);
  if (keys.length > max) fail(at, `${keys.length} keys, more than ${max}`);
  const out: Record<string, number> = {};
  for (const k of keys) if (k !== '__proto__') out[k] = num(o[k], `${at}.${k}`, -Number.MAX_VALUE, Number.MAX_VALUE);
  return out;
}
