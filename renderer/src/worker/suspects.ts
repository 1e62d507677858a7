// The worker's side of the Suspects view: the job-wide ranking (analysis/suspects.ts, computed once per
// loaded job) cut to the top groups, each with its holders' series and σ per snapshot for the sparklines.

import type { Job } from '../../../analysis/model.ts';
import { rankJob, type JobSuspects } from '../../../analysis/suspects.ts';
import type { FrameKind, SuspectMember, SuspectsResult } from '../lib/protocol.ts';

/** Sparklines drawn per group row: the top holders by score (a stack in 64 ranks shows its 4 worst, and a count). */
export const MEMBERS_PER_ROW = 4;

const cache = new WeakMap<Job, JobSuspects>();

export function jobSuspects(job: Job): JobSuspects {
  let r = cache.get(job);
  if (!r) {
    r = rankJob(job);
    cache.set(job, r);
  }
  return r;
}

function seriesOf(job: Job, proc: number, stackId: number): { series: number[]; sigma: number[]; complete: boolean[] } {
  const snaps = job.processes[proc].snapshots;
  const series = new Array<number>(snaps.length).fill(0);
  const variance = new Array<number>(snaps.length).fill(0);
  snaps.forEach((s, j) => {
    const ids = s.stackIds;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] !== stackId) continue;
      series[j] += s.liveBytes[i];
      variance[j] += s.liveVarBytes[i];
    }
  });
  return { series, sigma: variance.map((v) => Math.sqrt(v)), complete: snaps.map((s) => s.complete) };
}

const byStack = new WeakMap<
  JobSuspects,
  Map<number, Map<number, { s: JobSuspects['stacks'][number]; rank: number }>>
>();

/** The ranking entry of one (process, stack), with its job-wide rank (0 = top), or null. */
export function stackVerdict(
  job: Job,
  proc: number,
  stackId: number,
): { s: JobSuspects['stacks'][number]; rank: number } | null {
  const r = jobSuspects(job);
  let m = byStack.get(r);
  if (!m) {
    const built = new Map<number, Map<number, { s: JobSuspects['stacks'][number]; rank: number }>>();
    r.stacks.forEach((s, rank) => {
      let pm = built.get(s.processIndex);
      if (!pm) built.set(s.processIndex, (pm = new Map()));
      pm.set(s.stackId, { s, rank });
    });
    byStack.set(r, built);
    m = built;
  }
  return m.get(proc)?.get(stackId) ?? null;
}

export function suspectsResult(
  job: Job,
  limit: number,
  label: (proc: number, stackId: number) => { label: string; context: string; kind: FrameKind },
): SuspectsResult {
  const r = jobSuspects(job);
  const groups = r.groups.slice(0, limit);
  const want = new Map(groups.map((g) => [g.group, [] as SuspectMember[]]));
  for (const s of r.stacks) {
    const list = want.get(s.group);
    if (!list || list.length >= MEMBERS_PER_ROW) continue;
    const perSecond = s.lateSlopePerSecond !== null;
    list.push({
      proc: s.processIndex,
      pid: s.pid,
      stackId: s.stackId,
      pattern: s.pattern,
      score: s.score,
      deltaBytes: s.deltaBytes,
      lastBytes: s.lastBytes,
      sigmaBytes: s.sigmaBytes,
      withinNoise: s.withinNoise,
      lateRate: perSecond ? (s.lateSlopePerSecond as number) : s.lateSlopePerSnapshot,
      lateRatePerSecond: perSecond,
      ...seriesOf(job, s.processIndex, s.stackId),
    });
  }
  return {
    groupCount: r.groups.length,
    rows: groups.map((g) => {
      const l = label(g.top.processIndex, g.top.stackId);
      return {
        group: g.group,
        pattern: g.pattern,
        score: g.score,
        deltaBytes: g.deltaBytes,
        lastBytes: g.lastBytes,
        sigmaBytes: g.sigmaBytes,
        withinNoise: Math.abs(g.deltaBytes) < 2 * g.sigmaBytes,
        label: l.label,
        context: l.context,
        kind: l.kind,
        members: want.get(g.group) ?? [],
        processCount: g.processIndexes.length,
      };
    }),
    processes: r.processes.map((p) => ({
      proc: p.processIndex,
      topPattern: p.topPattern,
      killed: p.fate.killed,
      evidence: p.fate.evidence,
      lastComplete: p.fate.lastCompleteIndex,
      notes: p.notes,
    })),
  };
}
