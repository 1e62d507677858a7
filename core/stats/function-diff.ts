// Per-function self and total values (and their deltas) from per-stack deltas. A "function" is whatever
// key the caller gives a frame: the address before symbolization, the function name after.

import type { StackTable } from '../model/model.js';
import type { StackDelta } from './diff.js';

export interface FunctionDelta {
  key: string;
  selfBase: number;
  selfTarget: number;
  selfDelta: number;
  totalBase: number;
  totalTarget: number;
  totalDelta: number;
}

export interface FunctionOptions {
  /** skip the allocator's own frames at the top of each stack (so malloc is not everyone's self) */
  hideAllocator: boolean;
}

/** The six per-function numbers, whatever else a view's row carries (label, kind, …). */
export type SelfTotal = Omit<FunctionDelta, 'key'>;

/**
 * Adds one stack (keys leaf first) to per-function rows: its bytes are the self of the leaf's row and
 * count once in the total of every function in it, however often recursion repeats it. Deltas are
 * filled in by `finishFunctionRows`. `seen` is scratch space, reused across calls.
 */
export function addStackToFunctions<K, R extends SelfTotal>(
  keys: ArrayLike<K> & Iterable<K>,
  baseBytes: number,
  targetBytes: number,
  rowOf: (key: K) => R,
  seen: Set<R>,
): void {
  if (keys.length === 0) return;
  const leaf = rowOf(keys[0]);
  leaf.selfBase += baseBytes;
  leaf.selfTarget += targetBytes;
  seen.clear();
  for (const k of keys) {
    const r = rowOf(k);
    if (seen.has(r)) continue;
    seen.add(r);
    r.totalBase += baseBytes;
    r.totalTarget += targetBytes;
  }
}

export type FunctionSortKey = 'selfDelta' | 'totalDelta' | 'selfTarget' | 'totalTarget';

/**
 * Rows by one figure, largest first, ties broken by the other of self/total: sorted by total, a leaf comes before
 * the callers that carry the same bytes; sorted by self (pprof's `top`: flat first), callers with no self of their
 * own follow by total. So "by function" reads from the allocation site up, not from `<module>` down.
 */
export function compareFunctions<R extends SelfTotal>(key: FunctionSortKey, desc = true): (a: R, b: R) => number {
  const other: FunctionSortKey =
    key === 'selfDelta'
      ? 'totalDelta'
      : key === 'totalDelta'
        ? 'selfDelta'
        : key === 'selfTarget'
          ? 'totalTarget'
          : 'selfTarget';
  const sign = desc ? -1 : 1;
  return (a, b) => sign * (a[key] - b[key]) || sign * (a[other] - b[other]);
}

/** Sets each row's deltas from its base and target. */
export function finishFunctionRows<R extends SelfTotal>(rows: R[]): R[] {
  for (const r of rows) {
    r.selfDelta = r.selfTarget - r.selfBase;
    r.totalDelta = r.totalTarget - r.totalBase;
  }
  return rows;
}

export function functionDeltas(
  stacks: StackTable,
  deltas: readonly StackDelta[],
  keyOf: (addressId: number) => string,
  options: FunctionOptions = { hideAllocator: true },
): FunctionDelta[] {
  const rows = new Map<string, FunctionDelta>();
  const row = (key: string): FunctionDelta => {
    let r = rows.get(key);
    if (!r) {
      r = { key, selfBase: 0, selfTarget: 0, selfDelta: 0, totalBase: 0, totalTarget: 0, totalDelta: 0 };
      rows.set(key, r);
    }
    return r;
  };
  const seen = new Set<FunctionDelta>();
  for (const d of deltas) {
    const from = stacks.offsets[d.stackId] + (options.hideAllocator ? stacks.allocatorDepth[d.stackId] : 0);
    const to = stacks.offsets[d.stackId + 1];
    const keys: string[] = [];
    for (let k = from; k < to; k++) keys.push(keyOf(stacks.frames[k]));
    addStackToFunctions(keys.length > 0 ? keys : ['(no frames)'], d.baseBytes, d.targetBytes, row, seen);
  }
  const byTotal = compareFunctions<FunctionDelta>('totalDelta');
  return finishFunctionRows([...rows.values()]).sort((a, b) => byTotal(a, b) || (a.key < b.key ? -1 : 1));
}
