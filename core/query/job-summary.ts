// The job as the app's process table, timeline and banners list it (the worker's `load`/`summary` answers): each
// process's snapshots with their totals, times and memory figures, its identity and place in the fork/spawn tree,
// the warnings by kind, and the verdict. Built from parsed dumps (`jobSummary`) or, while a load is still reading
// a process, from its dump heads (`pendingProcess`): one builder of the snapshot rows for both.

import type { Job, ProcessSeries } from '../model/model.js';
import type { PreviewProcess, JobPreview } from '../load/job-preview.js';
import { seriesTimes, mtimeProblem, type SnapshotTimeSource } from '../model/snapshot-time.js';
import { memoryGap, processIdentity, processLimit, processTreeOrder } from '../model/memory-context.js';
import { seriesMemory } from '../load/series-memory.js';
import { formatCmdline } from '../formats/dump-context.js';
import { processName } from '../model/process-name.js';
import { labelHost, processHost } from '../model/process-host.js';
import { snapshotTotalBytes } from '../model/snapshot-status.js';
import { leastSquaresSlope } from '../stats/growth.js';
import { postmortemQuery, type LimitGiven } from './postmortem.js';
import { jobDeclaredSamples, jobDefaultSample, type DeclaredSample } from '../model/sample-type.js';
import type { SampleType } from '../model/vocab.js';
import { viewOf, type PostmortemView } from './postmortem-view.js';
import { verdictTitle } from './verdict-title.js';
import { seriesEndIndex, teardownIndex } from '../model/series-end.js';
import type { JobSuspects } from '../stats/suspects.js';
import { dumpTriggerLabel } from '../model/dump-trigger.js';

export interface SnapshotSummary {
  index: number;
  file: string;
  seq: number | null;
  /** what made the dump, as recorded (core/model/dump-trigger.ts): `rss-step`, `cgroup-fraction 0.9`, `interval`, … */
  trigger: string;
  liveBytes: number;
  liveObjects: number;
  truncated: boolean;
  /** false for a dump cut before its last record (its records are partial) */
  complete: boolean;
  /** the exit dump written after the interpreter's teardown (core/model/series-end.ts): not the series' end */
  afterTeardown?: boolean;
  /** a massif snapshot: whether massif kept its tree (peak: its peak; empty: totals only, not opened on) */
  massifTree?: 'empty' | 'detailed' | 'peak';
  /** a massif snapshot: its time in massif's unit (TimeAxis.massifUnit) */
  massifTime?: number;
  /** the header's total (a cut dump's total), null without one */
  headerLiveBytes: number | null;
  mtimeMs: number | null;
  /** wall-clock time (ms since the epoch) and where it came from (core/model/snapshot-time.ts); absent in old reports */
  timeMs: number | null;
  timeSource?: SnapshotTimeSource;
  /** allocator / RSS / cgroup figures beside the heap estimate (core/model/memory-context.ts) */
  memory?: SnapshotMemory | null;
}

export interface SnapshotMemory {
  allocated: number | null;
  active: number | null;
  resident: number | null;
  rss: number | null;
  rssSource: 'context' | 'log' | null;
  cgroupCurrent: number | null;
  cgroupMax: number | null;
  /**
   * RSS − allocated and its likely meaning: the figures, written as a sentence where shown (memory-context.ts
   * gapMessage; sent once per snapshot, the sentence was ~40 % of a large job's summary)
   */
  gap: {
    gap: number;
    dominant: 'fragmentation' | 'unpurged' | 'outside' | null;
    parts: Record<'fragmentation' | 'unpurged' | 'outside', number | null>;
  } | null;
}

