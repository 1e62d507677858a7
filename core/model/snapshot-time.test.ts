import { describe, expect, it } from 'vitest';
import { mtimeProblem, seriesTimes } from './snapshot-time.js';
import type { Snapshot } from './model.js';
import { bareContext, type DumpContext } from '../formats/dump-context.js';

// Only the fields the time rules read; the rest of a Snapshot does not matter here.
type TimedSnap = Pick<Snapshot, 'mtimeMs' | 'seq' | 'context'>;
const ctx = (timeRealMs: number): DumpContext => bareContext(timeRealMs, 1);
const series = (snapshots: TimedSnap[]) => ({ snapshots: snapshots as Snapshot[] });

describe('snapshot times', () => {
  it('capture timestamps win over mtimes, and set a wall axis in seconds', () => {
    const t = seriesTimes(
      series([
        { seq: 0, mtimeMs: 5, context: ctx(1_000_000) },
        { seq: 1, mtimeMs: 5, context: ctx(1_002_500) },
      ]),
    );
    expect(t.axis).toBe('wall');
    expect(t.source).toBe('capture');
    expect(t.x).toEqual([0, 2.5]);
    expect(t.snapshots.map((s) => s.source)).toEqual(['capture', 'capture']);
  });
  it('uses mtimes only when distinct and increasing with seq', () => {
    expect(
      seriesTimes(
        series([
          { seq: 0, mtimeMs: 1000 },
          { seq: 1, mtimeMs: 3000 },
        ]),
      ).x,
    ).toEqual([0, 2]);
    const same = seriesTimes(
      series([
        { seq: 0, mtimeMs: 1000 },
        { seq: 1, mtimeMs: 1000 },
      ]),
    );
    expect(same.axis).toBe('seq');
    expect(same.mtimeProblem).toMatch(/share/);
    const back = seriesTimes(
      series([
        { seq: 0, mtimeMs: 3000 },
        { seq: 1, mtimeMs: 1000 },
      ]),
    );
    expect(back.snapshots.map((s) => s.source)).toEqual(['seq', 'seq']);
    expect(back.mtimeProblem).toMatch(/dump 1 is older than dump 0/);
    expect(mtimeProblem([{ seq: 0, mtimeMs: null }])).toMatch(/no modification time/);
  });
  it('mixes capture and plausible mtimes on one wall axis, admitting the weaker source', () => {
    const t = seriesTimes(
      series([
        { seq: 0, mtimeMs: 1000 },
        { seq: 1, mtimeMs: 2100, context: ctx(2000) },
        { seq: 2, mtimeMs: 4000 },
      ]),
    );
    expect(t.axis).toBe('wall');
    expect(t.source).toBe('mtime');
    expect(t.x).toEqual([0, 1, 3]);
  });
  it('mtimes that disagree with the capture clock (a copy) are not trusted for the dump without a context', () => {
    // a killed process's last dump, cut before the library wrote its table, in a git checkout
    const t = seriesTimes(
      series([
        { seq: 0, mtimeMs: 9e12, context: ctx(1000) },
        { seq: 1, mtimeMs: 9e12 + 5, context: ctx(2000) },
        { seq: 2, mtimeMs: 9e12 + 9 },
      ]),
    );
    expect(t.axis).toBe('seq');
    expect(t.mtimeProblem).toMatch(/differ from the capture clock/);
    expect(
      seriesTimes(
        series([
          { seq: 0, mtimeMs: 5000, context: ctx(5000) },
          { seq: 1, mtimeMs: 4000 },
        ]),
      ).mtimeProblem,
    ).toMatch(/out of order/);
  });
  it('falls back to indices when some snapshots have no time', () => {
    const t = seriesTimes(
      series([
        { seq: 0, mtimeMs: 1000, context: ctx(5) },
        { seq: 1, mtimeMs: 1000 },
        { seq: 2, mtimeMs: 1000 },
      ]),
    );
    expect(t.axis).toBe('seq');
    expect(t.x).toEqual([0, 1, 2]);
    expect(t.snapshots[0]).toEqual({ timeMs: 5, source: 'capture' });
    expect(t.snapshots[1]).toEqual({ timeMs: null, source: 'seq' });
  });
});
