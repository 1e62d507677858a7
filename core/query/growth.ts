// What `heaplens growth` (and the suspects of `heaplens postmortem`) list, answered once: the job-wide ranking of
// core/stats/suspects.ts cut to the rows a command shows — each process's top n stacks in job-wide order, the top
// n groups with the first-ranked member's late rate — each with its frames in the view, and the JSON facts of
// both (docs/cli-json.md). Text is the front-end's.

import type { Job } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { Frame } from '../frames/describe.js';
import { processViewer, visibleFrames, type StackViewer } from '../frames/view.js';
import { processFacts } from './summary.js';
import { processHost } from '../model/process-host.js';
import { rankJob, type JobSuspects, type StackSuspect, type SuspectGroup } from '../stats/suspects.js';

export interface GrowthStack {
  suspect: StackSuspect;
  /** the frames shown for it: the view's surviving frames (folded ones left out), allocator frames as the view says */
  frames: Frame[];
}

export interface GrowthGroup {
  group: SuspectGroup;
  /** the group's first member in the job-wide order (its late rate is the group's) */
  first: StackSuspect;
  /** the frames of the group's representative (its top member) */
  frames: Frame[];
}

export interface GrowthAnswer {
  ranking: JobSuspects;
  /** each process's top n stacks, in job-wide order */
  stacks: GrowthStack[];
  /** the first n groups */
  groups: GrowthGroup[];
}

/** The stacks to list: each process's top n, then in job-wide order. */
export function listedStacks(r: JobSuspects, n: number): StackSuspect[] {
  const taken = new Map<number, number>();
  return r.stacks.filter((s) => {
    const k = taken.get(s.processIndex) ?? 0;
    if (k >= n) return false;
    taken.set(s.processIndex, k + 1);
    return true;
  });
}

/** Which stacks' frames the listing needs, per process index: a ranking done without frames (a dataset) reads only these. */
export function listedStackIds(r: JobSuspects, n: number): Map<number, number[]> {
  const wanted = new Map<number, number[]>();
  const want = (pi: number, stackId: number) => {
    const list = wanted.get(pi) ?? [];
    list.push(stackId);
    wanted.set(pi, list);
  };
  for (const s of listedStacks(r, n)) want(s.processIndex, s.stackId);
  for (const g of r.groups.slice(0, n)) want(g.top.processIndex, g.top.stackId);
  return wanted;
}

/**
 * The growth listing of a job in a view: `ranked` when the ranking was done elsewhere (SQL over a dataset), else
 * rankJob. Viewers are made per process on first use (each caches its symbolized frames).
 */
export function growthQuery(job: Job, view: ViewOptions, top: number, ranked?: JobSuspects): GrowthAnswer {
  const r = ranked ?? rankJob(job);
  const viewers = new Map<number, StackViewer>();
  const frames = (pi: number, stackId: number): Frame[] => {
    let v = viewers.get(pi);
    if (!v) {
      v = processViewer(job.processes[pi], view);
      viewers.set(pi, v);
    }
    return visibleFrames(v(stackId)?.frames ?? [], view.hideAllocator);
  };
  const firstOfGroup = new Map<number, StackSuspect>();
  for (const s of r.stacks) if (!firstOfGroup.has(s.group)) firstOfGroup.set(s.group, s);
  return {
    ranking: r,
    stacks: listedStacks(r, top).map((s) => ({ suspect: s, frames: frames(s.processIndex, s.stackId) })),
    groups: r.groups.slice(0, top).map((g) => ({
      group: g,
      first: firstOfGroup.get(g.group)!,
      frames: frames(g.top.processIndex, g.top.stackId),
    })),
  };
}

/** JSON has no infinity: an exact (unsampled) non-zero change has z = ±∞, written as a string. */
function jsonNumber(z: number): number | string {
  return Number.isFinite(z) ? z : z > 0 ? 'Infinity' : '-Infinity';
}

/** A listed stack as the JSON shows it (`growth --json` and `postmortem --json` "stacks"). */
export function stackFacts(job: Pick<Job, 'processes'>, { suspect: s, frames }: GrowthStack) {
  return {
    pid: s.pid,
    host: processHost(job.processes[s.processIndex]),
    process: s.process,
    stackId: s.stackId,
    pattern: s.pattern,
    ...(s.note ? { note: s.note } : {}),
    score: s.score,
    firstBytes: s.firstBytes,
    lastBytes: s.lastBytes,
    peakBytes: s.peakBytes,
    deltaBytes: s.deltaBytes,
    sigmaBytes: s.sigmaBytes,
    sigmaDeltaBytes: s.sigmaDeltaBytes,
    z: jsonNumber(s.z),
    withinNoise: s.withinNoise,
    // a series too short to carry a rate has none (null), with the reason (core/stats/patterns.ts rateBasis)
    slopeBytesPerSnapshot: s.hasRate ? s.slopePerSnapshot : null,
    slopeBytesPerSecond: s.slopePerSecond,
    lateSlopeBytesPerSnapshot: s.hasRate ? s.lateSlopePerSnapshot : null,
    lateSlopeBytesPerSecond: s.lateSlopePerSecond,
    ...(s.rateNote ? { rateNote: s.rateNote } : {}),
    lateZ: jsonNumber(s.lateZ),
    points: s.points,
    group: s.group,
    groupProcesses: s.groupProcesses,
    frames,
  };
}

/** A listed group as the JSON shows it ("groups"). */
export function groupFacts(job: Pick<Job, 'processes'>, { group: g, frames }: GrowthGroup) {
  return {
    group: g.group,
    processes: g.processes,
    /** the hosts of the group's holders, beside their pids */
    hosts: g.processIndexes.map((i) => processHost(job.processes[i])),
    pattern: g.pattern,
    score: g.score,
    // the change of the holders that share the group's pattern; the others' apart (core/stats/suspects.ts)
    deltaBytes: g.deltaBytes,
    patternProcesses: g.patternProcessIndexes.map((i) => job.processes[i].pid),
    others: {
      processes: g.others.processIndexes.map((i) => job.processes[i].pid),
      deltaBytes: g.others.deltaBytes,
      patterns: g.others.patterns,
    },
    lastBytes: g.lastBytes,
    sigmaBytes: g.sigmaBytes,
    members: g.members,
    top: {
      pid: job.processes[g.top.processIndex].pid,
      host: processHost(job.processes[g.top.processIndex]),
      process: job.processes[g.top.processIndex].key,
      stackId: g.top.stackId,
    },
    frames,
  };
}

/** `heaplens growth --json` without its warnings: every process, the listed stacks and groups. */
export function growthFacts(job: Job, a: GrowthAnswer) {
  return {
    processes: job.processes.map((p, i) => ({
      ...processFacts(p, job),
      snapshots: p.snapshots.length,
      topPattern: a.ranking.processes[i].topPattern,
      notes: a.ranking.processes[i].notes,
    })),
    stacks: a.stacks.map((s) => stackFacts(job, s)),
    groups: a.groups.map((g) => groupFacts(job, g)),
  };
}
