import { describe, expect, it } from 'vitest';
import { bytesAxis, dumpHeight, MIN_TICK_GAP } from './bytes-axis.ts';

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
});
