// The job-wide ranking: every (process, stack) series with its pattern and score, sorted across the
// whole job, and groups of the same stack (stack-identity.ts) across processes — "this stack leaks
// in all four workers" is one line, not four lines in four tables.

import type { Job, ProcessSeries } from '../model/model.js';
import { seriesFrame, type GrowthPattern, type StackSeriesVerdict } from './patterns.js';
import { PythonFrameHashes, StackKeyTable, stackIdentityLanes } from '../frames/stack-identity.js';
import { processFates, type ProcessFate } from './process-fate.js';
import { rankOrder, sortRowsAhead, type KeptOrder, type RankKeys } from './rank-order.js';
import { lazyRanking, RankIndex } from './rank-index.js';
import { PATTERN_CODES, patternCode, processPatternTable, type VerdictTable } from './verdict-table.js';

export interface StackSuspect extends StackSeriesVerdict {
  processIndex: number;
  process: string;
  pid: number | null;
  /** job-wide stack key (stack-identity.ts) */
  key: string;
  /** index into JobSuspects.groups */
  group: number;
  /** how many processes hold this stack */
  groupProcesses: number;
}

export interface SuspectGroup {
  group: number;
  key: string;
  /** indexes into job.processes, ascending */
  processIndexes: number[];
  /** pids of those processes (null for unnamed dumps) */
  processes: (number | null)[];
  /** the pattern of the member that scores highest (ties: the largest at the end) */
  pattern: GrowthPattern;
  /** sum of the members' scores */
  score: number;
  /**
   * the change of the holders that share the group's pattern (its top member's: a steady row counts its steady
   * holders), so a leak is not summed with the bounded buffers other processes filled at the same call site
   */
  deltaBytes: number;
  /** the processes of those holders (ascending) */
  patternProcessIndexes: number[];
  /** the other holders (another pattern, or no verdict), shown apart: their processes, summed change and patterns */
  others: { processIndexes: number[]; deltaBytes: number; patterns: GrowthPattern[] };
  /** every holder's bytes at the end */
  lastBytes: number;
  /** 1σ of lastBytes (members are independent samples) */
  sigmaBytes: number;
  /** the representative member (highest score): its frames describe the group */
  top: { processIndex: number; stackId: number };
  members: number;
}

export interface ProcessSuspects {
  processIndex: number;
  fate: ProcessFate;
  /** the pattern of its highest-scoring stack (or of its largest, when nothing scores) */
  topPattern: GrowthPattern | null;
  notes: string[];
  /** complete snapshot indexes the patterns were computed over */
  snapshotIndexes: number[];
  seconds: Float64Array | null;
}

export interface JobSuspects {
  /** every (process, stack) series, by score across the job (then Δ, then size at the end) */
  stacks: StackSuspect[];
  /** groups by score across the job (rankSuspects may keep only the first few) */
  groups: SuspectGroup[];
  /** how many groups there are (the job's distinct stacks) */
  groupCount: number;
  processes: ProcessSuspects[];
}

// one literal (not a spread): tens of thousands of these are made per job
function suspect(
  s: StackSeriesVerdict,
  processIndex: number,
  process: string,
  pid: number | null,
  key: string,
  group: number,
): StackSuspect {
  return {
    stackId: s.stackId,
    pattern: s.pattern,
    note: s.note,
    points: s.points,
    firstBytes: s.firstBytes,
    lastBytes: s.lastBytes,
    peakBytes: s.peakBytes,
    deltaBytes: s.deltaBytes,
    sigmaBytes: s.sigmaBytes,
    sigmaDeltaBytes: s.sigmaDeltaBytes,
    z: s.z,
    withinNoise: s.withinNoise,
    slopePerSnapshot: s.slopePerSnapshot,
    slopePerSecond: s.slopePerSecond,
    lateSlopePerSnapshot: s.lateSlopePerSnapshot,
    lateSlopePerSecond: s.lateSlopePerSecond,
    lateZ: s.lateZ,
    hasRate: s.hasRate,
    rateNote: s.rateNote,
    score: s.score,
    processIndex,
    process,
    pid,
    key,
    group,
    groupProcesses: 0,
  };
}

