import { describe, expect, it } from 'vitest';
import {
  deltaSigma,
  denseVariances,
  recordVariance,
  sigma,
  totalVariance,
  varianceAtP,
  withinNoise,
  zScore,
} from './sampling-error.js';
import { unbias } from './unbias.js';
import { loadJob } from '../load/load-job.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, fixtureFiles } from '../../tools/fixtures.js';

const MiB = 1024 * 1024;
const R = 512 * 1024;

describe('recordVariance (jemalloc sampling model)', () => {
  it('varianceAtP, given the p unbiasing found, is B̂²(1 − p)/c (Python: p = -expm1(-64/524288))', () => {
    const s = { kind: 'poisson' as const, period: 524288 };
    const p = 0.00012206286222255873;
    // (640/p)² · (1 − p) / 10 = 2748779066026.666
    expect(varianceAtP(s, 10, 640, p) / 2748779066026.666).toBeCloseTo(1, 12);
    expect(recordVariance(s, 10, 640) / 2748779066026.666).toBeCloseTo(1, 12);
    expect(varianceAtP(s, 0, 0, 1)).toBe(0);
    expect(varianceAtP({ kind: 'v1', period: 512 }, 1, 1024, 1)).toBe(0);
  });

  it('small objects: σ matches the exact Poisson (Garwood) 95% intervals of next-features.md §3 (scipy, R = 512 KiB)', () => {
    // K samples of 64-byte objects: estimate ≈ K·R; the table's interval half-width / 1.96 is an independent σ
    const table: [number, number, number, number][] = [
      // K, estimate MiB, low, high
      [16, 8, 4.6, 13.0],
      [100, 50, 40.7, 60.8],
      [1000, 500, 469, 532],
    ];
    for (const [k, est, lo, hi] of table) {
      const s = { kind: 'poisson' as const, period: R };
      expect(unbias(s, k, k * 64).bytes / MiB).toBeCloseTo(est, 0);
      const sd = sigma(recordVariance(s, k, k * 64)) / MiB;
      const fromInterval = (hi - lo) / 2 / 1.96;
      // Garwood intervals are asymmetric for small K; within 10% for K ≥ 16
      expect(sd / fromInterval, `K=${k}`).toBeGreaterThan(0.9);
      expect(sd / fromInterval, `K=${k}`).toBeLessThan(1.1);
    }
  });

  it('large objects are nearly exact: relative SD 0.137 at 2 MiB and 0.000 at 8 MiB (§3, R = 512 KiB)', () => {
    const s = { kind: 'poisson' as const, period: R };
    // one sampled object: relative to the true size s (the estimate is s/p)
    const rel = (size: number) =>
      (sigma(recordVariance(s, 1, size)) / unbias(s, 1, size).bytes) * (1 / (1 - Math.exp(-size / R)));
    expect(rel(2 * MiB)).toBeCloseTo(0.137, 2);
    expect(rel(8 * MiB)).toBeLessThan(0.0005);
  });

  it('is 0 when every allocation was recorded (period 1, heapprofile)', () => {
    expect(recordVariance({ kind: 'poisson', period: 1 }, 10, 1000)).toBe(0);
    expect(recordVariance({ kind: 'none' }, 10, 1000)).toBe(0);
    expect(recordVariance({ kind: 'poisson', period: R }, 0, 0)).toBe(0);
  });
});

describe('delta helpers', () => {
  it('σ of a delta adds variances; z and the 2σ noise band', () => {
    expect(deltaSigma(9, 16)).toBe(5);
    expect(zScore(10, 5)).toBe(2);
    expect(zScore(3, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(zScore(0, 0)).toBe(0);
    expect(withinNoise(9.9, 5)).toBe(true);
    expect(withinNoise(10, 5)).toBe(false);
  });
});

describe('variances in the model', () => {
  it('exact run has zero variance; the sampled run has a σ per cell that sums to the total', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    for (const s of exact.snapshots) expect(totalVariance(s)).toBe(0);
    const sampled = job.processes.find((p) => p.prefix === 'sampled')!;
    const last = sampled.snapshots[sampled.snapshots.length - 1];
    expect(last.liveVarBytes.length).toBe(last.stackIds.length);
    const dense = denseVariances(sampled.stacks.count, last);
    expect(dense.reduce((a, b) => a + b, 0)).toBeCloseTo(totalVariance(last), 3);
    // σ of the total from the dump's own text, by the textbook formula written out here (jemalloc samples each
    // allocation of size z with p = 1 − exp(−z/R); a stack's c sampled objects of b bytes unbias to B = b/p with
    // SD = B·√((1−p)/c)), summed as variances over the stacks: the model's σ must be that, within rounding.
    const text = readFileSync(join(FIXTURES, 'job', last.file.split('/').pop()!), 'utf8');
    const R = Number(/^heap_v2\/(\d+)/.exec(text)![1]);
    let varSum = 0;
    let stacks = 0;
    for (const m of text.matchAll(/^@ [^\n]*\n\s+t\*: (\d+): (\d+) /gm)) {
      const c = Number(m[1]);
      const b = Number(m[2]);
      if (c === 0) continue;
      const p = 1 - Math.exp(-b / c / R);
      const B = b / p;
      varSum += (B * B * (1 - p)) / c;
      stacks++;
    }
    expect(stacks).toBeGreaterThan(2);
    expect(sigma(totalVariance(last)) / Math.sqrt(varSum)).toBeCloseTo(1, 3);
    const rel = sigma(totalVariance(last)) / last.live.bytes;
    expect(rel).toBeGreaterThan(0.01);
    expect(rel).toBeLessThan(0.5);
  });
});
