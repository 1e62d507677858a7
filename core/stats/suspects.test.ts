import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { rankAhead, rankInputOf, rankJob, rankSuspects, RankMemo } from './suspects.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { JOB_FIXTURE } from '../../fixtures/job/job-fixture.js';

describe('job-wide ranking on the jemalloc job folder (two runs of leaky.c and grow.py)', () => {
  it("stacks are sorted by score across processes; leaky's leak is one group over both runs", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const r = rankJob(job);
    for (let i = 1; i < r.stacks.length; i++) expect(r.stacks[i - 1].score).toBeGreaterThanOrEqual(r.stacks[i].score);
    for (let i = 1; i < r.groups.length; i++) expect(r.groups[i - 1].score).toBeGreaterThanOrEqual(r.groups[i].score);
    const exact = job.processes.findIndex((p) => p.prefix === 'exact');
    const sampled = job.processes.findIndex((p) => p.prefix === 'sampled');
    // the leak of the exact run (3 × 16 KiB per dump) and the sampled run's top grower share a group
    const leakE = r.stacks.find((s) => s.processIndex === exact && s.pattern === 'steady')!;
    const leakS = r.stacks.find((s) => s.processIndex === sampled && s.pattern === 'steady')!;
    expect(leakE.group).toBe(leakS.group);
    const g = r.groups[leakE.group];
    expect(g.processIndexes).toEqual([exact, sampled].sort((a, b) => a - b));
    expect(g.processes).toEqual(g.processIndexes.map((i) => job.processes[i].pid));
    expect(leakE.groupProcesses).toBe(2);
    expect(g.pattern).toBe('steady');
    expect(g.score).toBeCloseTo(leakE.score + leakS.score, 6);
    // plateau and worker: flat in both runs, one group each, score 0
    const flatGroups = r.groups.filter((x) => x.processIndexes.length === 2 && x.pattern === 'flat');
    expect(flatGroups.length).toBeGreaterThanOrEqual(2);
    for (const x of flatGroups) expect(x.score).toBe(0);
    // grow.py's buffer is its own group, in one process
    const py = r.stacks.find((s) => job.processes[s.processIndex].prefix === 'pygrow')!;
    expect(py.pattern).toBe('steady');
    expect(py.groupProcesses).toBe(1);
    // group index = rank
    r.groups.forEach((x, i) => expect(x.group).toBe(i));
  });

  it("each process's top pattern and fate: the exact run exited (final dump), the two without one were killed", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const r = rankJob(job);
    for (const p of r.processes) {
      const proc = job.processes[p.processIndex];
      expect(p.topPattern).toBe('steady');
      expect(p.fate.killed, proc.prefix).toBe(proc.prefix !== 'exact');
      expect(p.fate.lastCompleteSeq).toBe(proc.snapshots[proc.snapshots.length - 1].seq);
    }
  });

  it('ranked again as the job grows process by process (a memo, as the app does while loading): the same as at once', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const memo = new RankMemo();
    // prefixes of the processes, in load order, each ranked with the memo of the ones before
    for (let n = 1; n < job.processes.length; n++) rankJob({ processes: job.processes.slice(0, n) }, memo);
    const grown = structuredClone(rankJob(job, memo));
    const fresh = structuredClone(rankJob(job));
    expect(grown).toEqual(fresh);
  });

  it("grouped by the memo's key numbers and row verdicts, the ranking is the one by key strings and stack ids", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const memo = new RankMemo();
    const inputs = job.processes.map((p) => rankInputOf(p, memo));
    expect(inputs.every((x) => x.byRow?.keys === memo.keys)).toBe(true);
    // a dataset's input has neither: keys as strings, verdicts by stack id
    const plain = inputs.map(({ byRow, ...rest }) => ({
      ...rest,
      verdicts: new Map(
        Array.from({ length: byRow!.verdicts.length }, (_, r) => byRow!.verdicts.at(r)).map((v) => [v.stackId, v]),
      ),
    }));
    expect(structuredClone(rankSuspects(job, inputs))).toEqual(structuredClone(rankSuspects(job, plain)));
    // inputs of two memos (two tables) are grouped by their strings
    const other = rankInputOf(job.processes[0], new RankMemo());
    expect(structuredClone(rankSuspects(job, [other, ...inputs.slice(1)]))).toEqual(
      structuredClone(rankSuspects(job, plain)),
    );
  });
});

describe('a job ranked ahead process by process as it loads (rankAhead), then whole', () => {
  it.each(['job', 'oom-job', 'two-node-job'])('%s: the ranking at its end is the one made at once', async (name) => {
    const job = await loadJob(await collectInputFiles([join(JOB_FIXTURE, '..', name)]));
    const memo = new RankMemo();
    for (const p of job.processes) rankAhead(p, memo);
    const ahead = structuredClone(rankJob(job, memo));
    const fresh = structuredClone(rankJob(job));
    expect(ahead).toEqual(fresh);
    expect(ahead.stacks.length).toBeGreaterThan(30);
  });
});