/**
 * One process's stacks as the ranking orders them: every stack present in a complete snapshot, by ascending
 * id, with the figures that rank a stack that scores 0 (a dataset gives these from SQL for all stacks, and
 * series only for the stacks that need a pattern).
 */
export interface StackTotals {
  stackIds: ArrayLike<number>;
  /** bytes at the first and last point of the series (0 where the stack is absent) */
  firstBytes: ArrayLike<number>;
  lastBytes: ArrayLike<number>;
  /** 1σ of lastBytes */
  sigmaBytes: ArrayLike<number>;
  /** job-wide stack key per row */
  keys: readonly string[];
}

/** What rankSuspects is given per process. */
export interface RankInput {
  totals: StackTotals;
  /** verdicts by stack id: those a dataset classified (absent when `byRow` has them all) */
  verdicts?: ReadonlyMap<number, StackSeriesVerdict>;
  /**
   * rankJob's: every row's verdict in row order, and its key as a number of the memo's key table (the same string
   * as `totals.keys`): at 10^6 (process, stack) pairs the ranking's look-ups by stack id and by key string took ~1 s
   */
  byRow?: { verdicts: VerdictTable; keys: StackKeyTable; keyIds: Int32Array };
  notes: string[];
  snapshotIndexes: number[];
  seconds: Float64Array | null;
}

export interface RankOptions {
  /** the listing shows each process's top n stacks: they must have verdicts (default: all) */
  perProcess?: number;
  /** keep only the top n groups, whose top members must have verdicts (default: all) */
  groups?: number;
}

export interface PartialSuspects extends JobSuspects {
  /** stacks that are in the ranking's first places (per process or as a group's top) and have no verdict */
  missing: { processIndex: number; stackId: number }[];
}

/**
 * The job-wide ranking from every process's stack totals and the verdicts known. A stack without a verdict
 * scores 0 — so verdicts may be left out only for stacks whose change is within 2σ (Δ − 2σ_Δ ≤ 0 bounds the
 * score, patterns.ts) — and ranks among the zeros by Δ, then size at the end, as rankJob ranks them.
 */
export function rankSuspects(
  job: Pick<Job, 'processes'>,
  input: readonly RankInput[],
  options: RankOptions = {},
): PartialSuspects {
  return rankWith(job, input, options, null);
}

