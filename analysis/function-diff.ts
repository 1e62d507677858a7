// Per-function self and total values (and their deltas) from per-stack deltas. A "function" is whatever
// key the caller gives a frame: the address before symbolization, the function name after.

import type { StackTable } from './model.js';
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
  const seen = new Set<string>();
  for (const d of deltas) {
    const from = stacks.offsets[d.stackId] + (options.hideAllocator ? stacks.allocatorDepth[d.stackId] : 0);
    const to = stacks.offsets[d.stackId + 1];
    const leafKey = from < to ? keyOf(stacks.frames[from]) : '(no frames)';
    const self = row(leafKey);
    self.selfBase += d.baseBytes;
    self.selfTarget += d.targetBytes;
    self.selfDelta += d.deltaBytes;
    // Total counts a stack once per function, however often recursion repeats it.
    seen.clear();
    if (from >= to) seen.add(leafKey);
    for (let k = from; k < to; k++) seen.add(keyOf(stacks.frames[k]));
    for (const key of seen) {
      const r = row(key);
      r.totalBase += d.baseBytes;
      r.totalTarget += d.targetBytes;
      r.totalDelta += d.deltaBytes;
    }
  }
  return [...rows.values()].sort((a, b) => b.totalDelta - a.totalDelta || (a.key < b.key ? -1 : 1));
}
