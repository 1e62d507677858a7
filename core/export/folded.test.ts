// Folded stacks: parse back and sum (against jeprof's totals), root-first order, safe names.
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles, jeprofTotals } from '../../tools/fixtures.js';
import { DEFAULT_VIEW, viewSource } from '../frames/view.js';
import { foldedName, parseFolded, toFolded } from './folded.js';

describe('folded export', () => {
  it("parses back; per process the weights sum to jeprof's total (bytes) and to the object count", async () => {
    const ref = jeprofTotals();
    const job = await loadJob(fixtureFiles('job'));
    for (const p of job.processes) {
      const si = p.snapshots.length - 1;
      const input = { proc: p, snapshotIndex: si, frames: viewSource(p, DEFAULT_VIEW) };
      const lines = parseFolded(toFolded([input]));
      const r = ref.get(p.snapshots[si].file)!;
      const bytes = lines.reduce((a, l) => a + l.weight, 0);
      expect(Math.abs(bytes - r.inuseSpace)).toBeLessThanOrEqual(1);
      const objects = parseFolded(toFolded([input], { measure: 'objects' })).reduce((a, l) => a + l.weight, 0);
      expect(Math.abs(objects - r.inuseObjects)).toBeLessThanOrEqual(1);
      // distinct stacks, one line each, every weight a positive integer
      expect(new Set(lines.map((l) => l.stack.join(';'))).size).toBe(lines.length);
      for (const l of lines) expect(Number.isInteger(l.weight) && l.weight > 0).toBe(true);
    }
  });

  it("root first: the exact run's leak stack starts at the program's entry and ends at the allocation site", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const p = job.processes.find((x) => x.prefix === 'exact')!;
    const frames = viewSource(p, DEFAULT_VIEW);
    const lines = parseFolded(toFolded([{ proc: p, snapshotIndex: p.snapshots.length - 1, frames }]));
    // the stack holding 20 × 3 × 16,384 B (the leak, known pattern) …
    const leak = lines.find((l) => l.weight === 20 * 3 * 16384)!;
    expect(leak).toBeDefined();
    // … has the same frames as the model's stack, reversed (leaf first → root first), allocator frames hidden
    const s = p.snapshots[p.snapshots.length - 1];
    const i = [...s.liveBytes].indexOf(20 * 3 * 16384);
    const id = s.stackIds[i];
    const leafFirst = frames
      .frames(id)
      .filter((f) => f.kind !== 'allocator')
      .map((f) => `${f.module}+${f.moduleOffset}`);
    expect(leak.stack).toEqual([...leafFirst].reverse());
  });

  it('several processes: each stack starts with its process; totals add up', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const inputs = job.processes.map((p) => ({ proc: p, snapshotIndex: 0, frames: viewSource(p, DEFAULT_VIEW) }));
    const lines = parseFolded(toFolded(inputs));
    for (const p of job.processes) {
      const mine = lines.filter((l) => l.stack[0] === `${p.prefix} ${p.pid}`);
      expect(mine.reduce((a, l) => a + l.weight, 0)).toBe(Math.round(p.snapshots[0].live.bytes));
    }
  });

  it('names cannot break the format: separators replaced, newlines and controls shown as <U+XXXX>', () => {
    expect(foldedName('a;b\nc d\u0007\u202e')).toBe('a:b<U+000A>c d<U+0007><U+202E>');
    expect(parseFolded(`${foldedName('x;y')};${foldedName('z\n1')} 5\n`)).toEqual([
      { stack: ['x:y', 'z<U+000A>1'], weight: 5 },
    ]);
  });
});