/** Who a process was (the capture context), its place in the job's fork/spawn tree and its limit. */
export interface ProcessIdentitySummary {
  name: string | null;
  comm: string | null;
  /** argv, shell-quoted for display */
  cmdline: string | null;
  ppid: number | null;
  hostname: string | null;
  /** the pid in each pid namespace, outermost first, and the host kernel's pid (core/model/memory-context.ts) */
  nsPids?: number[] | null;
  hostPid?: number | null;
  bootId?: string | null;
  startMs: number | null;
  /** index of the parent process in this job, null for roots and unknown */
  parentIndex: number | null;
  /** depth in the tree, and the process indices in depth-first order (same for every process) */
  depth: number;
}

export type TimeAxis = {
  axis: 'wall' | 'seq';
  source: SnapshotTimeSource;
  mtimeProblem: string | null;
  /** valgrind massif's time unit (i, ms, B) when every snapshot has massif's own time (SnapshotSummary.massifTime) */
  massifUnit?: string;
};

export interface ProcessSummary {
  index: number;
  key: string;
  pid: number | null;
  /** the host it ran on (core/model/process-host.ts); absent in old reports */
  host?: string | null;
  /** the host its labels show, `node-a:12`: its host where pids repeat in the job, else null */
  labelHost?: string | null;
  prefix: string;
  /** what ran (core/model/process-name.ts): `python3.12 job.py`; null when nothing names it (use the prefix) */
  name?: string | null;
  snapshots: SnapshotSummary[];
  /**
   * the snapshot the series ends at (core/model/series-end.ts seriesEndIndex): every view's default target; the
   * totals below are over the series, an exit dump after teardown left out
   */
  seriesEnd: number;
  lastLiveBytes: number;
  firstLiveBytes: number;
  maxLiveBytes: number;
  /** least-squares slope of live bytes per snapshot */
  slopeBytesPerSnapshot: number;
  endedWithoutFinalDump: boolean;
  stackCount: number;
  hasPythonFrames: boolean;
  truncatedCount: number;
  /** absent for dumps without a capture context (and in old reports) */
  identity?: ProcessIdentitySummary | null;
  /** depth-first position in the fork/spawn tree (for the process table's tree order) */
  treeOrder?: number;
  /** cgroup memory.max, bytes */
  limitBytes?: number | null;
  /** the snapshot views open on when it is not the last complete one: a PyTorch device's peak (gpu.peakSnapshot) */
  openSnapshot?: number;
  /** a PyTorch snapshot's CUDA device: its memory over time is asked apart (the `gpuTimeline` request) */
  gpuDevice?: number;
  /** the series' time axis (core/model/snapshot-time.ts seriesTimes): wall clock from capture or mtimes, else seq */
  time: TimeAxis;
  /**
   * while a job loads: this process's dumps are still being read; its snapshots are the dump heads' header
   * totals (no stacks yet), and `first` is the position of its first dump in the loader's order (with the load's
   * filesDone, how far it has come)
   */
  pending?: { first: number };
}

export interface WarningSummary {
  file: string;
  line?: number;
  byteOffset?: number;
  message: string;
  kind: 'truncated' | 'maps' | 'binary' | 'other';
}

export interface JobSummary {
  processes: ProcessSummary[];
  warnings: WarningSummary[];
  ignoredFiles: string[];
  /** why the job died, one sentence (core/query/postmortem.ts); null while loading or without processes */
  verdict?: string | null;
  /** the logs read as kill evidence, and what each gave */
  logsRead?: { file: string; gave: string }[];
  /** the kill, the limit and the time to it, heap vs RSS, the culprits (core/query/postmortem-view.ts) */
  postmortem?: PostmortemView | null;
  /** the verdict as a title ("rollout-1 killed: leak in launch.py:59", verdict-title.ts): a report's default */
  title?: string | null;
  /** what the views count first: the profiles' default_sample_type when all agree (jobDefaultSample) */
  defaultSample?: SampleType;
  /** the sample types the profiles declare beyond the four (pprof's), the sample selector's further options */
  declaredSamples?: DeclaredSample[];
  loadMs: number;
  /** time the loader spent waiting for bytes (read-ahead misses) */
  readWaitMs: number;
  bytesTotal: number;
  /** dump readers that parsed in parallel (Web Workers); 0 when this worker read alone */
  readers?: number;
}

