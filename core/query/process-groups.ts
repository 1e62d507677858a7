// A job of many processes as a page shows it (issue 49 item 4): the processes summarised by group (host, then
// role and command), each group's fates counted and its growth spread (median, p90, max); the processes that
// matter picked out (killed, the culprits' top holders, outliers of growth); a suspect's holders summarised (how
// many, the spread of their rates, the outliers). The CLI (`growth`, `postmortem`) and the app format these; the
// pick is made once here so both show the same processes.

import type { Job } from '../model/model.js';
import type { Evidence } from '../stats/kill-evidence.js';
import { FATE_ORDER, type Fate } from '../stats/fates.js';
import type { JobSuspects, StackSuspect, SuspectGroup } from '../stats/suspects.js';
import { processHost } from '../model/process-host.js';
import { processName } from '../model/process-name.js';
import { processParents } from '../model/memory-context.js';

/** What a process is in its job: started by another of the job's processes, the parent of some, or alone. */
export type ProcessRole = 'driver' | 'worker' | 'process';

/** One process as the grouping reads it. */
export interface ProcessPoint {
  processIndex: number;
  host: string | null;
  /** its command (core/model/process-name.ts), else its file prefix */
  command: string;
  role: ProcessRole;
  fate: Fate;
  fateEvidence: readonly Evidence[];
  /** bytes still growing at its end: the sum of its stacks' scores (core/stats/patterns.ts) */
  growth: number;
}

/** The spread of some figures: how many, the least, the median, the 90th percentile and the most. */
export interface Spread {
  n: number;
  min: number;
  median: number;
  p90: number;
  max: number;
}

export interface ProcessGroup {
  /** `host role command`: stable for a job, what the app's list keys its rows by */
  key: string;
  host: string | null;
  role: ProcessRole;
  command: string;
  /** indexes into job.processes, by growth (most first) */
  processIndexes: number[];
  /** how many of them ended each way, in FATE_ORDER (fates none had are left out) */
  fates: { fate: Fate; count: number }[];
  growth: Spread;
}

/** Why a process is listed on its own. */
export type MatterReason = 'killed' | 'top holder' | 'outlier';

export interface ProcessThatMatters {
  processIndex: number;
  reasons: MatterReason[];
}

export interface FateCount {
  fate: Fate;
  count: number;
  /** the groups (host, role, command) of the processes that ended so, most first */
  groups: { key: string; host: string | null; command: string; count: number }[];
  /** the evidence of the first few that have any (file:line and text) */
  evidence: { processIndex: number; evidence: Evidence }[];
  /** how many of them have evidence of anything beyond the dumps themselves */
  withEvidence: number;
}

export interface HolderSummary {
  group: number;
  holders: number;
  /** the unit of the rates: bytes/s where the dumps have times, else bytes/dump */
  perSecond: boolean;
  /** the holders' rates at the end (those with a rate in that unit: rates.n of them) */
  rates: Spread;
  /** holders whose rate stands out (robust z above OUTLIER_Z and at least twice the median), fastest first */
  outliers: { processIndex: number; rate: number }[];
  /** the holders with the highest scores, most first */
  top: number[];
}

/** Where jobs stop being listed process by process: more processes than this are summarised by group. */
export const LIST_ALL_UP_TO = 16;
/** Modified z-score (Iglewicz and Hoaglin: 0.6745 (x − median) / MAD) above which a figure is an outlier. */
export const OUTLIER_Z = 3.5;
/** …and at least this many times the median: a job of identical processes has no outliers in its noise. */
export const OUTLIER_RATIO = 2;

/** The q-quantile of sorted figures (linear between ranks). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

export function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    min: s[0] ?? 0,
    median: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    max: s[s.length - 1] ?? 0,
  };
}

/**
 * The high outliers of some figures (indexes into `values`), highest first: modified z-score above OUTLIER_Z and
 * at least OUTLIER_RATIO times the median. Only the high side: a process that grows less than its peers is not
 * what filled the memory. With a MAD of 0 (most figures equal), anything above the ratio stands out.
 */
export function highOutliers(values: readonly number[]): number[] {
  if (values.length < 3) return [];
  const { median } = spread(values);
  const mad = spread(values.map((v) => Math.abs(v - median))).median;
  const out: number[] = [];
  values.forEach((v, i) => {
    if (v <= 0 || v < OUTLIER_RATIO * median) return;
    if (mad > 0 && (0.6745 * (v - median)) / mad <= OUTLIER_Z) return;
    if (mad === 0 && v === median) return;
    out.push(i);
  });
  return out.sort((a, b) => values[b] - values[a]);
}

/** Each process's growth still going on at its end: the sum of its stacks' scores. */
export function processGrowth(r: Pick<JobSuspects, 'stacks' | 'processes'>): Float64Array {
  const g = new Float64Array(r.processes.length);
  for (const s of r.stacks) g[s.processIndex] += s.score;
  return g;
}