/** rankSuspects, with the memo whose inputs these are (rankJob's): its last order is merged into, not redone. */
function rankWith(
  job: Pick<Job, 'processes'>,
  input: readonly RankInput[],
  options: RankOptions,
  memo: RankMemo | null,
): PartialSuspects {
  const fates = processFates(job);
  // entries in push order: process, then ascending stack id (ties in the ranking keep this order). What the passes
  // in rank order read is laid out here in typed arrays, read once from the inputs' maps: at 10^6 entries those
  // passes went all over the verdicts in memory.
  let total = 0;
  for (const p of input) total += p.totals.stackIds.length;
  const procOf = new Int32Array(total);
  const rowOf = new Int32Array(total);
  // score, Δ, size at the end and its variance, side by side (rank-order.ts RankKeys)
  const keys = new Float64Array(4 * total);
  // each entry's pattern as its PATTERN_CODES index (0, unknown, also where it has no verdict)
  const patternOf = new Uint8Array(total);
  const groupOf = new Int32Array(total);
  // the verdicts of inputs without rows of them (a dataset's, by stack id), by entry; the others' are made when read
  let verdictAt: (StackSeriesVerdict | undefined)[] | null = null;
  const hasVerdict = new Uint8Array(total);
  const groupIds = new Map<string, number>();
  const groupKeys: string[] = [];
  // the group of a key interned by the memo's table (one table for all the inputs), else by its string
  const table = input[0]?.byRow?.keys;
  const shared = table !== undefined && input.every((p) => p.byRow?.keys === table);
  const groupOfId = shared ? new Int32Array(table.size).fill(-1) : null;
  let e = 0;
  input.forEach((p, pi) => {
    const t = p.totals;
    const rows = p.byRow;
    writeRankKeys(p, keys, 4 * e);
    for (let r = 0; r < t.stackIds.length; r++, e++) {
      procOf[e] = pi;
      rowOf[e] = r;
      if (rows) {
        hasVerdict[e] = 1;
        patternOf[e] = rows.verdicts.patternCode(r);
      } else {
        const v = p.verdicts?.get(t.stackIds[r]);
        if (v) {
          (verdictAt ??= new Array<StackSeriesVerdict | undefined>(total))[e] = v;
          hasVerdict[e] = 1;
          patternOf[e] = patternCode(v.pattern);
        }
      }
      let g: number | undefined;
      if (groupOfId && rows) {
        const id = rows.keyIds[r];
        g = groupOfId[id];
        if (g < 0) {
          g = groupOfId[id] = groupKeys.length;
          groupKeys.push(t.keys[r]);
        }
      } else {
        g = groupIds.get(t.keys[r]);
        if (g === undefined) {
          g = groupKeys.length;
          groupIds.set(t.keys[r], g);
          groupKeys.push(t.keys[r]);
        }
      }
      groupOf[e] = g;
    }
  });
  const ordered = rankOrder(input, keys, memo?.order ?? null);
  if (memo) memo.order = ordered;
  const order = ordered.entries;

  const idOf = (i: number) => input[procOf[i]].totals.stackIds[rowOf[i]];
  /** an entry's verdict (one with hasVerdict) */
  const verdictOf = (i: number): StackSeriesVerdict => {
    const rows = input[procOf[i]].byRow;
    return rows ? rows.verdicts.at(rowOf[i]) : ((verdictAt as StackSeriesVerdict[])[i] as StackSeriesVerdict);
  };
  const missing: PartialSuspects['missing'] = [];

  // groups: members in rank order, the first member seen is the group's top (the sums in rank order, as ever: the
  // figures do not change with the order of the additions)
  const G = groupKeys.length;
  const gTop = new Int32Array(G).fill(-1);
  const gScore = new Float64Array(G);
  const gDelta = new Float64Array(G);
  const gLast = new Float64Array(G);
  const gVar = new Float64Array(G);
  const gMembers = new Int32Array(G);
  // the change of the members that share the top's pattern, and the others apart (few groups have any)
  const gPattern = new Uint8Array(G);
  const gShared = new Float64Array(G);
  const gOtherDelta = new Float64Array(G);
  const gOtherPatterns: (GrowthPattern[] | undefined)[] = new Array(G);
  for (let k = 0; k < total; k++) {
    const i = order[k];
    const g = groupOf[i];
    const pattern = patternOf[i];
    const d = keys[4 * i + 1];
    if (gTop[g] < 0) {
      gTop[g] = i;
      gPattern[g] = pattern;
    }
    if (pattern === gPattern[g]) gShared[g] += d;
    else {
      gOtherDelta[g] += d;
      const seen = (gOtherPatterns[g] ??= []);
      if (!seen.includes(PATTERN_CODES[pattern])) seen.push(PATTERN_CODES[pattern]);
    }
    gScore[g] += keys[4 * i];
    gDelta[g] += d;
    gLast[g] += keys[4 * i + 2];
    gVar[g] += keys[4 * i + 3];
    gMembers[g]++;
  }
  // how many processes hold each group (entries in push order are by process: one mark per group counts them)
  const holders = new Int32Array(G);
  const listedIn = new Int32Array(G).fill(-1);
  for (let i = 0; i < total; i++) {
    const g = groupOf[i];
    if (listedIn[g] !== procOf[i]) {
      listedIn[g] = procOf[i];
      holders[g]++;
    }
  }
  const gOrder = new Int32Array(G);
  for (let g = 0; g < G; g++) gOrder[g] = g;
  gOrder.sort((a, b) => gScore[b] - gScore[a] || gDelta[b] - gDelta[a] || gLast[b] - gLast[a] || a - b);
  const rankOfGroup = new Int32Array(G);
  gOrder.forEach((g, rank) => (rankOfGroup[g] = rank));
  const keep = Math.min(G, options.groups ?? G);
  for (let rank = 0; rank < keep; rank++) {
    const top = gTop[gOrder[rank]];
    if (!hasVerdict[top]) missing.push({ processIndex: procOf[top], stackId: idOf(top) });
  }

  // stacks with verdicts, in rank order; each process's first places must have one
  const perProcess = options.perProcess ?? Number.POSITIVE_INFINITY;
  const seen = new Int32Array(input.length);
  const topPattern: (GrowthPattern | null)[] = input.map(() => null);
  const entryOf = new Int32Array(total);
  // each stack's group rank, read where the entry is at hand (an index of the groups' stacks reads it for each)
  const rankOfStack = new Int32Array(total);
  let S = 0;
  for (let k = 0; k < total; k++) {
    const i = order[k];
    const pi = procOf[i];
    const place = seen[pi]++;
    if (!hasVerdict[i]) {
      if (place < Math.max(1, perProcess)) missing.push({ processIndex: pi, stackId: idOf(i) });
      continue;
    }
    if (place === 0) topPattern[pi] = PATTERN_CODES[patternOf[i]];
    rankOfStack[S] = rankOfGroup[groupOf[i]];
    entryOf[S++] = i;
  }
  // a group's entries in push order (by process), for its lists of processes: made with the first group made
  let byGroup: { starts: Int32Array; entries: Int32Array } | null = null;
  const entriesOf = (g: number): Int32Array => {
    if (!byGroup) {
      const starts = new Int32Array(G + 2);
      for (let i = 0; i < total; i++) starts[groupOf[i] + 2]++;
      for (let x = 2; x < starts.length; x++) starts[x] += starts[x - 1];
      const entries = new Int32Array(total);
      for (let i = 0; i < total; i++) entries[starts[groupOf[i] + 1]++] = i;
      byGroup = { starts, entries };
    }
    return byGroup.entries.subarray(byGroup.starts[g], byGroup.starts[g + 1]);
  };
  const index = new RankIndex(S, G, keep, {
    processIndex: (k) => procOf[entryOf[k]],
    stackId: (k) => idOf(entryOf[k]),
    groupOf: (k) => rankOfStack[k],
    stack: (k) => {
      const i = entryOf[k];
      const pi = procOf[i];
      const p = job.processes[pi];
      const g = groupOf[i];
      const s = suspect(verdictOf(i), pi, p.key, p.pid, groupKeys[g], rankOfGroup[g]);
      s.groupProcesses = holders[g];
      return s;
    },
    group: (rank) => {
      const g = gOrder[rank];
      const top = gTop[g];
      const pattern = hasVerdict[top] ? PATTERN_CODES[patternOf[top]] : 'unknown';
      // its processes (ascending), those of its pattern and the others
      const processIndexes: number[] = [];
      const patternProcessIndexes: number[] = [];
      const otherProcessIndexes: number[] = [];
      for (const i of entriesOf(g)) {
        const pi = procOf[i];
        if (processIndexes[processIndexes.length - 1] !== pi) processIndexes.push(pi);
        const list = patternOf[i] === gPattern[g] ? patternProcessIndexes : otherProcessIndexes;
        if (list[list.length - 1] !== pi) list.push(pi);
      }
      return {
        group: rank,
        key: groupKeys[g],
        processIndexes,
        processes: processIndexes.map((pi) => job.processes[pi].pid),
        pattern,
        score: gScore[g],
        deltaBytes: gShared[g],
        patternProcessIndexes,
        others: {
          processIndexes: otherProcessIndexes,
          deltaBytes: gOtherDelta[g],
          patterns: gOtherPatterns[g] ?? [],
        },
        lastBytes: gLast[g],
        sigmaBytes: Math.sqrt(gVar[g]),
        top: { processIndex: procOf[top], stackId: idOf(top) },
        members: gMembers[g],
      };
    },
  });
  const processes: ProcessSuspects[] = input.map((p, pi) => ({
    processIndex: pi,
    fate: fates[pi],
    topPattern: topPattern[pi],
    notes: p.notes,
    snapshotIndexes: p.snapshotIndexes,
    seconds: p.seconds,
  }));
  return lazyRanking<StackSuspect, SuspectGroup, PartialSuspects>({ groupCount: G, processes, missing }, index);
}