/** A process's own identity (the capture context), without its place in the job's tree. */
type OwnIdentity = Omit<ProcessIdentitySummary, 'parentIndex' | 'depth'>;

/**
 * What of a process's summary is its own series' (everything but its index, host label, identity's place in the
 * tree and tree order): made once per process while a job loads (JobSummaryOptions.own) rather than at each update,
 * which summarized every process read so far again (at 1,000 processes, 1.6 s of the thread that merges the dumps).
 */
export interface OwnSummary {
  row: ProcessSummary;
  identity: OwnIdentity | null;
}

/** Who the process was, from its capture context (core/model, as the CLI reads it). */
function ownIdentity(p: ProcessSeries): OwnIdentity | null {
  const id = processIdentity(p);
  return id
    ? {
        name: processName(p),
        comm: id.comm,
        cmdline: id.cmdline ? formatCmdline(id.cmdline) : null,
        ppid: id.ppid,
        hostname: id.hostname,
        nsPids: id.nsPids,
        hostPid: id.hostPid,
        bootId: id.bootId,
        startMs: id.startMs,
      }
    : null;
}

/** Each snapshot's time and memory figures beside the heap estimate, and the series' time axis. */
function snapshotContexts(p: ProcessSeries): {
  time: TimeAxis;
  snapshots: { timeMs: number | null; timeSource: SnapshotTimeSource; memory: SnapshotMemory | null }[];
} {
  const t = seriesTimes(p);
  const mem = seriesMemory(p);
  return {
    time: {
      axis: t.axis,
      source: t.source,
      mtimeProblem: t.mtimeProblem,
      ...(t.massif ? { massifUnit: t.massif.unit } : {}),
    },
    snapshots: p.snapshots.map((_, i) => {
      const m = mem[i];
      const has = m.allocated !== null || m.rss !== null || m.cgroupCurrent !== null;
      const gap = memoryGap(m);
      return {
        timeMs: t.snapshots[i].timeMs,
        timeSource: t.snapshots[i].source,
        memory: has
          ? {
              allocated: m.allocated,
              active: m.active,
              resident: m.resident,
              rss: m.rss,
              rssSource: m.rssSource,
              cgroupCurrent: m.cgroupCurrent,
              cgroupMax: m.cgroupMax,
              gap: gap ? { gap: gap.gap, dominant: gap.dominant, parts: gap.parts } : null,
            }
          : null,
      };
    }),
  };
}

/** A process's own summary (its place in the job left as placeholders, filled by jobSummary). */
function ownSummary(p: ProcessSeries, hasPython: boolean): OwnSummary {
  const identity = ownIdentity(p);
  const c = snapshotContexts(p);
  const teardown = teardownIndex(p);
  return {
    identity,
    row: {
      index: 0,
      key: p.key,
      pid: p.pid,
      host: processHost(p),
      labelHost: null,
      prefix: p.prefix,
      name: identity?.name ?? processName(p),
      snapshots: p.snapshots.map((s, si) => ({
        index: si,
        file: s.file,
        seq: s.seq,
        trigger: dumpTriggerLabel(s),
        liveBytes: s.live.bytes,
        liveObjects: s.live.objects,
        truncated: s.truncated !== null,
        complete: s.complete,
        headerLiveBytes: s.headerLiveBytes,
        mtimeMs: s.mtimeMs,
        ...(si === teardown ? { afterTeardown: true } : {}),
        ...(s.massif?.tree ? { massifTree: s.massif.tree } : {}),
        ...(s.massif ? { massifTime: s.massif.time } : {}),
        ...c.snapshots[si],
      })),
      // totals: a cut dump's header total (its records are partial), else the sum of records
      seriesEnd: seriesEndIndex(p),
      // the process's figures (the table's live and growth) over its series: an exit dump after teardown is not its end
      ...totals(p.snapshots.flatMap((s, si) => (si === teardown ? [] : [snapshotTotalBytes(s)]))),
      endedWithoutFinalDump: p.endedWithoutFinalDump,
      ...(p.gpu?.peakSnapshot !== undefined ? { openSnapshot: p.gpu.peakSnapshot } : {}),
      ...(p.gpu ? { gpuDevice: p.gpu.device } : {}),
      stackCount: p.stacks.count,
      hasPythonFrames: hasPython,
      truncatedCount: p.snapshots.filter((s) => s.truncated !== null).length,
      identity: null,
      treeOrder: 0,
      limitBytes: processLimit(p),
      time: c.time,
    },
  };
}

