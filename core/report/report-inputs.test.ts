import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { reportInputs } from './report-inputs.js';

describe('reportInputs: the one builder behind the CLI report (names) and the app report (its selection)', () => {
  it('the app’s selection by index and the CLI’s by sequence number choose the same snapshots', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.findIndex((p) => p.prefix === 'exact');
    const p = job.processes[exact];
    // the fixture's exact process: 21 dumps numbered 0…20 (fixtures/job), so index k is seq k
    const byName = reportInputs(job, { sample: 'inuse_space', base: '3', target: '17' });
    const byIndex = reportInputs(job, {
      sample: 'inuse_space',
      selected: { process: p.key, base: 3, target: 17 },
    });
    const ends = (r: typeof byName) => r.inputs.filter((x) => x.proc.key === p.key).map((x) => [x.base, x.target]);
    expect(ends(byName)).toEqual([[3, 17]]);
    expect(ends(byIndex)).toEqual([[3, 17]]);
    // the app names one process's ends; the others stay first → last (no ends given)
    expect(byIndex.inputs.filter((x) => x.proc.key !== p.key).every((x) => x.base === undefined)).toBe(true);
  });

  it('keeps the processes asked for, in that order, and says so when one lacks the sample’s values', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const r = reportInputs(job, { sample: 'inuse_space', processes: [2, 0] });
    expect(r.kept).toEqual([2, 0]);
    expect(r.inputs.map((x) => x.proc.key)).toEqual([job.processes[2].key, job.processes[0].key]);
    // jemalloc dumps carry no allocation totals for pprof's alloc_* of a live-only profile: either the values, or a
    // warning naming the process; never a silent empty column
    const a = reportInputs(job, { sample: 'alloc_space' });
    expect(a.inputs.length + a.warnings.length).toBe(job.processes.length);
    for (const w of a.warnings) expect(job.processes.map((q) => q.key)).toContain(w.file);
    // objects: the report's byte columns hold the counts, which are the dumps' own object totals
    const o = reportInputs(job, { sample: 'inuse_objects' });
    for (const x of o.inputs) {
      const orig = job.processes.find((q) => q.key === x.proc.key)!;
      expect(x.proc.snapshots.map((s) => s.live.bytes)).toEqual(orig.snapshots.map((s) => s.live.objects));
    }
  });
});
