import { describe, expect, it } from 'vitest';
import { buildCallTree } from '../stats/call-tree.js';
import { calleeKeys, callerKeys, invertedKeys } from './callers.js';
import type { StackTable } from '../model/model.js';

// stacks, leaf first: 0 = [alloc, make, handler, main]; 1 = [alloc, recurse, recurse, main]; 2 = [other, main]
const keys = [
  [1, 2, 3, 9],
  [1, 5, 5, 9],
  [7, 9],
];
const stacks: StackTable = { count: 3, offsets: [0, 0, 0, 0], frames: new Uint32Array(0), allocatorDepth: [0, 0, 0] };
const values = { stackIds: [0, 1, 2], bytes: [100, 40, 7] };

const children = (t: ReturnType<typeof buildCallTree>, node: number) => {
  const out: [number, number][] = [];
  for (let c = node + 1; c < t.end[node]; c = t.end[c]) out.push([t.key[c], t.total[c]]);
  return out;
};

describe('core/frames/callers', () => {
  it('inverted: allocation sites are the roots, every byte kept', () => {
    const t = buildCallTree(stacks, values, { stackKeys: (id) => invertedKeys(keys[id]) });
    expect(children(t, 0).sort()).toEqual([
      [1, 140],
      [7, 7],
    ]);
    expect(t.total[0]).toBe(147);
  });

  it('sandwich of a recursive function: callers from its innermost call, callees from its outermost; each stack once', () => {
    const callers = buildCallTree(
      stacks,
      { stackIds: [1], bytes: [40] },
      { stackKeys: () => callerKeys(keys[1], 5) ?? [] },
    );
    // fn → recurse (its own outer call) → main
    expect(children(callers, 0)).toEqual([[5, 40]]);
    expect(children(callers, 1)).toEqual([[5, 40]]);
    const callees = buildCallTree(
      stacks,
      { stackIds: [1], bytes: [40] },
      { stackKeys: () => calleeKeys(keys[1], 5) ?? [] },
    );
    expect(children(callees, 0)).toEqual([[5, 40]]);
    expect(children(callees, 1)).toEqual([[5, 40]]);
    expect(callerKeys(keys[2], 5)).toBeNull();
    expect(Array.from(callerKeys(keys[0], 2) ?? [])).toEqual([9, 3, 2]);
    expect(Array.from(calleeKeys(keys[0], 3) ?? [])).toEqual([1, 2, 3]);
  });
});
