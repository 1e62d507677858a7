// The job-wide ranking: every (process, stack) series with its pattern and score, sorted across the
// whole job, and groups of the same stack (stack-identity.ts) across processes — "this stack leaks
// in all four workers" is one line, not four lines in four tables.

import type { Job, ProcessSeries } from './model.js';
import { processPatterns, type GrowthPattern, type StackSeriesVerdict } from './patterns.js';
import { stackIdentityKeys } from './stack-identity.js';
import { processFates, type ProcessFate } from './process-fate.js';

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
  deltaBytes: number;
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
  groups: SuspectGroup[];
  processes: ProcessSuspects[];
}

const byRank = (
  a: { score: number; deltaBytes: number; lastBytes: number },
  b: { score: number; deltaBytes: number; lastBytes: number },
): number => b.score - a.score || b.deltaBytes - a.deltaBytes || b.lastBytes - a.lastBytes;

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
    score: s.score,
    processIndex,
    process,
    pid,
    key,
    group,
    groupProcesses: 0,
  };
}

/** A process's part of a ranking: its stacks' verdicts as suspects (their group fields set by each ranking). */
interface ProcessPart {
  processIndex: number;
  stacks: StackSuspect[];
  topPattern: GrowthPattern | null;
  notes: string[];
  snapshotIndexes: number[];
  seconds: Float64Array | null;
}

/**
 * Each process's part of a ranking, by series, for ranking a job again as it grows by processes (the app ranks a
 * job process by process while it loads): a process's patterns depend on its series alone, so a part is made
 * once and its suspects are reused (a ranking sets their group fields; the one before is then stale).
 */
export type RankMemo = WeakMap<ProcessSeries, ProcessPart>;

export function rankJob(job: Pick<Job, 'processes'>, memo?: RankMemo): JobSuspects {
  const fates = processFates(job);
  const stacks: StackSuspect[] = [];
  const processes: ProcessSuspects[] = [];
  const groupOf = new Map<string, number>();
  const groups: SuspectGroup[] = [];
  job.processes.forEach((proc, pi) => {
    let part = memo?.get(proc);
    if (!part || part.processIndex !== pi) {
      const pat = processPatterns(proc);
      const keys = stackIdentityKeys(proc);
      let top: StackSeriesVerdict | null = null;
      const list: StackSuspect[] = [];
      for (const s of pat.stacks) {
        if (!top || byRank(s, top) < 0) top = s;
        list.push(suspect(s, pi, proc.key, proc.pid, keys[s.stackId], -1));
      }
      part = {
        processIndex: pi,
        stacks: list,
        topPattern: top ? top.pattern : null,
        notes: pat.notes,
        snapshotIndexes: pat.snapshotIndexes,
        seconds: pat.seconds,
      };
      memo?.set(proc, part);
    }
    for (const s of part.stacks) {
      const key = s.key;
      let g = groupOf.get(key);
      if (g === undefined) {
        g = groups.length;
        groupOf.set(key, g);
        groups.push({
          group: g,
          key,
          processIndexes: [],
          processes: [],
          pattern: s.pattern,
          score: 0,
          deltaBytes: 0,
          lastBytes: 0,
          sigmaBytes: 0,
          top: { processIndex: pi, stackId: s.stackId },
          members: 0,
        });
      }
      s.group = g;
      s.groupProcesses = 0;
      stacks.push(s);
    }
    processes.push({
      processIndex: pi,
      fate: fates[pi],
      topPattern: part.topPattern,
      notes: part.notes,
      snapshotIndexes: part.snapshotIndexes,
      seconds: part.seconds,
    });
  });
  stacks.sort(byRank);
  // members in rank order: the first member seen is the group's top
  const seenTop = new Uint8Array(groups.length);
  const variance = new Float64Array(groups.length);
  for (const s of stacks) {
    const g = groups[s.group];
    if (!seenTop[s.group]) {
      seenTop[s.group] = 1;
      g.top = { processIndex: s.processIndex, stackId: s.stackId };
      g.pattern = s.pattern;
    }
    if (g.processIndexes[g.processIndexes.length - 1] !== s.processIndex && !g.processIndexes.includes(s.processIndex))
      g.processIndexes.push(s.processIndex);
    g.score += s.score;
    g.deltaBytes += s.deltaBytes;
    g.lastBytes += s.lastBytes;
    variance[s.group] += s.sigmaBytes * s.sigmaBytes;
    g.members++;
  }
  for (const g of groups) {
    g.processIndexes.sort((a, b) => a - b);
    g.processes = g.processIndexes.map((i) => job.processes[i].pid);
    g.sigmaBytes = Math.sqrt(variance[g.group]);
  }
  for (const s of stacks) s.groupProcesses = groups[s.group].processIndexes.length;
  groups.sort(byRank);
  // renumber groups in rank order so `group` is the group's rank
  const renumber = new Int32Array(groups.length);
  groups.forEach((g, i) => {
    renumber[g.group] = i;
    g.group = i;
  });
  for (const s of stacks) s.group = renumber[s.group];
  return { stacks, groups, processes };
}