/** Each process's role from the fork tree the contexts record. */
export function processRoles(job: Pick<Job, 'processes'>): ProcessRole[] {
  const parents = processParents(job.processes);
  const hasChildren = new Set([...parents.values()].filter((v): v is string => v !== null));
  return job.processes.map((p) =>
    (parents.get(p.key) ?? null) !== null ? 'worker' : hasChildren.has(p.key) ? 'driver' : 'process',
  );
}

/** The points of a job's processes, given each one's fate (core/stats/fates.ts) and the job's ranking. */
export function processPoints(
  job: Pick<Job, 'processes'>,
  r: Pick<JobSuspects, 'stacks' | 'processes'>,
  ends: readonly { fate: Fate; fateEvidence: readonly Evidence[] }[],
  roles: readonly ProcessRole[] = processRoles(job),
): ProcessPoint[] {
  const growth = processGrowth(r);
  return job.processes.map((p, i) => ({
    processIndex: i,
    host: processHost(p),
    command: processName(p) ?? p.prefix ?? p.key,
    role: roles[i],
    fate: ends[i].fate,
    fateEvidence: ends[i].fateEvidence,
    growth: growth[i],
  }));
}

const byName = new Intl.Collator('en', { numeric: true });
function groupKey(p: Pick<ProcessPoint, 'host' | 'role' | 'command'>): string {
  return `${p.host ?? ''}\u0000${p.role}\u0000${p.command}`;
}

/** The processes by host, then role and command (hosts in natural order: node-2 before node-10), each by growth. */
export function groupProcesses(points: readonly ProcessPoint[]): ProcessGroup[] {
  const groups = new Map<string, ProcessPoint[]>();
  for (const p of points) {
    const k = groupKey(p);
    const list = groups.get(k);
    if (list) list.push(p);
    else groups.set(k, [p]);
  }
  const out = [...groups].map(([key, list]): ProcessGroup => {
    list.sort((a, b) => b.growth - a.growth || a.processIndex - b.processIndex);
    return {
      key,
      host: list[0].host,
      role: list[0].role,
      command: list[0].command,
      processIndexes: list.map((p) => p.processIndex),
      fates: FATE_ORDER.map((fate) => ({ fate, count: list.filter((p) => p.fate === fate).length })).filter(
        (f) => f.count > 0,
      ),
      growth: spread(list.map((p) => p.growth)),
    };
  });
  const roleOrder: ProcessRole[] = ['driver', 'worker', 'process'];
  return out.sort(
    (a, b) =>
      byName.compare(a.host ?? '', b.host ?? '') ||
      roleOrder.indexOf(a.role) - roleOrder.indexOf(b.role) ||
      byName.compare(a.command, b.command),
  );
}

/** A fate a process was ended by: by the OOM killer or a signal (the ones a reader must see by name). */
export function wasKilled(f: Fate): boolean {
  return f === 'oom-killed' || f === 'killed';
}

/** The members of a group (one per holder), by score. */
function membersOf(r: Pick<JobSuspects, 'stacks'>, g: SuspectGroup): StackSuspect[] {
  return r.stacks.filter((s) => s.group === g.group);
}

/**
 * A suspect's holders: how many, the spread of their rates at the end, the outliers and the top `top` by score.
 * `all`: the group's members in ranking order, when the caller has them (one pass over the ranking for many groups).
 */
export function holderSummary(
  r: Pick<JobSuspects, 'stacks'>,
  g: SuspectGroup,
  top = 3,
  all: readonly StackSuspect[] = membersOf(r, g),
): HolderSummary {
  // per second where the dumps have times, else per dump: one unit for the spread, over the holders whose series
  // carry a rate in it (a series too short has none: core/stats/patterns.ts rateBasis)
  const perSecond = all.some((s) => s.lateSlopePerSecond !== null);
  const members = all.filter((s) => (perSecond ? s.lateSlopePerSecond !== null : s.hasRate));
  const rates = members.map((s) => (perSecond ? (s.lateSlopePerSecond as number) : s.lateSlopePerSnapshot));
  return {
    group: g.group,
    holders: g.processIndexes.length,
    perSecond,
    rates: spread(rates),
    outliers: highOutliers(rates).map((i) => ({ processIndex: members[i].processIndex, rate: rates[i] })),
    top: all.slice(0, top).map((s) => s.processIndex),
  };
}

/** How many suspects' holders a page lists (a ranking cut to fewer groups lists fewer: node/dataset keeps these). */
export const CULPRIT_GROUPS = 3;

/** The suspects whose holders a page lists: the first `culprits` groups that score. */
export function culpritGroups(r: Pick<JobSuspects, 'groups'>, culprits = CULPRIT_GROUPS): SuspectGroup[] {
  return r.groups.filter((g) => g.score > 0).slice(0, culprits);
}

