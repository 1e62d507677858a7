import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { diffSnapshots, diffTotals } from './diff.js';
import { functionDeltas } from './function-diff.js';
import { fixtureFiles, jeprofReportTotal, fixturePath } from '../../tools/fixtures.js';
import { readFileSync } from 'node:fs';

describe('diffSnapshots on the real fixtures', () => {
  it('exact run, m0 → final: total change equals jeprof --base, and the leak is first with 57 × 16,384 B', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const deltas = diffSnapshots(exact, 0, exact.snapshots.length - 1);
    const totals = diffTotals(deltas);
    expect(totals.deltaBytes).toBe(jeprofReportTotal('references/jeprof-exact-base-m0-f.txt'));
    expect(deltas[0].deltaBytes).toBe(57 * 16384);
    expect(deltas[0].deltaObjects).toBe(57);
    expect(deltas[0].status).toBe('grown');
    expect(deltas.filter((d) => d.status === 'same').map((d) => d.targetBytes)).toEqual(
      expect.arrayContaining([16 * 65536, 100 * 8192]),
    );
  });

  it('sampled run, i0 → last: total change equals jeprof --base within rounding', async () => {
    const [first, last] = readFileSync(fixturePath('references/jeprof-sampled-base.files'), 'utf8').trim().split('\t');
    const job = await loadJob(fixtureFiles('job'));
    const sampled = job.processes.find((p) => p.prefix === 'sampled')!;
    const bi = sampled.snapshots.findIndex((s) => s.file === `job/${first}`);
    const ti = sampled.snapshots.findIndex((s) => s.file === `job/${last}`);
    const totals = diffTotals(diffSnapshots(sampled, bi, ti));
    expect(Math.abs(totals.deltaBytes - jeprofReportTotal('references/jeprof-sampled-base.txt'))).toBeLessThanOrEqual(
      1,
    );
  });

  it('marks stacks new and gone: exactly the backtraces one dump has and the other lacks (read from the text)', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const py = job.processes.find((p) => p.prefix === 'pygrow')!;
    const last = py.snapshots.length - 1;
    // independent of the parser: the "@ …" lines of the two files as text
    const backtraces = (i: number) =>
      new Set(
        readFileSync(fixturePath(py.snapshots[i].file), 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('@'))
          .map((l) => l.slice(1).trim()),
      );
    const first = backtraces(0);
    const final = backtraces(last);
    const onlyFinal = [...final].filter((b) => !first.has(b));
    expect(onlyFinal.length).toBeGreaterThan(0); // the fixture has a stack that appears during the run
    const text = (d: { stackId: number }) => {
      const { offsets, frames } = py.stacks;
      return Array.from(frames.subarray(offsets[d.stackId], offsets[d.stackId + 1]), (a) => py.addresses.hex[a]).join(
        ' ',
      );
    };
    const forward = diffSnapshots(py, 0, last);
    const fresh = forward.filter((d) => d.status === 'new');
    expect(fresh.map(text).sort()).toEqual(onlyFinal.sort());
    for (const d of fresh) expect(d.baseBytes).toBe(0);
    expect(forward.filter((d) => d.status === 'gone')).toEqual([]);
    // the same pair backwards: those stacks are gone
    const gone = diffSnapshots(py, last, 0).filter((d) => d.status === 'gone');
    expect(gone.map(text).sort()).toEqual(onlyFinal.sort());
    for (const d of gone) {
      expect(d.targetBytes).toBe(0);
      expect(d.deltaBytes).toBe(-d.baseBytes);
      expect(d.baseBytes).toBeGreaterThan(0);
    }
    expect(() => diffSnapshots(py, 0, 999)).toThrow(RangeError);
  });

  it('per function: self goes to the first non-allocator frame, total counts each stack once per function', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const deltas = diffSnapshots(exact, 0, exact.snapshots.length - 1);
    const byAddr = functionDeltas(exact.stacks, deltas, (a) => exact.addresses.hex[a]);
    const total = diffTotals(deltas);
    // make_node is the leaf of every leaky stack: its self delta is the leak's
    const leaf = byAddr.find((f) => f.selfDelta === 57 * 16384)!;
    expect(leaf).toBeDefined();
    // a frame present in every stack (none here is, except in the same process's main: total ≤ overall)
    for (const f of byAddr) expect(f.totalTarget).toBeLessThanOrEqual(total.targetBytes + 1e-6);
    // with allocator frames kept, the self of jemalloc's top frame is everything
    const withAlloc = functionDeltas(exact.stacks, deltas, (a) => exact.addresses.hex[a], { hideAllocator: false });
    const jemallocLeaf = exact.addresses.hex[exact.stacks.frames[exact.stacks.offsets[0]]];
    expect(withAlloc.find((f) => f.key === jemallocLeaf)!.selfTarget).toBe(total.targetBytes);
    expect(byAddr.find((f) => f.key === jemallocLeaf)).toBeUndefined();
  });
});