/** The totals of a series of snapshot heights (header totals for cut dumps): first, last, peak and trend. */
function totals(live: readonly number[]) {
  return {
    lastLiveBytes: live[live.length - 1] ?? 0,
    firstLiveBytes: live[0] ?? 0,
    maxLiveBytes: live.reduce((a, b) => Math.max(a, b), 0),
    slopeBytesPerSnapshot: leastSquaresSlope(live),
  };
}

/** A warning's kind, for the banner that groups them. */
export function warningKind(message: string): WarningSummary['kind'] {
  if (/truncat|ended early|incomplete/i.test(message)) return 'truncated';
  if (/maps/i.test(message)) return 'maps';
  if (/binary|build.?id|unverified|symbol/i.test(message)) return 'binary';
  return 'other';
}

export interface JobSummaryOptions {
  /** whether process `i` has Python frames (the frame catalog knows; core/frames/catalog.ts hasPython) */
  hasPython: (i: number) => boolean;
  loadMs: number;
  bytesTotal: number;
  waitMs: number;
  /** the job is the partial one of a load in progress: no verdict yet (it ranks the job: not per update) */
  partial: boolean;
  /** the limit the user typed (bytes, or null for "no limit"); absent: the one the evidence gives */
  limit?: LimitGiven | null;
  /** a report's own post-mortem (made where the report was, over the dumps and logs it came from) */
  postmortem?: PostmortemView | null;
  /** how the post-mortem ranks the job (core/query/postmortem.ts PostmortemOptions.rank) */
  rank?: (job: Pick<Job, 'processes'>) => JobSuspects;
  /**
   * each process's own summary, kept from one call to the next (a loading job's updates: its processes do not change
   * until the load's end, which summarizes the full job without it)
   */
  own?: WeakMap<ProcessSeries, OwnSummary>;
}

/** The job's summary from its parsed dumps. */
export function jobSummary(j: Job, opts: JobSummaryOptions): JobSummary {
  // the fork/spawn tree is the job's: each process's place in it, and its host label (where pids repeat)
  const order = processTreeOrder(j.processes);
  const indexOf = new Map(j.processes.map((p, i) => [p.key, i] as const));
  const pos = new Map(order.map((o, k) => [o.process.key, { k, depth: o.depth, parent: o.parent }] as const));
  const processes: ProcessSummary[] = j.processes.map((p, index) => {
    let own = opts.own?.get(p);
    if (!own) {
      own = ownSummary(p, opts.hasPython(index));
      opts.own?.set(p, own);
    }
    const where = pos.get(p.key);
    return {
      ...own.row,
      index,
      labelHost: labelHost(j.processes, p),
      identity: own.identity
        ? {
            ...own.identity,
            parentIndex: where?.parent ? (indexOf.get(where.parent) ?? null) : null,
            depth: where?.depth ?? 0,
          }
        : null,
      treeOrder: where?.k ?? 0,
    };
  });
  const warnings: WarningSummary[] = j.warnings.map((w) => ({ ...w, kind: warningKind(w.message) }));
  // A truncated snapshot always shows a warning, even if the loader reported it differently.
  for (const p of j.processes)
    for (const s of p.snapshots)
      if (s.truncated && !warnings.some((w) => w.file === s.file && w.kind === 'truncated'))
        warnings.push({
          file: s.file,
          byteOffset: s.truncated.byteOffset,
          line: s.truncated.line,
          message: `truncated at byte ${s.truncated.byteOffset}: the dump ended early (complete records kept)`,
          kind: 'truncated',
        });
  const pm =
    opts.postmortem ??
    (!opts.partial && j.processes.length > 0 ? jobPostmortem(j, opts.limit ?? null, opts.rank) : null);
  return {
    processes,
    warnings,
    ignoredFiles: unusedFiles(j),
    loadMs: opts.loadMs,
    readWaitMs: opts.waitMs,
    bytesTotal: opts.bytesTotal,
    verdict: pm?.verdict ?? null,
    logsRead: pm?.logsRead.map((l) => ({ file: l.file, gave: l.gave })) ?? [],
    postmortem: pm,
    title: verdictTitle(j, pm),
    defaultSample: jobDefaultSample(j),
    declaredSamples: jobDeclaredSamples(j),
  };
}