/** The holders of a ranking's first suspects (`culprits` of them, each's `top` holders): what processPage lists. */
export function culpritHolders(
  r: Pick<JobSuspects, 'stacks' | 'groups'>,
  culprits = CULPRIT_GROUPS,
  top = 3,
): HolderSummary[] {
  const groups = culpritGroups(r, culprits);
  const members = new Map(groups.map((g) => [g.group, [] as StackSuspect[]]));
  for (const s of r.stacks) members.get(s.group)?.push(s);
  return groups.map((g) => holderSummary(r, g, top, members.get(g.group)));
}

export interface PageOptions {
  /** at most this many processes listed on their own (default 12); the rest are counted in their groups */
  max?: number;
}

export interface ProcessPage {
  /** the processes listed on their own, killed first, then the culprits' top holders, then outliers of growth */
  listed: ProcessThatMatters[];
  /** killed processes and outliers beyond `max`, counted */
  leftOut: { killed: number; outliers: number };
  /** every process by group (host, role, command), with its fates and growth */
  groups: ProcessGroup[];
  /** the groups of the processes not listed, by fate: what the page says of the rest */
  rest: { key: string; host: string | null; role: ProcessRole; command: string; fate: Fate; count: number }[];
  holders: HolderSummary[];
  fates: FateCount[];
  /** processes whose growth stands out among all the job's, fastest first */
  outliers: number[];
}

/** How many evidence lines a fate's count quotes. */
const EVIDENCE_QUOTED = 3;

/** The fates counted, each by group, with the first few processes' evidence. */
export function fateCounts(points: readonly ProcessPoint[]): FateCount[] {
  const out: FateCount[] = [];
  for (const fate of FATE_ORDER) {
    const mine = points.filter((p) => p.fate === fate);
    if (mine.length === 0) continue;
    const groups = new Map<string, { key: string; host: string | null; command: string; count: number }>();
    for (const p of mine) {
      const k = groupKey(p);
      const g = groups.get(k) ?? { key: k, host: p.host, command: p.command, count: 0 };
      g.count++;
      groups.set(k, g);
    }
    const told = mine.filter((p) => p.fateEvidence.some((e) => e.source !== 'dumps'));
    const quoted = (told.length > 0 ? told : mine).filter((p) => p.fateEvidence.length > 0);
    out.push({
      fate,
      count: mine.length,
      groups: [...groups.values()].sort((a, b) => b.count - a.count || byName.compare(a.key, b.key)),
      evidence: quoted.slice(0, EVIDENCE_QUOTED).map((p) => ({
        processIndex: p.processIndex,
        evidence: p.fateEvidence.find((e) => e.source !== 'dumps') ?? p.fateEvidence[0],
      })),
      withEvidence: told.length,
    });
  }
  return out;
}

/**
 * The page of a job of many processes: which processes are listed on their own (killed, the first suspects'
 * top holders as `holders` gives them (culpritHolders), outliers of growth; at most `max`), the rest counted by
 * group and fate, and the fates counted. `points` are in process order (points[i].processIndex === i).
 */
export function processPage(
  points: readonly ProcessPoint[],
  holders: readonly HolderSummary[],
  opts: PageOptions = {},
): ProcessPage {
  const max = opts.max ?? 12;
  const reasons = new Map<number, MatterReason[]>();
  const add = (pi: number, why: MatterReason) => {
    const list = reasons.get(pi);
    if (!list) reasons.set(pi, [why]);
    else if (!list.includes(why)) list.push(why);
  };
  const killed = points
    .filter((p) => wasKilled(p.fate))
    .sort(
      (a, b) =>
        FATE_ORDER.indexOf(a.fate) - FATE_ORDER.indexOf(b.fate) ||
        b.growth - a.growth ||
        a.processIndex - b.processIndex,
    );
  const outliers = highOutliers(points.map((p) => p.growth)).map((i) => points[i].processIndex);
  // killed first (they are the answer), then each suspect's top holders, then the outliers: up to max in all
  let left = max;
  let killedOut = 0;
  for (const p of killed) {
    if (left > 0) {
      add(p.processIndex, 'killed');
      left--;
    } else killedOut++;
  }
  for (const h of holders)
    for (const pi of h.top) {
      if (reasons.has(pi)) add(pi, 'top holder');
      else if (left > 0) {
        add(pi, 'top holder');
        left--;
      }
    }
  let outliersOut = 0;
  for (const pi of outliers) {
    if (reasons.has(pi)) add(pi, 'outlier');
    else if (left > 0) {
      add(pi, 'outlier');
      left--;
    } else outliersOut++;
  }
  const groups = groupProcesses(points);
  const rest: ProcessPage['rest'] = [];
  for (const g of groups)
    for (const fate of FATE_ORDER) {
      const count = g.processIndexes.filter((pi) => !reasons.has(pi) && points[pi].fate === fate).length;
      if (count > 0) rest.push({ key: g.key, host: g.host, role: g.role, command: g.command, fate, count });
    }
  return {
    listed: [...reasons].map(([processIndex, why]) => ({ processIndex, reasons: why })),
    leftOut: { killed: killedOut, outliers: outliersOut },
    groups,
    rest,
    holders: [...holders],
    fates: fateCounts(points),
    outliers,
  };
}