/**
 * An input's rows' RankKeys into `keys` from `at`: score (0 without a verdict: it ranks among the zeros), Δ, size
 * at the end and its variance.
 */
function writeRankKeys(p: RankInput, keys: RankKeys, at: number): void {
  const t = p.totals;
  const rows = p.byRow;
  for (let r = 0, k = at; r < t.stackIds.length; r++, k += 4) {
    keys[k] = rows ? rows.verdicts.score(r) : (p.verdicts?.get(t.stackIds[r])?.score ?? 0);
    keys[k + 1] = t.lastBytes[r] - t.firstBytes[r];
    keys[k + 2] = t.lastBytes[r];
    keys[k + 3] = t.sigmaBytes[r] * t.sigmaBytes[r];
  }
}

/**
 * Each process's ranking input, by series, for ranking a job again as it grows by processes (the app ranks a job
 * process by process while it loads): a process's patterns depend on its series alone, so they are made once. The
 * stack keys are interned in one table: a key string is kept once per job, not once per process that holds it.
 */
export class RankMemo {
  readonly inputs = new WeakMap<ProcessSeries, RankInput>();
  readonly keys = new StackKeyTable();
  /** the Python frames' hashes of the processes ranked (stack keys) */
  readonly pythonHashes = new PythonFrameHashes();
  /** the order of the entries of the last job ranked (rankOrder) */
  order: KeptOrder | null = null;
}

