import { describe, expect, it } from 'vitest';
import { bytesAxis, dumpHeight } from './bytes-axis.ts';

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

  it('an empty chart still has a scale (no 0/0 domain)', () => {
    const ax = bytesAxis(0, [100, 0]);
    expect(ax.y.domain()[1]).toBeGreaterThan(0);
    expect(Number.isFinite(ax.y(0))).toBe(true);
  });
});
