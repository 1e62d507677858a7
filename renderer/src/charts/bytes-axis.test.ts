import { describe, expect, it } from 'vitest';
import {
  binaryTicks,
  bytesAxis,
  countAxis,
  decimalTicks,
  dumpHeight,
  MIN_TICK_GAP,
  tickLabels,
  valueAxis,
} from './bytes-axis.ts';

describe('bytes axis', () => {
  it('draws a cut dump at its header total, a complete one at its records', () => {
    // a dump cut mid-write: 40 MiB of records kept, the header (written first) says 96 MiB
    expect(dumpHeight({ complete: false, headerLiveBytes: 96 << 20, liveBytes: 40 << 20 })).toBe(96 << 20);
    // cut, and its header is gone too: only the records
    expect(dumpHeight({ complete: false, headerLiveBytes: null, liveBytes: 40 << 20 })).toBe(40 << 20);
    // complete: the records, whatever the header says
    expect(dumpHeight({ complete: true, headerLiveBytes: 50 << 20, liveBytes: 48 << 20 })).toBe(48 << 20);
  });

  it('starts at 0 with headroom over the largest value, labels in byte units', () => {
    const ax = bytesAxis(100 << 20, [200, 10]);
    expect(ax.y(0)).toBe(200);
    expect(ax.y.domain()[0]).toBe(0);
    expect(ax.y.domain()[1]).toBeGreaterThanOrEqual(105 << 20);
    expect(ax.y(100 << 20)).toBeGreaterThan(10);
    expect(ax.ticks[0].label).toBe('0 B');
    expect(ax.ticks.every((t) => /^\d+(\.\d+)? (B|KiB|MiB|GiB)$/.test(t.label))).toBe(true);
  });

  it('a shrunk chart does not stack its labels: ticks stand MIN_TICK_GAP apart at every height', () => {
    for (const h of [24, 40, 60, 90, 150, 300])
      for (const max of [1000, 3 << 20, 95 << 20, 191 << 20, 5 << 30]) {
        const ax = bytesAxis(max, [h, 0]);
        expect(ax.ticks.length, `${h} px, ${max} B`).toBeGreaterThanOrEqual(2);
        for (let k = 1; k < ax.ticks.length; k++)
          expect(
            Math.abs(ax.y(ax.ticks[k].value) - ax.y(ax.ticks[k - 1].value)),
            `${h} px, ${max} B`,
          ).toBeGreaterThanOrEqual(MIN_TICK_GAP);
      }
    // a tall chart keeps the ticks it asked for
    expect(bytesAxis(100 << 20, [300, 0]).ticks.length).toBeGreaterThanOrEqual(4);
  });

  it('an empty chart still has a scale (no 0/0 domain)', () => {
    const ax = bytesAxis(0, [100, 0]);
    expect(ax.y.domain()[1]).toBeGreaterThan(0);
    expect(Number.isFinite(ax.y(0))).toBe(true);
  });

  // Expected ticks worked out by hand: top = max × 1.05 (HEADROOM), the step the smallest power of two bytes at or
  // above top / steps, the ticks 0 … the first multiple of the step at or above top.
  const MiB = 1024 ** 2;
  const GiB = 1024 ** 3;
  const labels = (max: number, px = 300) => bytesAxis(max, [px, 0]).ticks.map((t) => t.label);

  it('ticks at binary steps: 32/64/96 MiB, never 47.7/95.4 MiB', () => {
    // 100 MiB: top 105 MiB, 105/4 = 26.25 MiB → step 32 MiB, ⌈105/32⌉ = 4 steps
    expect(labels(100 * MiB)).toEqual(['0 B', '32 MiB', '64 MiB', '96 MiB', '128 MiB']);
    // the watchdog job's 180 MiB: top 189 MiB, 47.25 MiB → 64 MiB, ⌈189/64⌉ = 3
    expect(labels(180 * MiB)).toEqual(['0 B', '64 MiB', '128 MiB', '192 MiB']);
    // 700 MiB: top 735 MiB, 183.75 MiB → 256 MiB, ⌈735/256⌉ = 3; the top tick (768 MiB) is under 1 GiB
    expect(labels(700 * MiB)).toEqual(['0 B', '256 MiB', '512 MiB', '768 MiB']);
  });

  it('a GiB axis reads 0.5/1/1.5 GiB; the unit is the top tick’s while the step is at least a quarter of it', () => {
    // 1.2 GiB: top 1.26 GiB = 1290.24 MiB, 322.56 MiB → 512 MiB, ⌈1290.24/512⌉ = 3
    expect(labels(1.2 * GiB)).toEqual(['0 B', '0.5 GiB', '1 GiB', '1.5 GiB']);
    // 0.9 GiB: top 967.68 MiB, 241.92 MiB → 256 MiB, ⌈967.68/256⌉ = 4, top tick 1 GiB
    expect(labels(0.9 * GiB)).toEqual(['0 B', '0.25 GiB', '0.5 GiB', '0.75 GiB', '1 GiB']);
    // 3.5 GiB: top 3.675 GiB, 0.92 GiB → 1 GiB, 4 steps
    expect(labels(3.5 * GiB)).toEqual(['0 B', '1 GiB', '2 GiB', '3 GiB', '4 GiB']);
    // 1000 B: top 1050 B, 262.5 B → 512 B, ⌈1050/512⌉ = 3
    expect(labels(1000)).toEqual(['0 B', '0.5 KiB', '1 KiB', '1.5 KiB']);
    // a step an eighth of the top's unit stays in the smaller unit: 0 … 1 GiB by 128 MiB
    expect(tickLabels(binaryTicks(1000 * MiB, 8))).toEqual([
      '0 B',
      '128 MiB',
      '256 MiB',
      '384 MiB',
      '512 MiB',
      '640 MiB',
      '768 MiB',
      '896 MiB',
      '1024 MiB',
    ]);
  });

  it('the axis ends on its top tick and every step is the same power of two', () => {
    for (const max of [1, 1000, 3 * MiB, 95 * MiB, 191 * MiB, 5 * GiB]) {
      const ax = bytesAxis(max, [300, 0]);
      const v = ax.ticks.map((t) => t.value);
      const step = v[1] - v[0];
      expect(Number.isInteger(Math.log2(step)), `${max}: step ${step}`).toBe(true);
      v.forEach((x, k) => expect(x).toBe(k * step));
      expect(ax.y.domain()[1]).toBe(v[v.length - 1]);
      expect(v[v.length - 1]).toBeGreaterThanOrEqual(max * 1.05);
    }
  });

  it('counts are counted, never weighed', () => {
    // 1,000 objects: top 1,050, 262.5 a step → 500, ⌈1050/500⌉ = 3 steps
    const ax = countAxis(1000, [300, 0]);
    expect(ax.ticks.map((t) => t.value)).toEqual([0, 500, 1000, 1500]);
    expect(ax.ticks.map((t) => t.label)).toEqual(['0', '500', '1k', '1.5k']);
    // 37 objects: top 38.85, 9.71 → 10, 4 steps; 3 objects: top 3.15 → 1, 4 steps
    expect(decimalTicks(37 * 1.05, 4)).toEqual([0, 10, 20, 30, 40]);
    expect(decimalTicks(3 * 1.05, 4)).toEqual([0, 1, 2, 3, 4]);
    expect(valueAxis('objects', 1000, [300, 0]).ticks.every((t) => !/B$/.test(t.label))).toBe(true);
    expect(valueAxis('bytes', 100 * MiB, [300, 0]).ticks[1].label).toBe('32 MiB');
  });
});