/** Why the job died with the limit in force (typed, else the evidence's), as the charts and the report draw it. */
export function jobPostmortem(
  j: Job,
  limit: LimitGiven | null,
  rank?: (job: Pick<Job, 'processes'>) => JobSuspects,
): PostmortemView {
  return viewOf(postmortemQuery(j, { ...(limit ? { limit } : {}), rank }));
}

/** The files no reader took, less those the symbolizer read as binaries or debug files (those are not "ignored"). */
function unusedFiles(j: Job): string[] {
  const used = new Set<string>();
  for (const p of j.processes)
    for (const m of p.symbols?.modules ?? []) {
      if (m.binaryPath) used.add(m.binaryPath.replace(/^\/+/, ''));
      if (m.debugPath) used.add(m.debugPath.replace(/^\/+/, ''));
    }
  return j.ignoredFiles.filter((f) => !used.has(f.replace(/^\/+/, '')));
}

/** A process whose dumps are still being read, from its dump heads: header totals, no stacks. */
export function pendingProcess(p: PreviewProcess, index: number, first: number): ProcessSummary {
  const live = p.snapshots.map((s) => s.headerLiveBytes ?? 0);
  // on the wall clock when the files' times are plausible (as the loader will judge them), else by sequence
  const problem = mtimeProblem(p.snapshots);
  return {
    index,
    key: p.key,
    pid: p.pid,
    prefix: p.prefix,
    snapshots: p.snapshots.map((s, si) => ({
      index: si,
      file: s.file,
      seq: s.seq,
      trigger: s.trigger,
      liveBytes: live[si],
      liveObjects: 0,
      truncated: false,
      complete: true,
      headerLiveBytes: s.headerLiveBytes,
      mtimeMs: s.mtimeMs,
      timeMs: problem === null ? s.mtimeMs : null,
      timeSource: problem === null ? 'mtime' : 'seq',
      memory: null,
    })),
    seriesEnd: live.length - 1,
    ...totals(live),
    endedWithoutFinalDump: false,
    stackCount: 0,
    hasPythonFrames: false,
    truncatedCount: 0,
    identity: null,
    limitBytes: null,
    time:
      problem === null
        ? { axis: 'wall', source: 'mtime', mtimeProblem: null }
        : { axis: 'seq', source: 'seq', mtimeProblem: `${problem}; its dumps are still being read` },
    pending: { first },
  };
}

/**
 * The job so far of a load in progress: the processes read in full (`done`, summarized as a partial job), then the
 * others from the preview's dump heads, in the loader's order.
 */
export function withPending(
  done: JobSummary,
  processes: readonly ProcessSeries[],
  preview: JobPreview | null,
): JobSummary {
  const keys = new Set(processes.map((p) => p.key));
  const pending: ProcessSummary[] = [];
  let first = 0;
  for (const pp of preview?.processes ?? []) {
    if (!keys.has(pp.key)) pending.push(pendingProcess(pp, done.processes.length + pending.length, first));
    first += pp.snapshots.length;
  }
  return { ...done, processes: done.processes.concat(pending) };
}
