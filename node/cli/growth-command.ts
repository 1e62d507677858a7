// `heaplens growth`: the job-wide ranking first (one line per stack across the processes that hold
// it), then each process's own series. Patterns, σ and scores: core/stats/patterns.ts, suspects.ts.

import type { Job, ProcessSeries } from '../../core/model/model.js';
import { rankJob, type JobSuspects, type StackSuspect, type SuspectGroup } from '../../core/stats/suspects.js';
import { NOISE_Z } from '../../core/model/sampling-error.js';
import { has, intFlag, type ParsedArgs } from './args.js';
import type { FrameOut, StackDescriber } from './describe-stacks.js';
import { formatBytes, formatSignedBytes, table } from './format.js';
import { symbolizeJob } from './symbols.js';
import { noProcess } from './input.js';
import {
  describer,
  framesFor,
  indent,
  onlyPid,
  printWarnings,
  processJson,
  processTitle,
  stackText,
  tableColumns,
  type Output,
} from './common.js';

/** Describers per process, made on first use (symbolized frames are cached inside each). */
export function describers(job: Job, args: ParsedArgs): (pi: number) => StackDescriber {
  const made = new Map<number, StackDescriber>();
  return (pi) => {
    let d = made.get(pi);
    if (!d) {
      d = describer(job.processes[pi], args);
      made.set(pi, d);
    }
    return d;
  };
}

export function rateText(perSnapshot: number, perSecond: number | null): string {
  if (perSecond !== null) return `${formatSignedBytes(perSecond)}/s`;
  return `${formatSignedBytes(perSnapshot)}/dump`;
}

function pidList(job: Job, idx: readonly number[], max = 4): string {
  const names = idx.map((i) => String(job.processes[i].pid ?? job.processes[i].key));
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')}, +${names.length - max}`;
}

export function stackJson(s: StackSuspect, frames: FrameOut[]) {
  return {
    pid: s.pid,
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
    slopeBytesPerSnapshot: s.slopePerSnapshot,
    slopeBytesPerSecond: s.slopePerSecond,
    lateSlopeBytesPerSnapshot: s.lateSlopePerSnapshot,
    lateSlopeBytesPerSecond: s.lateSlopePerSecond,
    lateZ: jsonNumber(s.lateZ),
    points: s.points,
    group: s.group,
    groupProcesses: s.groupProcesses,
    frames,
  };
}

/** JSON has no infinity: an exact (unsampled) non-zero change has z = ±∞, written as a string. */
function jsonNumber(z: number): number | string {
  return Number.isFinite(z) ? z : z > 0 ? 'Infinity' : '-Infinity';
}

