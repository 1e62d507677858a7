import { describe, expect, it } from 'vitest';
import { buildCallTree, nodePath } from './call-tree.js';
import type { StackTable } from '../model/model.js';

// stacks, leaf first; address ids: 0 = je_malloc (allocator), 1 = leak, 2 = step, 3 = main, 4 = tmp, 5 = inl
function table(stacks: number[][], alloc: number[]): StackTable {
  const offsets = [0];
  const frames: number[] = [];
  for (const s of stacks) {
    frames.push(...s);
    offsets.push(frames.length);
  }
  return { count: stacks.length, offsets, frames: Uint32Array.from(frames), allocatorDepth: alloc };
}

const T = table(
  [
    [0, 1, 2, 3], // malloc ← leak ← step ← main
    [0, 4, 2, 3], // malloc ← tmp ← step ← main
    [0, 4, 3], // malloc ← tmp ← main
    [], // empty stack
  ],
  [1, 1, 1, 0],
);

describe('buildCallTree', () => {
  it('builds root → leaf with totals and self, hiding allocator frames', () => {
    const t = buildCallTree(T, { stackIds: [0, 1, 2, 3], bytes: [100, 30, 5, 7], objects: [1, 2, 3, 4] });
    expect(t.total[0]).toBe(142);
    expect(t.self[0]).toBe(7); // empty stack lands on the root
    // root → main(3) → step(2) → leak(1) | tmp(4); main → tmp(4)
    const paths = Array.from({ length: t.size }, (_, i) => nodePath(t, i).join('>'));
    expect(paths).toEqual(['', '3', '3>2', '3>2>1', '3>2>4', '3>4']);
    const at = (p: string): number => paths.indexOf(p);
    expect(t.total[at('3')]).toBe(135);
    expect(t.self[at('3')]).toBe(0);
    expect(t.total[at('3>2')]).toBe(130);
    expect(t.self[at('3>2>1')]).toBe(100);
    expect(t.totalObjects[at('3>4')]).toBe(3);
    expect(t.depth[at('3>2>1')]).toBe(3);
    expect(t.maxDepth).toBe(3);
    expect(t.baseTotal).toBeNull();
    expect(Array.from(t.stackNode)).toEqual([at('3>2>1'), at('3>2>4'), at('3>4'), 0]);
  });

  it('keeps allocator frames when asked', () => {
    const t = buildCallTree(T, { stackIds: [0], bytes: [10] }, { hideAllocatorFrames: false });
    expect(nodePath(t, t.stackNode[0])).toEqual([3, 2, 1, 0]);
  });

  it('preorder subtree ranges are consistent', () => {
    const t = buildCallTree(T, { stackIds: [0, 1, 2], bytes: [100, 30, 5] });
    for (let i = 0; i < t.size; i++) {
      let sum = t.self[i];
      for (let j = i + 1; j < t.end[i]; j++) {
        expect(t.depth[j]).toBeGreaterThan(t.depth[i]);
        if (t.parent[j] === i) sum += t.total[j];
      }
      expect(sum).toBeCloseTo(t.total[i]);
      if (t.end[i] < t.size) expect(t.depth[t.end[i]]).toBeLessThanOrEqual(t.depth[i]);
    }
  });

  it('orders siblings heaviest first, or by key', () => {
    const t = buildCallTree(T, { stackIds: [0, 1], bytes: [1, 50] });
    expect(nodePath(t, 3)).toEqual([3, 2, 4]);
    const k = buildCallTree(T, { stackIds: [0, 1], bytes: [1, 50] }, { order: 'key' });
    expect(nodePath(k, 3)).toEqual([3, 2, 1]);
  });

  it('expands inlined frames and drops frames', () => {
    // address 2 (step) expands to [5 (inlined helper, innermost), 2]; address 3 (main) dropped
    const expand = (a: number): number[] => (a === 2 ? [5, 2] : a === 3 ? [] : [a]);
    const t = buildCallTree(T, { stackIds: [0], bytes: [9] }, { expand });
    expect(nodePath(t, t.stackNode[0])).toEqual([2, 5, 1]);
  });

  it('takes whole-stack keys from the view when given', () => {
    // a view that replaces stack 0 with python frames 100 ← 101 (leaf first)
    const stackKeys = (id: number): number[] => (id === 0 ? [100, 101] : [7]);
    const t = buildCallTree(T, { stackIds: [0, 1], bytes: [5, 6] }, { stackKeys });
    expect(nodePath(t, t.stackNode[0])).toEqual([101, 100]);
    expect(nodePath(t, t.stackNode[1])).toEqual([7]);
  });

  it('diff: base and target totals, |Δ| and new/gone', () => {
    // stack 0 grew 10 → 100, stack 1 is gone (30 → 0), stack 2 is new (0 → 5)
    const t = buildCallTree(T, { stackIds: [0, 1, 2], bytes: [100, 0, 5], baseBytes: [10, 30, 0] });
    const paths = Array.from({ length: t.size }, (_, i) => nodePath(t, i).join('>'));
    const at = (p: string): number => paths.indexOf(p);
    expect(t.baseTotal?.[0]).toBe(40);
    expect(t.total[0]).toBe(105);
    expect(t.absDeltaTotal?.[0]).toBe(90 + 30 + 5);
    expect(t.baseSelf?.[at('3>2>4')]).toBe(30);
    expect(t.total[at('3>2>4')]).toBe(0);
    expect(t.baseTotal?.[at('3>4')]).toBe(0);
    expect(t.total[at('3>4')]).toBe(5);
  });

  it('handles 100k stacks quickly', () => {
    const stacks: number[][] = [];
    for (let i = 0; i < 100_000; i++) stacks.push([0, 1000 + i, 10 + (i % 50), 5 + (i % 5), 3]);
    const big = table(
      stacks,
      stacks.map(() => 1),
    );
    const ids = stacks.map((_, i) => i);
    const t0 = performance.now();
    const t = buildCallTree(big, { stackIds: ids, bytes: ids.map((i) => i + 1) });
    const ms = performance.now() - t0;
    expect(t.size).toBe(1 + 1 + 5 + 50 + 100_000);
    expect(ms).toBeLessThan(3000);
  });
});
