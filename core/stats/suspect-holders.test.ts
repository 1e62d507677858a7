// A Suspects row's Δ counts the holders that share its pattern (a steady row: its steady holders), the others
// shown apart; "what grew" names each culprit's pattern and the verdict leaves one-time steps out of "the growth
// that filled it" (issue 44 item 5). On real jobs, against the workloads' plans: fixtures/job (a leak planted in
// rollout-0 and rollout-2, weights loaded once by the trainer and inherited flat by the forked rollouts, a one-time
// optimizer step) and fixtures/oom-job (the dataset loaded by the trainer, inherited by its forked loaders, which
// allocate nothing of their own there).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { rankJob, type JobSuspects, type SuspectGroup } from './suspects.js';
import { postmortemQuery } from '../query/postmortem.js';
import { readPostmortemView, viewOf } from '../query/postmortem-view.js';
import { stackFrameLabels } from './verdict.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { expectedJob, jobFiles, type ExpectedJob } from '../../fixtures/job/job-fixture.js';
import { runCaptured } from '../../node/cli/run-captured.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The group whose top stack's first frame is `fn` (function name of the call site). */
const groupOf = (job: Job, r: JobSuspects, fn: string): SuspectGroup[] =>
  r.groups.filter((g) => stackFrameLabels(job, g.top.processIndex, g.top.stackId)[0]?.startsWith(`${fn} `));

describe('fixtures/job: the leak, the inherited weights, the one-time step', () => {
  let job: Job;
  let e: ExpectedJob;
  let r: JobSuspects;
  beforeAll(async () => {
    job = await loadJob(jobFiles());
    e = expectedJob();
    r = rankJob(job);
  }, 120_000);
  const pidsOf = (idx: readonly number[]) => idx.map((i) => job.processes[i].pid).sort();
  const roles = (pred: (role: string) => boolean) =>
    e.processes
      .filter((p) => pred(p.role))
      .map((p) => p.pid)
      .sort();

  it("the leak's row counts the rollouts the plan makes leak; the weights' row the trainer that loaded them", () => {
    const plan = JSON.parse(readFileSync(join(ROOT, 'fixtures/job/expected.json'), 'utf8')).plan as {
      leakPerStep: Record<string, number>;
    };
    const [leak] = groupOf(job, r, 'cache_episode_observations');
    expect(leak.pattern).toBe('steady');
    expect(pidsOf(leak.patternProcessIndexes)).toEqual(roles((role) => (plan.leakPerStep[role] ?? 0) > 0));
    expect(leak.others.processIndexes).toEqual([]);
    // the weights: loaded by the trainer (its first dump saw them loading: a step there), inherited at fork by the
    // rollouts, which never allocate them (flat, no change): the row's Δ is the trainer's alone
    const [weights] = groupOf(job, r, 'load_model_weights');
    const trainer = e.processes.find((p) => p.role === 'trainer')!.pid;
    expect(pidsOf(weights.patternProcessIndexes)).toEqual([trainer]);
    const trainerMember = r.stacks.find((s) => s.group === weights.group && s.pid === trainer)!;
    expect(weights.deltaBytes).toBe(trainerMember.deltaBytes);
    const forked = roles((role) => role.startsWith('rollout'));
    expect(pidsOf(weights.others.processIndexes)).toEqual(forked);
    expect(weights.others.patterns).toEqual(['flat']);
    expect(weights.others.deltaBytes).toBe(0);
  });

  it('"what grew" prints each pattern; the verdict names the leak and leaves the optimizer\'s one-time step out', async () => {
    const q = postmortemQuery(job);
    const step = q.culprits.find((c) => c.site.startsWith('init_optimizer_state '))!;
    expect(step.pattern).toBe('step');
    expect(q.verdict).toContain('cache_episode_observations');
    expect(q.verdict).not.toContain('init_optimizer_state');
    // the app's "what grew" (and a report's, read back) carries each pattern
    const view = readPostmortemView(JSON.parse(JSON.stringify(viewOf(q))), job.processes.length)!;
    expect(view.culprits.find((c) => c.site === step.site)!.pattern).toBe('step');
    const out = (await runCaptured('postmortem', join(ROOT, 'fixtures/job'))).out;
    const grew = out.slice(out.indexOf('what grew'), out.indexOf('\n\n', out.indexOf('what grew')));
    expect(grew).toMatch(/steady\s+cache_episode_observations/);
    expect(grew).toMatch(/step \(one-time\)\s+init_optimizer_state/);
  }, 120_000);
});

describe('fixtures/oom-job: the dataset the loaders inherited', () => {
  it("each load_dataset row's Δ is the trainer's; the loaders are apart, flat, with no change", async () => {
    const job = await loadJob(await collectInputFiles([join(ROOT, 'fixtures/oom-job/dumps')]));
    const e = JSON.parse(readFileSync(join(ROOT, 'fixtures/oom-job/expected.json'), 'utf8')) as {
      trainer: { pid: number };
      processes: { role: string; pid: number }[];
    };
    const r = rankJob(job);
    // the rows the loaders hold too (the floats and the list that holds them)
    const rows = groupOf(job, r, 'load_dataset').filter((g) => g.processIndexes.length > 1);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const loaders = e.processes
      .filter((p) => p.role.startsWith('loader'))
      .map((p) => p.pid)
      .sort();
    for (const g of rows) {
      expect(g.patternProcessIndexes.map((i) => job.processes[i].pid)).toEqual([e.trainer.pid]);
      expect(g.others.processIndexes.map((i) => job.processes[i].pid).sort()).toEqual(loaders);
      expect(g.others.deltaBytes).toBe(0);
      const t = r.stacks.find((s) => s.group === g.group && s.pid === e.trainer.pid)!;
      expect(g.deltaBytes).toBe(t.deltaBytes);
    }
  }, 120_000);
});
