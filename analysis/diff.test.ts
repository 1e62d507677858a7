import { describe, expect, it } from 'vitest';
import { loadJob } from './load-job.js';
import { diffSnapshots, diffTotals } from './diff.js';
import { functionDeltas } from './function-diff.js';
import { fixtureFiles, jeprofReportTotal, fixturePath } from '../tools/fixtures.js';
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
    expect(deltas.filter((d) => d.status === 'same').map((d) => d.targetBytes)).toEqual(expect.arrayContaining([16 * 65536, 100 * 8192]));
  });

  it('sampled run, i0 → last: total change equals jeprof --base within rounding', async () => {
    const [first, last] = readFileSync(fixturePath('references/jeprof-sampled-base.files'), 'utf8').trim().split('\t');
    const job = await loadJob(fixtureFiles('job'));
    const sampled = job.processes.find((p) => p.prefix === 'sampled')!;
    const bi = sampled.snapshots.findIndex((s) => s.file === `job/${first}`);
    const ti = sampled.snapshots.findIndex((s) => s.file === `job/${last}`);
    const totals = diffTotals(diffSnapshots(sampled, bi, ti));
    expect(Math.abs(totals.deltaBytes - jeprofReportTotal('references/jeprof-sampled-base.txt'))).toBeLessThanOrEqual(1);
  });

  it('marks stacks new and gone', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const py = job.processes.find((p) => p.prefix === 'pygrow')!;
    const deltas = diffSnapshots(py, 0, py.snapshots.length - 1);
    for (const d of deltas) {
      if (d.status === 'new') expect(d.baseBytes).toBe(0);
      if (d.status === 'gone') expect(d.targetBytes).toBe(0);
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
