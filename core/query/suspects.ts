// The Suspects view (the worker's `suspects` answer) and the stack panel's verdict: the job-wide ranking
// (core/stats/suspects.ts, once per loaded job: QuerySession.ranking) cut to the top groups, each labelled, with its
// holders' series and σ per snapshot for the sparklines; the focus/ignore chips narrow it as they narrow every view.

import type { Job } from '../model/model.js';
import { teardownIndex } from '../model/series-end.js';
import type { JobSuspects, StackSuspect, SuspectGroup } from '../stats/suspects.js';
import { rankIndex } from '../stats/rank-index.js';
import { holderSummary, type HolderSummary } from './process-groups.js';
import type { FrameGroup, ViewOptions } from '../model/vocab.js';
import { stackName } from './labels.js';
import type { QuerySession } from './session.js';

/** Sparklines drawn per group row: the top holders by score (a stack in 64 ranks shows its 4 worst, and a count). */
export const MEMBERS_PER_ROW = 4;

/**
 * One process's series of a suspect stack: live bytes and 1σ per snapshot (all snapshots; cut ones flagged, and the
 * exit dump after teardown, which the series ends before: core/model/series-end.ts).
 */
export interface SuspectMember {
  proc: number;
  pid: number | null;
  stackId: number;
  pattern: string;
  score: number;
  deltaBytes: number;
  lastBytes: number;
  sigmaBytes: number;
  withinNoise: boolean;
  /** late Theil–Sen slope: per second when times are known, else per snapshot; null: the series carries no rate */
  lateRate: number | null;
  lateRatePerSecond: boolean;
  /** why there is no rate or no rate per second ("2 dumps in 12 ms: no rate"), null when both hold */
  rateNote: string | null;
  series: number[];
  sigma: number[];
  complete: boolean[];
  /** index of the exit dump after teardown (drawn as a marked point off the line), −1 when there is none */
  exitDump: number;
}

/** A stack across the processes that hold it (core/stats/suspects.ts group), ranked job-wide. */
export interface SuspectRow {
  group: number;
  pattern: string;
  score: number;
  /** the change of the holders that share the row's pattern (a steady row: its steady holders) */
  deltaBytes: number;
  /** the other holders, shown apart: how many processes, their summed change and their patterns */
  others: { processes: number; deltaBytes: number; patterns: string[] };
  lastBytes: number;
  sigmaBytes: number;
  withinNoise: boolean;
  label: string;
  context: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** `file:line` of the naming stack's first Python frame (else first frame with a line), null when none */
  site: string | null;
  /**
   * the late Theil–Sen slopes of the holders that share the row's pattern and carry a rate, summed: per second when
   * every one's times are known, else per dump; null when none carries a rate (too few dumps)
   */
  lateRate: number | null;
  lateRatePerSecond: boolean;
  /** members by score; the first is the group's top */
  members: SuspectMember[];
  /** processes holding the stack (members may list fewer: only the top few carry series) */
  processCount: number;
  /**
   * every holder summarised when there are more than the members shown (core/query/process-groups.ts): how many,
   * the spread of their late rates, the outliers; absent in older reports
   */
  holders?: HolderSummary;
}

export interface ProcessVerdict {
  proc: number;
  topPattern: string | null;
  killed: boolean;
  evidence: string[];
  lastComplete: number;
  notes: string[];
}

export interface SuspectsResult {
  rows: SuspectRow[];
  /** groups that pass the view's filters */
  groupCount: number;
  /** groups in the job, filters aside */
  totalGroups: number;
  processes: ProcessVerdict[];
}

/** A stack's verdict in the job-wide ranking, as the stack panel shows it (core/stats/patterns.ts). */
export interface StackVerdict {
  pattern: string;
  score: number;
  sigmaBytes: number;
  withinNoise: boolean;
  /** null: the series carries no rate (`rateNote` says why) */
  lateRate: number | null;
  lateRatePerSecond: boolean;
  rateNote: string | null;
  groupProcesses: number;
  /** rank of this (process, stack) among every process's stacks (0 = top) */
  rank: number;
  /** the stack's Suspects row (its group across the processes that hold it): rank (0 = top) and score */
  rowRank: number;
  rowScore: number;
  note: string | null;
}

/**
 * The series and σ per snapshot of the given (process, stack) pairs: one pass over each process's snapshots
 * (a pass per pair was most of the ranking's time on a job of 16 × 100 dumps of 5,000 stacks).
 */
