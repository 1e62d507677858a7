// The worker's side of the Suspects view: the job-wide ranking (core/stats/suspects.ts, computed once per
// loaded job) cut to the top groups, each with its holders' series and σ per snapshot for the sparklines.

import type { Job } from '../../../core/model/model.ts';
import { rankJob, type JobSuspects, type RankMemo } from '../../../core/stats/suspects.ts';
import type { FrameGroup } from '../../../core/model/vocab.ts';
import type { SuspectMember, SuspectsResult } from '../lib/protocol.ts';

/** Sparklines drawn per group row: the top holders by score (a stack in 64 ranks shows its 4 worst, and a count). */
export const MEMBERS_PER_ROW = 4;

const cache = new WeakMap<Job, JobSuspects>();

// While a job loads, it is ranked again as each process comes in: each process's part of the ranking is kept
// (core/stats/suspects.ts RankMemo), and dropped once the full job is ranked.
let memo: RankMemo | null = null;

/** Whether the jobs ranked from now on are partial ones of a load in progress (keep their processes' parts). */
export function keepPatterns(on: boolean): void {
  if (on) memo ??= new WeakMap();
  keep = on;
}
let keep = false;

export function jobSuspects(job: Job): JobSuspects {
  let r = cache.get(job);
  if (!r) {
    r = rankJob(job, memo ?? undefined);
    if (!keep) memo = null;
    cache.set(job, r);
  }
  return r;
}

/**
 * The series and σ per snapshot of the given (process, stack) pairs: one pass over each process's snapshots
 * (a pass per pair was most of the ranking's time on a job of 16 × 100 dumps of 5,000 stacks).
 */
function seriesOf(
  job: Job,
  wanted: readonly { proc: number; stackId: number }[],
): { series: number[]; sigma: number[]; complete: boolean[] }[] {
  const out = wanted.map(() => ({ series: [] as number[], sigma: [] as number[], complete: [] as boolean[] }));
  const byProc = new Map<number, Map<number, number>>();
  wanted.forEach((w, k) => {
    let m = byProc.get(w.proc);
    if (!m) byProc.set(w.proc, (m = new Map()));
    m.set(w.stackId, k);
  });
  byProc.forEach((slots, proc) => {
    const snaps = job.processes[proc].snapshots;
    const ks = [...slots.values()];
    for (const k of ks) {
      out[k].series = new Array<number>(snaps.length).fill(0);
      out[k].sigma = new Array<number>(snaps.length).fill(0);
      out[k].complete = snaps.map((s) => s.complete);
    }
    snaps.forEach((s, j) => {
      const ids = s.stackIds;
      for (let i = 0; i < ids.length; i++) {
        const k = slots.get(ids[i]);
        if (k === undefined) continue;
        out[k].series[j] += s.liveBytes[i];
        out[k].sigma[j] += s.liveVarBytes[i];
      }
    });
    for (const k of ks) out[k].sigma = out[k].sigma.map((v) => Math.sqrt(v));
  });
  return out;
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
  label: (proc: number, stackId: number) => { label: string; context: string; group: FrameGroup },
): SuspectsResult {
  const r = jobSuspects(job);
  const groups = r.groups.slice(0, limit);
  const want = new Map(groups.map((g) => [g.group, [] as SuspectMember[]]));
  const picked: { member: Omit<SuspectMember, 'series' | 'sigma' | 'complete'>; list: SuspectMember[] }[] = [];
  const count = new Map<number, number>();
  for (const s of r.stacks) {
    const list = want.get(s.group);
    const n = count.get(s.group) ?? 0;
    if (!list || n >= MEMBERS_PER_ROW) continue;
    count.set(s.group, n + 1);
    const perSecond = s.lateSlopePerSecond !== null;
    picked.push({
      list,
      member: {
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
      },
    });
  }
  const series = seriesOf(
    job,
    picked.map((p) => p.member),
  );
  picked.forEach((p, k) => p.list.push({ ...p.member, ...series[k] }));
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
        frameGroup: l.group,
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
