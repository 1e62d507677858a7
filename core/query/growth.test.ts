// core/query/growth.ts on the real job fixture (fixtures/job): what `heaplens growth` and `postmortem` list. The
// expected leak (its call site, its pattern, which processes leak) is the workload's own plan (expected.json).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { growthQuery, listedStackIds } from './growth.js';
import { expectedJob, jobFiles, type ExpectedJob } from '../../fixtures/job/job-fixture.js';

let job: Job;
let expected: ExpectedJob;
beforeAll(async () => {
  job = await loadJob(jobFiles());
  expected = expectedJob();
}, 120_000);

describe('core/query growth on fixtures/job', () => {
  it("the first group is the workload's leak: its call site, steady, in exactly the processes that leak", () => {
    const a = growthQuery(job, { mode: 'python', hideAllocator: true }, 3);
    const g = a.groups[0];
    const leaf = g.frames.find((f) => f.kind === 'python')!;
    const leak = expected.sites.leak;
    expect([leaf.function, leaf.line]).toEqual([leak.function, leak.line]);
    expect(g.group.pattern).toBe('steady');
    const plan = expected.plan.leakPerStep as Record<string, number>;
    const leaking = expected.processes.filter((p) => (plan[p.role] ?? 0) > 0).map((p) => p.pid);
    expect([...g.group.processes].sort()).toEqual(leaking.sort());
  });

  it('lists each process’s top n in job-wide order; a group’s late rate is its first-ranked member’s', () => {
    const n = 4;
    const a = growthQuery(job, { mode: 'python', hideAllocator: true }, n);
    const order = new Map(a.ranking.stacks.map((s, i) => [s, i]));
    const at = a.stacks.map((s) => order.get(s.suspect)!);
    expect(at).toEqual([...at].sort((x, y) => x - y));
    for (let pi = 0; pi < job.processes.length; pi++) {
      const mine = a.ranking.stacks.filter((s) => s.processIndex === pi);
      expect(a.stacks.filter((s) => s.suspect.processIndex === pi).map((s) => s.suspect)).toEqual(mine.slice(0, n));
    }
    expect(a.groups.map((g) => g.group)).toEqual(a.ranking.groups.slice(0, n));
    for (const g of a.groups) expect(a.ranking.stacks.find((s) => s.group === g.group.group)).toBe(g.first);
    // what a dataset reads for the listing: the listed stacks and each group's representative, no more
    const ids = listedStackIds(a.ranking, n);
    const want = new Set([
      ...a.stacks.map((s) => `${s.suspect.processIndex}:${s.suspect.stackId}`),
      ...a.groups.map((g) => `${g.group.top.processIndex}:${g.group.top.stackId}`),
    ]);
    expect(new Set([...ids].flatMap(([pi, list]) => list.map((id) => `${pi}:${id}`)))).toEqual(want);
  });
});