/**
 * A loading job's process read whole, ranked now, while the readers parse the others (core/query/session.ts): its
 * part of the ranking (rankInputOf) and its rows sorted by rank (sortRowsAhead). The job's ranking at the load's
 * end then merges the processes' sorted rows.
 */
export function rankAhead(proc: ProcessSeries, memo: RankMemo): void {
  const input = rankInputOf(proc, memo);
  const keys = new Float64Array(4 * input.totals.stackIds.length);
  writeRankKeys(input, keys, 0);
  sortRowsAhead(input, keys);
}

/** The ranking of a job in memory: every stack's series classified (patterns.ts). */
export function rankJob(job: Pick<Job, 'processes'>, memo: RankMemo = new RankMemo()): JobSuspects {
  return rankWith(
    job,
    job.processes.map((proc) => rankInputOf(proc, memo)),
    {},
    memo,
  );
}

/**
 * True while the process's series is still the one its memo was made of: the load times dumps from the job's logs
 * (or ends the series at a teardown dump) after a process was read, and a pattern's rates follow its times.
 */
function sameFrame(known: RankInput, proc: ProcessSeries): boolean {
  const f = seriesFrame(proc);
  const a = f.seconds;
  const b = known.seconds;
  if (f.snapshotIndexes.length !== known.snapshotIndexes.length) return false;
  if (f.snapshotIndexes.some((x, i) => x !== known.snapshotIndexes[i])) return false;
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * One process's part of the ranking (its stacks' patterns and job-wide keys), from the memo when made before: a
 * loading job's processes are classified as each is read whole (core/engine/progressive-load.ts), so the job's
 * ranking at the load's end is only the merge across processes.
 */
export function rankInputOf(proc: ProcessSeries, memo: RankMemo = new RankMemo()): RankInput {
  const known = memo.inputs.get(proc);
  if (known && sameFrame(known, proc)) return known;
  // the verdicts as columns (verdict-table.ts), of which the totals' figures are views
  const pat = processPatternTable(proc);
  const verdicts = pat.table;
  const lanes = stackIdentityLanes(proc, { pythonHashes: memo.pythonHashes });
  const n = verdicts.length;
  const totals = {
    stackIds: new Int32Array(n),
    firstBytes: verdicts.column('firstBytes'),
    lastBytes: verdicts.column('lastBytes'),
    sigmaBytes: verdicts.column('sigmaBytes'),
    keys: new Array<string>(n),
  };
  const keyIds = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const id = verdicts.stackId(r);
    totals.stackIds[r] = id;
    keyIds[r] = memo.keys.intern(lanes, 4 * id);
    totals.keys[r] = memo.keys.keys[keyIds[r]];
  }
  const made: RankInput = {
    totals,
    byRow: { verdicts, keys: memo.keys, keyIds },
    notes: pat.notes,
    snapshotIndexes: pat.snapshotIndexes,
    seconds: pat.seconds,
  };
  memo.inputs.set(proc, made);
  return made;
}