function seriesOf(
  job: Job,
  wanted: readonly { proc: number; stackId: number }[],
): { series: number[]; sigma: number[]; complete: boolean[]; exitDump: number }[] {
  const out = wanted.map(() => ({
    series: [] as number[],
    sigma: [] as number[],
    complete: [] as boolean[],
    exitDump: -1,
  }));
  const byProc = new Map<number, Map<number, number>>();
  wanted.forEach((w, k) => {
    let m = byProc.get(w.proc);
    if (!m) byProc.set(w.proc, (m = new Map()));
    m.set(w.stackId, k);
  });
  byProc.forEach((wantedHere, proc) => {
    const p = job.processes[proc];
    const snaps = p.snapshots;
    const ks = [...wantedHere.values()];
    const exitDump = teardownIndex(p);
    // the slot of each stack id (-1: not wanted), read once per record of every snapshot: a typed array, not the map
    const slots = new Int32Array(p.stacks.count).fill(-1);
    wantedHere.forEach((k, stackId) => (slots[stackId] = k));
    for (const k of ks) {
      out[k].exitDump = exitDump;
      out[k].series = new Array<number>(snaps.length).fill(0);
      out[k].sigma = new Array<number>(snaps.length).fill(0);
      out[k].complete = snaps.map((s) => s.complete);
    }
    snaps.forEach((s, j) => {
      const ids = s.stackIds;
      for (let i = 0; i < ids.length; i++) {
        const k = ids[i] < slots.length ? slots[ids[i]] : -1;
        if (k < 0) continue;
        out[k].series[j] += s.liveBytes[i];
        out[k].sigma[j] += s.liveVarBytes[i];
      }
    });
    for (const k of ks) out[k].sigma = out[k].sigma.map((v) => Math.sqrt(v));
  });
  return out;
}

// each process's ranks by stack id (-1: unranked), per ranking: typed arrays, not a map of 10^6 entries (at 1,000
// processes the first stack panel built one for ~1 s)
const ranksOf = new WeakMap<JobSuspects, Int32Array[]>();

/** The ranking entry of one (process, stack), with its job-wide rank (0 = top), or null. */
function rankedStack(
  r: JobSuspects,
  proc: number,
  stackId: number,
): { s: JobSuspects['stacks'][number]; rank: number } | null {
  const ranked = rankIndex(r);
  let ranks = ranksOf.get(r);
  if (!ranks) {
    const made: Int32Array[] = [];
    for (let rank = 0; rank < ranked.count; rank++) {
      const pi = ranked.processIndex(rank);
      const id = ranked.stackId(rank);
      let pr = made[pi];
      if (!pr || pr.length <= id) {
        const grown = new Int32Array(Math.max(id + 1, 2 * (pr?.length ?? 0), 64)).fill(-1);
        if (pr) grown.set(pr);
        made[pi] = pr = grown;
      }
      pr[id] = rank;
    }
    ranksOf.set(r, made);
    ranks = made;
  }
  const rank = ranks[proc]?.[stackId] ?? -1;
  return rank >= 0 ? { s: ranked.stack(rank), rank } : null;
}

/** The stack panel's verdict of one (process, stack): its place in the job-wide ranking, or null when unranked. */
export function stackVerdict(session: QuerySession, proc: number, stackId: number): StackVerdict | null {
  const v = rankedStack(session.ranking(), proc, stackId);
  if (!v) return null;
  return {
    pattern: v.s.pattern,
    score: v.s.score,
    sigmaBytes: v.s.sigmaBytes,
    withinNoise: v.s.withinNoise,
    lateRate: v.s.hasRate ? (v.s.lateSlopePerSecond ?? v.s.lateSlopePerSnapshot) : null,
    lateRatePerSecond: v.s.lateSlopePerSecond !== null,
    rateNote: v.s.rateNote,
    groupProcesses: v.s.groupProcesses,
    rank: v.rank,
    rowRank: v.s.group,
    // the Suspects row's score: the group's (s.group is its rank; rankJob keeps every group, in rank order)
    rowScore: rankIndex(session.ranking()).group(v.s.group)?.score ?? v.s.score,
    note: v.s.note,
  };
}

/**
 * The top `limit` groups of the ranking with their holders' series. The view's filters (focus/ignore chips,
 * search) narrow it: a group is listed when any of its stacks passes them, and its figures are those of the stacks
 * that pass, so a filter narrows the ranking as it narrows every other view. A group is labelled by its top stack.
 */
