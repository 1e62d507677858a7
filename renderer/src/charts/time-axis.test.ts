import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axisKeeper, formatUtc, sameAxis, timeAxis, timeKind, xValue, type AxisProcess } from './time-axis.ts';

const T0 = Date.UTC(2026, 10, 29, 9, 0, 0); // 09:00:00 UTC

function proc(seqs: (number | null)[], times: (number | null)[] | null, source: 'capture' | 'mtime' = 'capture') {
  const p: AxisProcess = {
    time: times ? { axis: 'wall', source, mtimeProblem: null } : { axis: 'seq', source: 'seq', mtimeProblem: 'x' },
    snapshots: seqs.map((seq, index) => ({ index, seq, timeMs: times ? times[index] : null })),
  };
  return p;
}

describe('time axis', () => {
  // this machine runs in UTC: a zone of its own for these tests, so an axis in local time would fail them
  const tz = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'America/Los_Angeles';
  });
  afterAll(() => {
    process.env.TZ = tz;
  });

  it('is wall clock only when every shown process has a time for every dump', () => {
    const a = proc([0, 1], [T0, T0 + 60_000]);
    const b = proc([0, 1], null);
    expect(timeKind([a])).toBe('wall');
    expect(timeKind([a, b])).toBe('seq');
    // a process that claims wall clock but lacks one dump's time does not make a wall-clock axis
    expect(timeKind([proc([0, 1], [T0, null])])).toBe('seq');
    expect(timeKind([])).toBe('seq');
  });

  it('places dumps by sequence number, never list position, and labels ticks #seq', () => {
    // dumps 5..9 of a series (the first four were not copied): index 0 is #5
    const p = proc([5, 6, 7, 8, 9], null);
    const ax = timeAxis([p], [62, 462]);
    expect(ax.kind).toBe('seq');
    expect(xValue('seq', p.snapshots[0])).toBe(5);
    expect(ax.x(p.snapshots[0])).toBe(62);
    expect(ax.x(p.snapshots[4])).toBe(462);
    const labels = ax.ticks.map((t) => t.label);
    expect(labels[0]).toBe('#5');
    expect(labels).toContain('#9');
    expect(labels.every((l) => /^#\d+$/.test(l))).toBe(true);
    expect(ax.caption.text).toBe('x: dump seq (no times)');
  });

  it('names dumps without a seq as snapLabel does ("dump N", 1-based), not as #index', () => {
    const ax = timeAxis([proc([null, null, null], null)], [0, 300]);
    expect(ax.ticks.map((t) => t.label)).toEqual(['dump 1', 'dump 2', 'dump 3']);
  });

  it('draws wall clock in UTC, on ticks and in tooltips, and says so in the caption', () => {
    // five dumps a minute apart from 09:00 UTC
    const times = [0, 1, 2, 3, 4].map((k) => T0 + k * 60_000);
    const ax = timeAxis([proc([0, 1, 2, 3, 4], times, 'mtime')], [0, 500]);
    expect(ax.kind).toBe('wall');
    expect(ax.x({ index: 0, seq: 0, timeMs: T0 })).toBe(0);
    expect(ax.x({ index: 4, seq: 4, timeMs: T0 + 240_000 })).toBe(500);
    // whatever the machine's zone (TZ is not UTC on most laptops), the 09:00 tick reads 09:00:00
    expect(ax.ticks.find((t) => t.value === T0)?.label).toBe('09:00:00');
    expect(ax.caption.text).toBe('x: wall clock, UTC (file modification times)');
    expect(formatUtc(T0 + 1500)).toBe('2026-11-29 09:00:01 UTC');
  });

  it('gives one axis to processes of different lengths (the timeline and memory chart line up)', () => {
    const a = proc([0, 1, 2], null);
    const b = proc([0, 1, 2, 3, 4, 5, 6], null);
    const both = timeAxis([a, b], [0, 600]);
    // #2 of the short process sits where #2 of the long one does
    expect(both.x(a.snapshots[2])).toBe(both.x(b.snapshots[2]));
    expect(both.x(a.snapshots[2])).toBe(200);
  });

  it('a single dump still has a non-empty domain', () => {
    const ax = timeAxis([proc([3], null)], [10, 110]);
    expect(Number.isFinite(ax.x({ index: 0, seq: 3, timeMs: null }))).toBe(true);
  });
  it('reaches a moment after the last dump (the kill) on a wall-clock axis, never one off the dumps clock', () => {
    const p = proc([0, 1], [T0, T0 + 60_000]);
    const kill = T0 + 90_000;
    const ax = timeAxis([p], [0, 300], [kill]);
    // the dumps keep their order and spacing; the kill is the right end
    expect(ax.at(kill)).toBe(300);
    expect(ax.x(p.snapshots[1])).toBeCloseTo(200, 6);
    // a time two days away (another clock) is left out: the axis stays the dumps'
    expect(timeAxis([p], [0, 300], [T0 + 2 * 86_400_000]).x(p.snapshots[1])).toBe(300);
    // on a sequence axis times have no place
    expect(timeAxis([proc([0, 1], null)], [0, 300], [kill]).x({ index: 1, seq: 1, timeMs: null })).toBe(300);
  });

  it("a massif series is drawn on massif's own time, its unit in the ticks and the caption", () => {
    // the --pages-as-heap run's time_unit B (fixtures/massif): snapshot times in bytes allocated and freed
    const m: AxisProcess = {
      time: { axis: 'seq', source: 'seq', mtimeProblem: 'x', massifUnit: 'B' },
      snapshots: [0, 4096, 3_000_000, 17_764_352].map((t, index) => ({
        index,
        seq: index,
        timeMs: null,
        massifTime: t,
      })),
    };
    expect(timeKind([m])).toBe('massif');
    expect(xValue('massif', m.snapshots[3])).toBe(17_764_352);
    const ax = timeAxis([m], [0, 500]);
    expect(ax.x(m.snapshots[0])).toBe(0);
    expect(ax.x(m.snapshots[3])).toBe(500);
    expect(ax.ticks.every((t) => / B$/.test(t.label))).toBe(true);
    expect(ax.caption.text).toBe('x: massif time (bytes allocated and freed)');
    // beside a process without massif's time: sequence numbers
    expect(timeKind([m, proc([0, 1], null)])).toBe('seq');
  });

  it('zoomed: the part of the axis a brush covered fills the range, its ticks inside it', () => {
    // dumps #0 … #40, zoomed to #10 … #20 over 400 px: 40 px a dump
    const p = proc(
      Array.from({ length: 41 }, (_, i) => i),
      null,
    );
    const ax = timeAxis([p], [62, 462], [], [10, 20]);
    expect(ax.x(p.snapshots[10])).toBe(62);
    expect(ax.x(p.snapshots[20])).toBe(462);
    expect(ax.x(p.snapshots[15])).toBe(262);
    expect(ax.ticks.length).toBeGreaterThan(1);
    for (const t of ax.ticks) expect(t.value >= 10 && t.value <= 20, t.label).toBe(true);
    // wall clock zoomed to 4 s: the labels carry milliseconds
    const w = proc([0, 1], [T0, T0 + 60_000]);
    const z = timeAxis([w], [62, 462], [], [T0 + 10_000, T0 + 14_000]);
    expect(z.at(T0 + 12_000)).toBe(262);
    expect(z.ticks[0].label).toMatch(/^09:00:1\d\.\d{3}$/);
  });

  it('kept while the processes shown move nothing on it (a loading job read further), made anew when they do', () => {
    const a = proc([0, 1, 2], [T0, T0 + 60_000, T0 + 120_000]);
    const b = proc([0, 1], [T0 + 10_000, T0 + 70_000]);
    const keep = axisKeeper();
    const first = keep(timeAxis([a, b], [62, 462]));
    // the same processes as new objects (the next update's summary): the same axis object
    const again = keep(timeAxis([{ ...a }, { ...b }], [62, 462]));
    expect(again).toBe(first);
    // a dump later than any before: another axis, and it is kept from then on
    const c = proc([0, 1], [T0, T0 + 180_000]);
    const wider = keep(timeAxis([a, b, c], [62, 462]));
    expect(wider).not.toBe(first);
    expect(sameAxis(wider, first)).toBe(false);
    expect(keep(timeAxis([a, b, c], [62, 462]))).toBe(wider);
    // another width, another axis
    expect(sameAxis(timeAxis([a, b, c], [62, 562]), wider)).toBe(false);
    // the same dumps on a sequence axis: not the wall-clock one
    expect(sameAxis(timeAxis([proc([0, 1, 2], null)], [62, 462]), first)).toBe(false);
  });
});
