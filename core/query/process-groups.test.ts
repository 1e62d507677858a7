// core/query/process-groups.ts on a generated job (bench/generate-series.mjs): 60 processes over 3 hosts, every
// process growing two stacks by 5 objects a dump, 3 of them (processes 0, 20 and 40: the generator's `outliers`)
// ten times as fast. Expected from the generator's own arithmetic: 20 processes per host (contiguous blocks, pids
// 1000…1019 on each), every process grows, the 3 fast ones are the outliers and hold the first suspects.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { rankJob, type JobSuspects } from '../stats/suspects.js';
import { killEvidence } from '../stats/kill-evidence.js';
import { processEnds } from '../stats/fates.js';
import {
  culpritHolders,
  groupProcesses,
  highOutliers,
  holderSummary,
  processPage,
  processPoints,
  spread,
  type ProcessPoint,
} from './process-groups.js';

const PROCESSES = 60;
const HOSTS = 3;
const OUTLIERS = 3;
const PER_HOST = PROCESSES / HOSTS;
// the generator's fast processes: every P/outliers-th, from 0
const FAST = Array.from({ length: OUTLIERS }, (_, k) => k * (PROCESSES / OUTLIERS));
const hostOf = (p: number) => `node-${String(Math.floor(p / PER_HOST)).padStart(2, '0')}`;
const pidOf = (p: number) => 1000 + (p % PER_HOST);

let dir = '';
let job: Job;
let r: JobSuspects;
let points: ProcessPoint[];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'heaplens-groups-'));
  const generator = '../../bench/generate-series.mjs';
  const mod: unknown = await import(/* @vite-ignore */ generator);
  const { writeSeries } = mod as { writeSeries: (d: string, o: object) => number };
  writeSeries(dir, {
    processes: PROCESSES,
    snapshots: 8,
    stacks: 40,
    deep: true,
    hosts: HOSTS,
    growing: 2,
    outliers: OUTLIERS,
  });
  job = await loadJob(await collectInputFiles([dir]));
  r = rankJob(job);
  points = processPoints(job, r, processEnds(job, killEvidence(job)).ends);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The generator's process number of a process: from its host and pid. */
const generated = (pi: number) => {
  const p = points[pi];
  return Number(/\d+$/.exec(p.host ?? '')?.[0]) * PER_HOST + (job.processes[pi].pid as number) - 1000;
};

describe('process groups of a generated job of 60 processes on 3 hosts', () => {
  it('groups the processes by host, 20 a host, each process once', () => {
    const groups = groupProcesses(points);
    expect(groups.map((g) => [g.host, g.processIndexes.length])).toEqual(
      Array.from({ length: HOSTS }, (_, h) => [hostOf(h * PER_HOST), PER_HOST]),
    );
    for (const g of groups) {
      expect(g.command).toBe('python3.12 train.py');
      for (const pi of g.processIndexes) {
        expect(hostOf(generated(pi))).toBe(g.host);
        expect(pidOf(generated(pi))).toBe(job.processes[pi].pid);
      }
      // by growth, most first; the spread is of those figures
      const gs = g.processIndexes.map((pi) => points[pi].growth);
      expect(gs).toEqual([...gs].sort((a, b) => b - a));
      expect(g.growth.max).toBe(gs[0]);
      // no final dump in any process and no log: every end "unknown" (core/stats/fates.ts), counted
      expect(g.fates).toEqual([{ fate: 'unknown', count: PER_HOST }]);
    }
    expect(new Set(groups.flatMap((g) => g.processIndexes)).size).toBe(PROCESSES);
  });

  it('every process grows; the fast ones are the outliers of growth', () => {
    for (const p of points) expect(p.growth, `${p.host}:${job.processes[p.processIndex].pid}`).toBeGreaterThan(0);
    const page = processPage(points, culpritHolders(r));
    expect(page.outliers.map(generated).sort((a, b) => a - b)).toEqual(FAST);
    // ten times the growth: each fast process grows more than any slow one
    const slow = points.filter((p) => !FAST.includes(generated(p.processIndex))).map((p) => p.growth);
    for (const pi of page.outliers) expect(points[pi].growth).toBeGreaterThan(Math.max(...slow));
  });

  it('lists the first suspects’ top holders and the outliers, the rest counted by host and fate', () => {
    const page = processPage(points, culpritHolders(r));
    // the first suspect is a fast process's growing stack
    expect(FAST).toContain(generated(r.groups[0].top.processIndex));
    const listed = page.listed.map((l) => l.processIndex);
    for (const pi of page.outliers) expect(listed).toContain(pi);
    expect(page.listed.length).toBeLessThanOrEqual(12);
    const counted = page.rest.reduce((n, g) => n + g.count, 0);
    expect(counted + page.listed.length).toBe(PROCESSES);
    expect(page.fates).toHaveLength(1);
    expect(page.fates[0]).toMatchObject({ fate: 'unknown', count: PROCESSES, withEvidence: 0 });
    expect(page.fates[0].groups.map((g) => g.count)).toEqual([PER_HOST, PER_HOST, PER_HOST]);
  });

  it("summarises a suspect's holders: one per host (the same pid's stack on each), their rates' spread", () => {
    // a stack's frames are the generator's of (stack, pid): the same pid on each host holds the same stack
    const g = r.groups[0];
    const h = holderSummary(r, g);
    expect(h.holders).toBe(HOSTS);
    expect(new Set(g.processIndexes.map((pi) => job.processes[pi].pid)).size).toBe(1);
    expect(h.rates.n).toBe(HOSTS);
    expect(h.rates.min).toBeLessThanOrEqual(h.rates.median);
    expect(h.rates.median).toBeLessThanOrEqual(h.rates.max);
    expect(h.top[0]).toBe(g.top.processIndex);
  });
});

describe('spread and outliers', () => {
  it('quantiles by linear interpolation between ranks', () => {
    expect(spread([5, 1, 3, 2, 4])).toEqual({ n: 5, min: 1, median: 3, p90: 4.6, max: 5 });
    expect(spread([])).toEqual({ n: 0, min: 0, median: 0, p90: 0, max: 0 });
  });
  it('flags the high side only, and nothing among equal figures with noise', () => {
    expect(highOutliers([10, 11, 9, 10, 100, 10, 1])).toEqual([4]);
    expect(highOutliers([10, 10, 10, 10, 10])).toEqual([]);
    expect(highOutliers([10, 10, 10, 10, 25])).toEqual([4]);
    expect(highOutliers([10, 12, 9, 11, 13, 8, 10])).toEqual([]);
  });
});