export function suspectsResult(session: QuerySession, limit: number, view: ViewOptions): SuspectsResult {
  const job = session.job;
  const chips = (view.filters ?? []).length > 0;
  // a chip narrows every group: the whole ranking; else (while a job loads) only the groups that can be first
  const { ranking: r, groupCount } = chips
    ? { ranking: session.ranking(), groupCount: null }
    : session.rowsRanking(limit);
  // the stacks and groups by index: one is made only where a row reads it (core/stats/rank-index.ts)
  const ranked = rankIndex(r);
  const keep = (proc: number, stackId: number): boolean => !chips || !session.catalog(proc).dropped(stackId, view);
  const label = (proc: number, stackId: number) =>
    stackName(session.catalog(proc), session.catalog(proc).stackKeys(stackId, view), view.mode);
  // the groups (by rank) any of whose stacks pass the filters
  const passes = new Uint8Array(ranked.groupCount);
  if (chips) {
    for (let k = 0; k < ranked.count; k++)
      if (keep(ranked.processIndex(k), ranked.stackId(k))) passes[ranked.groupOf(k)] = 1;
  } else for (let g = 0; g < passes.length; g++) passes[g] = ranked.stackCountOf(g) > 0 ? 1 : 0;
  const passing = passes.reduce((n, x) => n + x, 0);
  const filtered = passing < ranked.groupsKept;
  const groups: SuspectGroup[] = [];
  for (let rank = 0; rank < ranked.groupsKept && groups.length < limit; rank++) {
    const g = ranked.group(rank) as SuspectGroup;
    if (!filtered || passes[g.group] === 1) groups.push(g);
  }
  const want = new Map(groups.map((g) => [g.group, [] as SuspectMember[]]));
  const picked: {
    member: Omit<SuspectMember, 'series' | 'sigma' | 'complete' | 'exitDump'>;
    list: SuspectMember[];
  }[] = [];
  // each listed group's late rate: the sum over its holders that pass the filters, per second only when all are
  const rate = new Map<number, { sum: number; perSecond: boolean }>();
  // every holder of a listed group, for the summary of the ones beyond its sparklines
  const held = new Map<number, StackSuspect[]>();
  for (const g of groups) {
    const list = want.get(g.group) as SuspectMember[];
    const all: StackSuspect[] = [];
    let n = 0;
    for (const k of ranked.stacksOf(g.group)) {
      const pass = keep(ranked.processIndex(k), ranked.stackId(k));
      if (!pass && filtered) continue;
      const s = ranked.stack(k);
      // a holder with too few dumps adds no rate, nor one of another pattern (shown apart)
      if (pass && s.hasRate && s.pattern === ranked.group(s.group)?.pattern) {
        const perSecond = s.lateSlopePerSecond !== null;
        const v = perSecond ? (s.lateSlopePerSecond as number) : s.lateSlopePerSnapshot;
        const x = rate.get(s.group);
        if (!x) rate.set(s.group, { sum: v, perSecond });
        else {
          x.sum += v;
          x.perSecond &&= perSecond;
        }
      }
      all.push(s);
      if (n >= MEMBERS_PER_ROW) continue;
      n++;
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
          lateRate: !s.hasRate ? null : perSecond ? (s.lateSlopePerSecond as number) : s.lateSlopePerSnapshot,
          lateRatePerSecond: perSecond,
          rateNote: s.rateNote,
        },
      });
    }
    held.set(g.group, all);
  }
  const series = seriesOf(
    job,
    picked.map((p) => p.member),
  );
  picked.forEach((p, k) => p.list.push({ ...p.member, ...series[k] }));
  return {
    groupCount: groupCount ?? passing,
    totalGroups: groupCount ?? ranked.groupsKept,
    rows: groups.map((g) => {
      const l = label(g.top.processIndex, g.top.stackId);
      const rt = rate.get(g.group);
      return {
        group: g.group,
        pattern: g.pattern,
        score: g.score,
        deltaBytes: g.deltaBytes,
        others: {
          processes: g.others.processIndexes.length,
          deltaBytes: g.others.deltaBytes,
          patterns: g.others.patterns,
        },
        lastBytes: g.lastBytes,
        sigmaBytes: g.sigmaBytes,
        withinNoise: Math.abs(g.deltaBytes) < 2 * g.sigmaBytes,
        label: l.label,
        context: l.context,
        frameGroup: l.group,
        site: l.site,
        lateRate: rt?.sum ?? null,
        lateRatePerSecond: rt?.perSecond ?? false,
        members: want.get(g.group) ?? [],
        processCount: g.processIndexes.length,
        ...(g.processIndexes.length > MEMBERS_PER_ROW
          ? { holders: holderSummary(r, g, MEMBERS_PER_ROW, held.get(g.group) ?? []) }
          : {}),
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
