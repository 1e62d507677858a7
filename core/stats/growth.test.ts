import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { leastSquaresSlope, rankGrowth, stackSeries } from './growth.js';
import { fixtureFiles } from '../../tools/fixtures.js';

describe('rankGrowth', () => {
  it('exact run over m0…m19: the leak ranks first with slope 3 × 16,384 B per snapshot, growing in every interval', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const ranked = rankGrowth(exact, { from: 0, to: 19 });
    const top = ranked[0];
    expect(top.slopeBytesPerSnapshot).toBeCloseTo(49152, 6);
    expect(top.growingFraction).toBe(1);
    expect(top.r2).toBeCloseTo(1, 12);
    expect(top.deltaBytes).toBe(19 * 49152);
    // the plateau and the worker never change: slope 0, steadiness 0
    const flat = ranked.filter((g) => g.firstBytes === 16 * 65536 || g.firstBytes === 819200);
    expect(flat).toHaveLength(2);
    for (const g of flat) expect(g.steadiness).toBe(0);
  });

  it('sampled run (killed, no final dump) and the Python workload: the leaking stack grows in ≥ 90% of intervals', async () => {
    const job = await loadJob(fixtureFiles('job'));
    for (const prefix of ['sampled', 'pygrow']) {
      const p = job.processes.find((x) => x.prefix === prefix)!;
      const top = rankGrowth(p)[0];
      expect(top.growingFraction, prefix).toBeGreaterThanOrEqual(0.9);
      const last = p.snapshots[p.snapshots.length - 1];
      // it holds most of the memory at the end
      expect(top.lastBytes / last.live.bytes, prefix).toBeGreaterThan(0.5);
    }
  });

  it("stackSeries gives each stack's bytes at every snapshot", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const leak = rankGrowth(exact)[0].stackId;
    const [row] = stackSeries(exact, [leak]);
    expect([...row.slice(0, 20)]).toEqual([...Array(20).keys()].map((k) => (k + 1) * 49152));
  });
});

describe('leastSquaresSlope', () => {
  it('is the slope of the least-squares line, computed by hand', () => {
    // y = 3x + 1 exactly; and by hand: x 0..3, y 1,3,2,6: Σxy = 25, Σy = 12 → (4·25 − 6·12)/(4·14 − 6²) = 28/20
    expect(leastSquaresSlope([1, 4, 7, 10])).toBeCloseTo(3, 12);
    expect(leastSquaresSlope([1, 3, 2, 6])).toBeCloseTo(1.4, 12);
    expect(leastSquaresSlope([5])).toBe(0);
  });
});
