// valgrind massif output from a small C program (fixtures/massif/make-massif-fixture.sh), checked against
// ms_print's report of the same file (stored by the script) and the program's own arithmetic.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from './input-file.js';
import { massifRecords, parseMassif } from './massif.js';
import { loadJob } from '../load/load-job.js';

const DIR = join(FIXTURES, '..', 'massif');
const text = readFileSync(join(DIR, 'massif.out.grow'), 'utf8');
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

/** ms_print's table: n, time, total, useful-heap, extra-heap, stacks. */
const msPrint = [
  ...readFileSync(join(DIR, 'massif.out.grow.ms_print.txt'), 'utf8').matchAll(
    /^\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$/gm,
  ),
].map((m) => m.slice(1).map((v) => Number(v.replace(/,/g, ''))));

describe('massif reader', () => {
  it("every snapshot's heap, extra and stacks equal ms_print's; each tree's leaves sum to its heap", () => {
    const f = parseMassif(text);
    expect(f.problems).toEqual([]);
    expect(f.timeUnit).toBe('i');
    expect(f.cmd).toBe('./grow');
    const byIndex = new Map(msPrint.map((r) => [r[0], r]));
    expect(byIndex.size).toBe(f.snapshots.length);
    for (const s of f.snapshots) {
      const r = byIndex.get(s.index)!;
      expect([
        s.index,
        s.time,
        s.heapBytes + s.heapExtraBytes + s.stacksBytes,
        s.heapBytes,
        s.heapExtraBytes,
        s.stacksBytes,
      ]).toEqual(r);
      if (s.tree !== 'empty') expect(s.stacks.reduce((a, x) => a + x.bytes, 0)).toBe(s.heapBytes);
    }
    // the peak: 20 × 100,000 B from keep_large, 200 × 4,000 B from keep_small, the tiny ones below the threshold
    const peak = f.snapshots.find((s) => s.tree === 'peak')!;
    const fn = (st: (typeof peak.stacks)[number]) => st.frames[0].frame.function;
    expect(peak.stacks.find((st) => fn(st) === 'keep_large')!.bytes).toBe(20 * 100000);
    expect(peak.stacks.find((st) => fn(st) === 'keep_small')!.bytes).toBe(200 * 4000);
    const below = peak.stacks.find((st) => /below massif's threshold/.test(fn(st)))!;
    expect(below.frames).toHaveLength(1);
    expect(below.bytes).toBeGreaterThanOrEqual(300 * 8);
    expect(peak.stacks.find((st) => fn(st) === 'keep_large')!.frames.map((x) => x.frame)).toEqual([
      { function: 'keep_large', file: 'grow.c', line: 13 },
      { function: 'main', file: 'grow.c', line: 20 },
    ]);
    expect(
      massifRecords(peak)
        .records.map((r) => r.counts.liveBytes)
        .reduce((a, b) => a + b),
    ).toBe(peak.heapBytes);
  });

  it('loads as one process whose snapshots are the series, also from each compressed copy', async () => {
    for (const ext of ['', '.gz', '.zst', '.bz2', '.xz']) {
      const b = new Uint8Array(readFileSync(join(DIR, 'massif.out.grow' + ext)));
      const job = await loadJob([mem('massif.out.grow' + ext, b)]);
      expect(job.warnings).toEqual([]);
      expect(job.processes).toHaveLength(1);
      const p = job.processes[0];
      expect(p.snapshots.map((s) => s.live.bytes)).toEqual(msPrint.map((r) => r[3]));
      expect(p.snapshots.map((s) => s.massif?.stacksBytes)).toEqual(msPrint.map((r) => r[5]));
      expect(p.snapshots.map((s) => s.massif?.heapExtraBytes)).toEqual(msPrint.map((r) => r[4]));
      expect(p.snapshots.every((s) => s.format === 'massif')).toBe(true);
      expect([...p.profileSymbols!.values()].flat().some((f) => f.function === 'keep_small')).toBe(true);
    }
  });

  it('a damaged tree (a node no parent expects, a parent whose children never come) is a warning naming the line', () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^ n1: \d+ 0x[0-9A-F]+: keep_large/.test(l));
    const bad = [...lines];
    bad.splice(at + 1, 1, '     n0: 5 0x1: nowhere (x.c:1)'); // a grandchild four levels too deep
    const f = parseMassif(bad.join('\n'));
    expect(f.problems.map((p) => p.line)).toContain(at + 2);
    expect(f.problems.some((p) => /no parent expecting it/.test(p.message))).toBe(true);
    expect(f.problems.some((p) => /ends before all the children it announces|sum to/.test(p.message))).toBe(true);
    const huge = parseMassif('desc: x\ncmd: y\ntime_unit: i\nsnapshot=0\nmem_heap_B=' + '9'.repeat(400) + '\n');
    expect(huge.problems[0]).toMatchObject({ line: 5, message: expect.stringMatching(/400 digits/) });
  });
});
