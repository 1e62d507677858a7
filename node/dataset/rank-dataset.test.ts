// The suspects ranking of a dataset (SQL first pass, series read only for what can score or is listed) equals
// rankJob's on the dumps of real jemalloc runs: the listed stacks in order with every figure, the groups, and
// each process's top pattern — for listings of several lengths, including ones where a group's top member lies
// outside its process's listed stacks, and for series that end before an exit dump after teardown. A kept group's
// members beyond the listing are classified too: their patterns split the group's change from the others' and their
// rates make the holders' spread (fixtures/watchdog-job at -n 5: a member with another pattern beyond the listing;
// fixtures/jemalloc/job at -n 1: the page summarises three suspects' holders, more groups than listed).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadJob } from '../../core/load/load-job.js';
import { rankJob, type JobSuspects } from '../../core/stats/suspects.js';
import { collectInputFiles } from '../io/node-files.js';
import { listedStacks } from '../../core/query/growth.js';
import { culpritHolders } from '../../core/query/process-groups.js';
import { ingest } from './ingest.js';
import { readDataset } from './read-dataset.js';
import { rankDataset } from './rank-dataset.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const temps: string[] = [];
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

/** What the growth listing shows of a ranking (listedStacks, the first n groups, holders, process verdicts). */
function shown(r: JobSuspects, n: number) {
  return {
    stacks: listedStacks(r, n),
    groups: r.groups.slice(0, n),
    holders: culpritHolders(r),
    groupCount: r.groupCount,
    processes: r.processes.map((p) => ({ ...p, seconds: p.seconds ? [...p.seconds] : null })),
  };
}

describe('rankDataset', () => {
  // fixtures/oom-job: three processes end in an exit dump after teardown, left out of the series in SQL as in memory
  for (const rel of [
    'fixtures/job/dumps',
    'fixtures/jemalloc/job',
    'fixtures/sigma',
    'fixtures/python',
    'fixtures/oom-job/dumps',
    'fixtures/watchdog-job/dumps',
  ]) {
    it(`${rel}: equals rankJob on the dumps for -n 1, 2, 5 and all`, async () => {
      const files = await collectInputFiles([join(ROOT, rel)]);
      const job = await loadJob(files);
      const expected = rankJob(job);
      expect(expected.stacks.length).toBeGreaterThan(0);
      const dir = join(await mkdtemp(join(tmpdir(), 'heaplens-rank-')), 'ds');
      temps.push(dir);
      await ingest(files, dir);
      const bare = await readDataset(dir, { cells: false, onlyStacks: new Map() });
      const sources = bare.job.processes.map((p) => ({ dir, id: bare.ids.get(p)! }));
      for (const n of [1, 2, 5, 1_000_000]) {
        const got = await rankDataset([dir], bare.job, sources, { top: n });
        expect(shown(got, n), `-n ${n}`).toEqual(shown(expected, n));
      }
    });
  }

  it('classifies every stack that scores, and not the others beyond the listing', async () => {
    const files = await collectInputFiles([join(ROOT, 'fixtures/sigma')]);
    const job = await loadJob(files);
    const expected = rankJob(job);
    const dir = join(await mkdtemp(join(tmpdir(), 'heaplens-rank-')), 'ds');
    temps.push(dir);
    await ingest(files, dir);
    const bare = await readDataset(dir, { cells: false, onlyStacks: new Map() });
    const got = await rankDataset(
      [dir],
      bare.job,
      bare.job.processes.map((p) => ({ dir, id: bare.ids.get(p)! })),
      { top: 1 },
    );
    const key = (s: { processIndex: number; stackId: number }) => `${s.processIndex}:${s.stackId}`;
    const classified = new Map(got.stacks.map((s) => [key(s), s]));
    for (const s of expected.stacks) if (s.score > 0) expect(classified.get(key(s))?.score).toBe(s.score);
    // the stacks within sampling noise of no change (most of sigma's call sites) are never read as series
    expect(got.stacks.length).toBeLessThan(expected.stacks.length / 2);
  });
});
