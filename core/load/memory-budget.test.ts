// Issue 24 item 13: one dump of many distinct stacks is stopped by the memory budget while its stacks are interned,
// with a message naming the dump, before the merge has built them all (the big case, 10^7 stacks, is
// bench/many-stacks.mjs). The dump is made here; the expected counts are its own arithmetic.
import { describe, expect, it } from 'vitest';
import type { InputFile } from '../formats/input-file.js';
import { loadJob } from './load-job.js';
import { JobTooLargeError, stackTableBytes } from './memory-budget.js';

const N = 300_000;
function dump(n: number): Uint8Array {
  const parts = [`heap_v2/1\n  t*: ${n}: ${16 * n} [0: 0]\n`];
  for (let i = 0; i < n; i++)
    parts.push(`@ 0x${(0x400000 + i * 16).toString(16)} 0x7f0000001000\n  t*: 1: 16 [0: 0]\n`);
  return new TextEncoder().encode(parts.join(''));
}
const file = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

describe('the memory budget and one dump of many stacks', () => {
  const bytes = dump(N);
  it('loads within a budget it fits', async () => {
    const job = await loadJob([file('d/app.7.0.f.heap', bytes)], { memoryBudget: 1e9 });
    expect(job.processes[0].stacks.count).toBe(N);
    expect(job.processes[0].snapshots[0].live.bytes).toBe(16 * N);
  });
  it('stops inside the merge, naming the dump, once the stacks interned so far pass the budget', async () => {
    // the budget holds about a third of the dump's stacks: the stop comes at a 65,536-record check, not after all
    const budget = stackTableBytes(
      { count: N / 3, offsets: [], frames: new Uint32Array((2 * N) / 3), allocatorDepth: [] },
      N / 3,
    );
    const err = await loadJob([file('d/app.7.0.f.heap', bytes)], { memoryBudget: budget }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobTooLargeError);
    const e = err as JobTooLargeError;
    expect(e.file).toBe('d/app.7.0.f.heap');
    expect(e.message).toMatch(
      /^this job does not fit in memory: reading d\/app\.7\.0\.f\.heap \(dump 1 of 1\), the model already takes .* GB \(limit .* GB\)\. Write it as a dataset on disk with `heaplens ingest/,
    );
    // stopped early: past the budget by at most one check's worth of stacks, far from the whole dump
    expect(e.neededBytes).toBeLessThan(budget * 1.6);
  });
});
