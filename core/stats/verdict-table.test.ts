import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { classifySeries, processPatterns, type SeriesVerdict } from './patterns.js';
import { processPatternTable, VerdictTable } from './verdict-table.js';

const FIXTURES = new URL('../../fixtures/', import.meta.url).pathname;

/** every row of a table, made on read */
const rows = (t: VerdictTable): SeriesVerdict[] => Array.from({ length: t.length }, (_, r) => t.at(r));

describe('VerdictTable: verdicts as columns, each made on read as classifySeries made it', () => {
  it("gives back every stack's verdict of the fixture jobs, field for field and in the same key order", async () => {
    let checked = 0;
    const patterns = new Set<string>();
    let perSecond = 0;
    // leaky.c's job (every pattern), and a real kernel-OOM job's Python workers (per-second rates from their clocks)
    for (const files of [fixtureFiles('job'), await collectInputFiles([FIXTURES + 'oom-job/dumps'])]) {
      const job = await loadJob(files);
      for (const p of job.processes) {
        const made = processPatterns(p).stacks;
        const table = VerdictTable.of(made);
        // classified straight into columns, one verdict object refilled: the same rows
        const direct = processPatternTable(p);
        expect(JSON.stringify(rows(direct.table))).toBe(JSON.stringify(made));
        expect(direct.snapshotIndexes).toEqual(processPatterns(p).snapshotIndexes);
        expect(direct.notes).toEqual(processPatterns(p).notes);
        expect(table.length).toBe(made.length);
        // JSON text: the same keys in the same order (a JSON answer prints them so), nulls kept apart from 0
        expect(JSON.stringify(rows(table))).toBe(JSON.stringify(made));
        expect(rows(table)).toEqual(made);
        made.forEach((v, r) => {
          expect(table.score(r)).toBe(v.score);
          expect(table.column('lastBytes')[r]).toBe(v.lastBytes);
        });
        checked += made.length;
        for (const v of made) {
          patterns.add(v.pattern);
          if (v.slopePerSecond !== null) perSecond++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    // the tables held what they must: several patterns, rates per second and none
    expect(patterns.size).toBeGreaterThanOrEqual(3);
    expect(perSecond).toBeGreaterThan(0);
    expect(perSecond).toBeLessThan(checked);
  });

  it('keeps what JSON cannot tell apart: −0, ±∞, NaN, null rates, notes', () => {
    const flat = classifySeries({ y: [5, 5], v: [0, 0], t: null, a: null }, 7);
    const odd: SeriesVerdict = {
      ...flat,
      pattern: 'declining',
      note: 'a note',
      deltaBytes: -0,
      z: Number.NEGATIVE_INFINITY,
      lateZ: Number.POSITIVE_INFINITY,
      slopePerSecond: 0,
      lateSlopePerSecond: null,
      score: Number.NaN,
      rateNote: 'late window: 2 dumps in 3 ms',
      withinNoise: false,
      hasRate: true,
    };
    const t = VerdictTable.of([flat, odd, flat]);
    expect(t.at(1)).toStrictEqual(odd);
    expect(Object.is(t.at(1).deltaBytes, -0)).toBe(true);
    expect(t.at(1).slopePerSecond).toBe(0);
    expect(t.at(0)).toStrictEqual(flat);
    expect(t.at(0).slopePerSecond).toBeNull();
    expect(t.patternCode(1)).not.toBe(t.patternCode(0));
    // pick: the rows asked, in the order asked
    const picked = t.pick([1, 0]);
    expect(rows(picked)).toStrictEqual([odd, flat]);
    expect(picked.column('firstBytes')).toEqual(new Float64Array([odd.firstBytes, flat.firstBytes]));
  });
});