export function groupJson(job: Job, g: SuspectGroup, frames: FrameOut[]) {
  return {
    group: g.group,
    processes: g.processes,
    pattern: g.pattern,
    score: g.score,
    deltaBytes: g.deltaBytes,
    lastBytes: g.lastBytes,
    sigmaBytes: g.sigmaBytes,
    members: g.members,
    top: {
      pid: job.processes[g.top.processIndex].pid,
      process: job.processes[g.top.processIndex].key,
      stackId: g.top.stackId,
    },
    frames,
  };
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

function deltaText(delta: number, noise: boolean): string {
  return formatSignedBytes(delta) + (noise ? ' ~' : '');
}

/**
 * `growth` on a dataset: ranked without its cells in memory (node/dataset/rank-dataset.ts), then only the listed
 * stacks' frames are read. The output is the same as on the dumps.
 */
export async function growthOnDataset(dir: string, args: ParsedArgs, io: Output): Promise<number> {
  const n = intFlag(args, 'top', 20);
  const { loadDataset } = await import('./dataset-input.js');
  const { startDatasetRanking } = await import('../dataset/rank-dataset.js');
  let r: JobSuspects | null = null;
  // SQL's first pass over the cells runs while the snapshots are read; the ranking ends once they are in, and
  // then only the listed stacks' frames are read
  const ranking = await startDatasetRanking(dir);
  const chooser = async (bare: Job, ids: ReadonlyMap<ProcessSeries, number>) => {
    const job = onlyPid(bare, args);
    const wanted = new Map<number, number[]>();
    if (job.processes.length === 0) return wanted;
    const pids = job.processes.map((p) => ids.get(p)!);
    r = await ranking.rank(job, pids, { top: n });
    const want = (pi: number, stackId: number) => {
      const list = wanted.get(pids[pi]) ?? [];
      list.push(stackId);
      wanted.set(pids[pi], list);
    };
    for (const s of listedStacks(r, n)) want(s.processIndex, s.stackId);
    for (const g of r.groups.slice(0, n)) want(g.top.processIndex, g.top.stackId);
    return wanted;
  };
  let loaded;
  try {
    loaded = await loadDataset(dir, args, io, chooser);
  } finally {
    ranking.close();
  }
  const { job: all, symbolized } = loaded;
  const job = onlyPid(all, args);
  if (job.processes.length === 0 || !r) return noProcess(all, job, args, io);
  if (!symbolized) await symbolizeJob(job, args, io);
  growth(job, args, io, r);
  return 0;
}

export function growth(job: Job, args: ParsedArgs, io: Output, ranked?: JobSuspects): void {
  const n = intFlag(args, 'top', 20);
  const json = has(args, 'json');
  const r = ranked ?? rankJob(job);
  const desc = describers(job, args);
  const frames = (pi: number, stackId: number) => framesFor(desc(pi), stackId, args).frames;
  const listed = listedStacks(r, n);
  const groups = r.groups.slice(0, n);
  if (json) {
    io.out(
      JSON.stringify(
        {
          processes: job.processes.map((p: ProcessSeries, i) => ({
            ...processJson(p, job),
            snapshots: p.snapshots.length,
            topPattern: r.processes[i].topPattern,
            notes: r.processes[i].notes,
          })),
          stacks: listed.map((s) => stackJson(s, frames(s.processIndex, s.stackId))),
          groups: groups.map((g) => groupJson(job, g, frames(g.top.processIndex, g.top.stackId))),
          warnings: job.warnings,
        },
        null,
        2,
      ),
    );
    return;
  }
  const procs = job.processes.length;
  io.out(`job-wide suspects: ${r.groupCount} stacks over ${procs} process${procs === 1 ? '' : 'es'}`);
  io.out(
    `  score = growth beyond ${NOISE_Z}σ of sampling that is still going on at the end (plateaus and steps score ~0); ~ = within sampling noise`,
  );
  const grows = groups.map((g, i) => {
    const top = r.stacks.find((s) => s.group === g.group)!;
    return [
      String(i + 1),
      formatBytes(g.score),
      g.pattern,
      deltaText(g.deltaBytes, Math.abs(g.deltaBytes) < NOISE_Z * g.sigmaBytes),
      g.sigmaBytes > 0 ? '±' + formatBytes(NOISE_Z * g.sigmaBytes) : '',
      rateText(top.lateSlopePerSnapshot, top.lateSlopePerSecond),
      `${g.processIndexes.length} (${pidList(job, g.processIndexes)})`,
      stackText(frames(g.top.processIndex, g.top.stackId)),
    ];
  });
  io.out(
    indent(
      table(
        ['#', 'score', 'pattern', 'Δ total', '±2σ end', 'late rate (top)', 'processes', 'stack (leaf first)'],
        grows,
        [true, true, false, true, true, true, false, false],
        tableColumns(io),
      ),
    ) + '\n',
  );

  r.processes.forEach((ps, pi) => {
    const p = job.processes[pi];
    const fate = ps.fate;
    const lastSeq = fate.lastCompleteSeq;
    io.out(
      `${processTitle(p)}${fate.killed ? ' — killed' : ''}\n  series over ${ps.snapshotIndexes.length} complete snapshot${ps.snapshotIndexes.length === 1 ? '' : 's'}` +
        (lastSeq !== null && fate.lastCompleteIndex !== p.snapshots.length - 1
          ? ` (last complete: seq ${lastSeq})`
          : '') +
        (ps.topPattern ? `; top pattern ${ps.topPattern}` : ''),
    );
    for (const note of ps.notes) io.out(`  note: ${note}`);
    const rows = listed
      .filter((s) => s.processIndex === pi)
      .map((s, rank) => [
        String(rank + 1),
        formatBytes(s.score),
        s.pattern,
        deltaText(s.deltaBytes, s.withinNoise),
        s.sigmaBytes > 0 ? '±' + formatBytes(NOISE_Z * s.sigmaBytes) : '',
        rateText(s.slopePerSnapshot, s.slopePerSecond),
        rateText(s.lateSlopePerSnapshot, s.lateSlopePerSecond),
        s.groupProcesses > 1 ? `${s.groupProcesses} procs` : '',
        stackText(frames(pi, s.stackId)),
      ]);
    io.out(
      indent(
        table(
          ['#', 'score', 'pattern', 'Δ total', '±2σ end', 'slope', 'late slope', 'shared', 'stack (leaf first)'],
          rows,
          [true, true, false, true, true, true, true, false, false],
          tableColumns(io),
        ),
      ) + '\n',
    );
  });
  printWarnings(job.warnings, io);
}
