// The Suspects view of a job still loading (core/query/load-ranking.ts): on every job so far of the fixture jobs
// (their first k processes, as a load shows them), the answer made from the groups that can be first is the answer
// of the whole ranking of the same processes (rankJob, counted through a module mock, in a session that opened them
// as a job), and no whole ranking is made for it. fixtures/job has 146 groups of which one scores: the rows after
// it are ordered by change, bytes at the end and load order, which the groups' sums must follow too.
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { JOB_FIXTURE, jobFiles } from '../../fixtures/job/job-fixture.js';
import type { InputFile } from '../formats/input-file.js';

const calls = vi.hoisted(() => ({ n: 0 }));
vi.mock('../stats/suspects.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../stats/suspects.js')>();
  return {
    ...orig,
    rankJob: (...a: Parameters<typeof orig.rankJob>) => {
      calls.n++;
      return orig.rankJob(...a);
    },
  };
});

const { loadJob } = await import('../load/load-job.js');
const { QuerySession } = await import('./session.js');
const { suspectsResult } = await import('./suspects.js');
const { LoadRanking } = await import('./load-ranking.js');
const { RankMemo, rankJob } = await import('../stats/suspects.js');

const VIEW = { mode: 'python-first', hideAllocator: true } as const;

describe("a loading job's suspects from the groups that can be first", () => {
  it.each([
    ['fixtures/job', async (): Promise<InputFile[]> => jobFiles()],
    ['fixtures/two-node-job', () => collectInputFiles([join(JOB_FIXTURE, '..', 'two-node-job')])],
  ])('%s: each job so far, as its whole ranking lists it', async (_name, files) => {
    const job = await loadJob(await files());
    expect(job.processes.length).toBeGreaterThan(2);
    const loading = new QuerySession();
    for (let k = 1; k <= job.processes.length; k++) {
      const processes = job.processes.slice(0, k);
      // as core/engine/progressive-load.ts: each process ranked ahead as it is read whole, then shown
      loading.rankAhead(processes[k - 1]);
      loading.showPartial(processes, job.warnings, null, 0);
      const whole = new QuerySession();
      whole.open({ processes, warnings: [], ignoredFiles: [] });
      for (const rows of [1, 3, 16]) {
        calls.n = 0;
        const got = suspectsResult(loading, rows, VIEW);
        expect(calls.n).toBe(0);
        expect(got).toEqual(suspectsResult(whole, rows, VIEW));
      }
    }
    // the whole job's own ranking once the load ends
    calls.n = 0;
    loading.finishLoad(job, { loadMs: 0, bytesTotal: 0, waitMs: 0 });
    const full = suspectsResult(loading, 200, VIEW);
    const fresh = new QuerySession();
    fresh.open(job);
    expect(suspectsResult(fresh, 200, VIEW)).toEqual(full);
  });

  it('a chip narrows the whole ranking of the job so far', async () => {
    const job = await loadJob(jobFiles());
    const loading = new QuerySession();
    for (const p of job.processes) loading.rankAhead(p);
    loading.showPartial(job.processes, job.warnings, null, 0);
    const view = { ...VIEW, filters: [{ kind: 'ignore' as const, re: 'numpy' }] };
    calls.n = 0;
    const got = suspectsResult(loading, 16, view);
    expect(calls.n).toBe(1);
    const whole = new QuerySession();
    whole.open({ processes: job.processes, warnings: [], ignoredFiles: [] });
    expect(got).toEqual(suspectsResult(whole, 16, view));
  });

  it("cut to its first group alone: its row, the group count and every process's verdict are the whole ranking's", async () => {
    const job = await loadJob(jobFiles());
    const whole = rankJob(job);
    const cut = new LoadRanking(new RankMemo()).top(job, 1, 0);
    expect(cut?.groupCount).toBe(whole.groupCount);
    expect(cut?.ranking.groups).toEqual(whole.groups.slice(0, 1));
    expect(cut?.ranking.stacks).toEqual(whole.stacks.filter((s) => s.group === 0));
    expect(cut?.ranking.processes).toEqual(whole.processes);
  });
});
