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

/**
 * The ranking entry of one (process, stack), with its rank among every process's stacks (0 = top) and the score
 * of its Suspects row (the stack summed over the processes that hold it), or null.
 */
export function stackVerdict(
  job: Job,
  proc: number,
  stackId: number,
): { s: JobSuspects['stacks'][number]; rank: number; rowScore: number } | null {
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
  const hit = m.get(proc)?.get(stackId);
  // the Suspects row's score: the group's (s.group is its rank; rankJob keeps every group, in rank order)
  return hit ? { ...hit, rowScore: r.groups[hit.s.group]?.score ?? hit.s.score } : null;
}

/**
 * The top `limit` groups of the ranking with their holders' series. `keep` is the view's filters (focus/ignore
 * chips, search): a group is listed when any of its stacks passes them, and its figures are those of the stacks
 * that pass, so a filter narrows the ranking as it narrows every other view.
 */
export function suspectsResult(
  job: Job,
  limit: number,
  label: (proc: number, stackId: number) => { label: string; context: string; group: FrameGroup; site: string | null },
  keep: (proc: number, stackId: number) => boolean = () => true,
): SuspectsResult {
  const r = jobSuspects(job);
  // each group's late rate: the sum over its holders that pass the filters, per second only when all are
  const rate = new Map<number, { sum: number; perSecond: boolean }>();
  const passing = new Set<number>();
  for (const s of r.stacks) {
    if (!keep(s.processIndex, s.stackId)) continue;
    passing.add(s.group);
    const perSecond = s.lateSlopePerSecond !== null;
    const v = perSecond ? (s.lateSlopePerSecond as number) : s.lateSlopePerSnapshot;
    const g = rate.get(s.group);
    if (!g) rate.set(s.group, { sum: v, perSecond });
    else {
      g.sum += v;
      g.perSecond &&= perSecond;
    }
  }
  const filtered = passing.size < r.groups.length;
  const groups = (filtered ? r.groups.filter((g) => passing.has(g.group)) : r.groups).slice(0, limit);
  const want = new Map(groups.map((g) => [g.group, [] as SuspectMember[]]));
  const picked: { member: Omit<SuspectMember, 'series' | 'sigma' | 'complete'>; list: SuspectMember[] }[] = [];
  const count = new Map<number, number>();
  for (const s of r.stacks) {
    const list = want.get(s.group);
    const n = count.get(s.group) ?? 0;
    if (!list || n >= MEMBERS_PER_ROW || (filtered && !keep(s.processIndex, s.stackId))) continue;
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
    groupCount: passing.size,
    totalGroups: r.groups.length,
    rows: groups.map((g) => {
      const l = label(g.top.processIndex, g.top.stackId);
      const rt = rate.get(g.group);
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
        site: l.site,
        lateRate: rt?.sum ?? 0,
        lateRatePerSecond: rt?.perSecond ?? false,
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
