import { describe, expect, it } from 'vitest';
import { newUnbiased, unbias, unbiasInto } from './unbias.js';

describe('unbias (jeprof AdjustSamples, pprof scaleHeapSample)', () => {
  it("scales one 81,939-byte record at period 16,384 to jeprof's 82,494 B", () => {
    // jemalloc-format.md §6.3: jemalloc 5.3 writes 1: 81939 for one 81,920-byte object; jeprof reports 82,494 B
    const r = unbias({ kind: 'poisson', period: 16384 }, 1, 81939);
    expect(Math.round(r.bytes)).toBe(82494);
    expect(r.objects).toBeCloseTo(82494 / 81939, 3);
  });

  it('matches 1/(1-exp(-avg/period)) computed by hand for small objects', () => {
    const r = unbias({ kind: 'poisson', period: 524288 }, 10, 640);
    // 1 - e^(-x) summed as its series x - x²/2 + x³/6 (no cancellation, unlike 1 - Math.exp(-x))
    const x = 64 / 524288;
    const scale = 1 / (x - x ** 2 / 2 + x ** 3 / 6 - x ** 4 / 24);
    expect(r.bytes).toBeCloseTo(640 * scale, 6);
    expect(r.objects).toBeCloseTo(10 * scale, 9);
  });

  it('stays finite for the largest period (2^63) where 1 - exp(-x) rounds to 0', () => {
    const r = unbias({ kind: 'poisson', period: 2 ** 63 }, 1, 8);
    expect(r.bytes / 2 ** 63).toBeCloseTo(1, 9); // one 8-byte sample stands for period bytes
    expect(Number.isFinite(r.objects)).toBe(true);
  });

  it('leaves exact dumps and zero-object records alone', () => {
    expect(unbias({ kind: 'none' }, 3, 300)).toEqual({ objects: 3, bytes: 300 });
    expect(unbias({ kind: 'poisson', period: 16384 }, 0, 0)).toEqual({ objects: 0, bytes: 0 });
  });

  it('version 1 scales only records whose average is below the period', () => {
    expect(unbias({ kind: 'v1', period: 512 }, 4, 1024)).toEqual({ objects: 8, bytes: 2048 });
    expect(unbias({ kind: 'v1', period: 512 }, 1, 1024)).toEqual({ objects: 1, bytes: 1024 });
  });

  it('unbiasInto reuses one object and gives the probability p it divided by', () => {
    const out = newUnbiased();
    // p = 1 - e^(-81939/16384) = 0.9932698622532794 (Python: -math.expm1(-81939/16384))
    expect(unbiasInto(out, { kind: 'poisson', period: 16384 }, 1, 81939)).toBe(out);
    expect(out.p).toBeCloseTo(0.9932698622532794, 15);
    expect(Math.round(out.bytes)).toBe(82494);
    // v1 below the period: p = avg/period = 256/512
    expect(unbiasInto(out, { kind: 'v1', period: 512 }, 4, 1024)).toEqual({ objects: 8, bytes: 2048, p: 0.5 });
    expect(unbiasInto(out, { kind: 'v1', period: 512 }, 1, 1024)).toEqual({ objects: 1, bytes: 1024, p: 1 });
    expect(unbiasInto(out, { kind: 'none' }, 3, 300)).toEqual({ objects: 3, bytes: 300, p: 1 });
  });
});
