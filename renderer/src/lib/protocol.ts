import type { Session, StackTarget } from '../../../core/notes/schema.ts';
import type { SanitizeOptions, SanitizePreview } from '../../../core/report/build-report.ts';
import type { SelfTotal } from '../../../core/stats/function-diff.ts';
import type { JobBatch } from '../../../core/model/job-batches.ts';
import type { FrameGroup, LoadProgress as EngineLoadProgress, ViewOptions } from '../../../core/model/vocab.ts';
import type { FrameInfo } from '../../../core/frames/catalog.ts';
import type { MissingBinariesSummary } from '../../../core/symbolize/missing-binaries.ts';
import type { JobPreview } from '../../../core/load/job-preview.ts';

export type { JobPreview };

// Messages between the UI thread and the analysis worker. Everything heavy (reading, parsing, diffing,
// growth ranking, tree building) happens in the worker; the UI receives small summaries and typed arrays.

// The shared vocabulary is the engine's, declared once (core/model/vocab.ts); the frames are core/frames/catalog.ts's.
export type {
  FrameGroup,
  FrameKind,
  ModuleRole,
  SampleType,
  StackFilterChip,
  StackMode,
  ViewOptions,
} from '../../../core/model/vocab.ts';
export type { FrameInfo } from '../../../core/frames/catalog.ts';

/**
 * A file to load: a Blob (browser) or a path read through the host (Electron). For Blobs, size and mtime are
 * read in the worker (-1 / null here): on the UI thread each File.size of a disk-backed file is a synchronous
 * round trip to the browser process, which for 10,000 files blocks the page for seconds.
 */
export interface SourceFile {
  path: string;
  size: number;
  mtimeMs: number | null;
  blob?: Blob;
  hostPath?: string;
}

/** A load's progress as the window gets it: the engine's (core/model/vocab.ts), and what only the app sends. */
export interface LoadProgress extends Omit<EngineLoadProgress, 'phase'> {
  /** the engine's phase (LoadPhase), or a step of the window's own in words ("reading the dataset (3 batches)") */
  phase: string;
  /** sent once, early: every process's timeline from the dump heads (core/load/job-preview.ts) */
  preview?: JobPreview;
  /**
   * the job so far, as each process's dumps are all read (at most one every ~500 ms): the processes read
   * so far in full, the others from their dump heads (`ProcessSummary.pending`). The worker's queries answer
   * on it meanwhile (growth, flame graphs, suspects of the processes read), so the views fill in process by
   * process; the full job (symbolized) replaces it.
   */
  partial?: JobSummary;
}

export interface SnapshotSummary {
  index: number;
  file: string;
  seq: number | null;
  trigger: string;
  liveBytes: number;
  liveObjects: number;
  truncated: boolean;
  /** false for a dump cut before its last record (its records are partial) */
  complete: boolean;
  /** the header's total (a cut dump's total), null without one */
  headerLiveBytes: number | null;
  mtimeMs: number | null;
  /** wall-clock time (ms since the epoch) and where it came from (core/model/snapshot-time.ts); absent in old reports */
  timeMs: number | null;
  timeSource?: 'capture' | 'mtime' | 'seq';
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
  /** RSS − allocated and its likely meaning */
  gap: {
    gap: number;
    dominant: 'fragmentation' | 'unpurged' | 'outside' | null;
    message: string;
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
  startMs: number | null;
  /** index of the parent process in this job, null for roots and unknown */
  parentIndex: number | null;
  /** depth in the tree, and the process indices in depth-first order (same for every process) */
  depth: number;
}

export interface ProcessSummary {
  index: number;
  key: string;
  pid: number | null;
  prefix: string;
  /** what ran (core/model/process-name.ts): `python3.12 job.py`; null when nothing names it (use the prefix) */
  name?: string | null;
  snapshots: SnapshotSummary[];
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
  /** the series' time axis (core/model/snapshot-time.ts seriesTimes): wall clock from capture or mtimes, else seq */
  time: { axis: 'wall' | 'seq'; source: 'capture' | 'mtime' | 'seq'; mtimeProblem: string | null };
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
  loadMs: number;
  /** time the loader spent waiting for bytes (read-ahead misses) */
  readWaitMs: number;
  bytesTotal: number;
  /** dump readers that parsed in parallel (Web Workers); 0 when this worker read alone */
  readers?: number;
}

export interface StackSeries {
  stackIds: number[];
  labels: string[];
  /** values[k][snapshot] for stack k; the last row is "other" */
  values: number[][];
}

export interface StackRow {
  /** the representative stack (largest |Δ|) of the rows merged here */
  stackId: number;
  /** every stack shown as this row: stacks whose visible frames are the same in this view (allocator frames
   *  hidden, Python-only or native-only) are one row */
  members: number[];
  label: string;
  /** caller chain of the label, short */
  context: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** `file:line` of the naming frame (core/frames/stack-labels.ts callSite); absent in old reports */
  site?: string | null;
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  deltaPct: number;
  baseObjects: number;
  targetObjects: number;
  status: 'new' | 'gone' | 'grown' | 'shrunk' | 'same';
  /** steadiness of growth over the whole series (core/stats/growth.ts), summed over the members */
  steadiness: number;
  slope: number;
  growingFraction: number;
  /** 1σ of deltaBytes from the sampling model (Var_base + Var_target) */
  sigmaDeltaBytes: number;
  /** |Δ| < 2σ: sampling alone can explain it (greyed) */
  withinNoise: boolean;
}

export interface FunctionRow extends SelfTotal {
  key: number;
  label: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** the function's source file (null for native frames without debug info) and module */
  file?: string | null;
  module?: string | null;
}

export interface GrowthResult {
  /** the request it answers */
  proc: number;
  pid: number | null;
  base: number;
  target: number;
  stacks: StackRow[];
  stackCount: number;
  functions: FunctionRow[];
  /** functions before the cut to the request's functionLimit (absent: none were cut) */
  functionCount?: number;
  baseTotal: number;
  targetTotal: number;
}

/** Flame graph of a snapshot (base null) or a diff. Arrays are in preorder; node 0 is the root. */
export interface FlameData {
  size: number;
  depth: Uint16Array;
  end: Int32Array;
  parent: Int32Array;
  key: Int32Array;
  total: Float64Array;
  self: Float64Array;
  totalObjects: Float64Array;
  baseTotal: Float64Array | null;
  absDeltaTotal: Float64Array | null;
  /** diff only: variance (bytes²) of each node's Δ from the sampling model (Var_base + Var_target of its stacks); absent in reports */
  deltaVar?: Float64Array | null;
  maxDepth: number;
  /** frame info by key (only keys present in the tree) */
  frames: Record<number, FrameInfo>;
  /** node where each stack ends: stackId → node */
  stackNodes: Record<number, number>;
  baseGrand: number;
  targetGrand: number;
}

export interface StackDetail {
  stackId: number;
  /** leaf first, after mode filtering; allocator frames included and flagged; `fold`: the index of the run of
   *  folded frames (interpreter, import machinery) the frame belongs to in the python-first view */
  frames: (FrameInfo & { hidden: boolean; fold?: number })[];
  series: number[];
  baseBytes: number;
  targetBytes: number;
  /** the stack's verdict in the job-wide ranking (core/stats/patterns.ts), absent in reports */
  verdict?: {
    pattern: string;
    score: number;
    sigmaBytes: number;
    withinNoise: boolean;
    lateRate: number;
    lateRatePerSecond: boolean;
    groupProcesses: number;
    /** rank of this (process, stack) among every process's stacks (0 = top) */
    rank: number;
    /** the stack's Suspects row (its group across the processes that hold it): rank (0 = top) and score */
    rowRank: number;
    rowScore: number;
    note: string | null;
  };
}

/** One process's series of a suspect stack: live bytes and 1σ per snapshot (all snapshots; cut ones flagged). */
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
  /** late Theil–Sen slope: per second when times are known, else per snapshot */
  lateRate: number;
  lateRatePerSecond: boolean;
  series: number[];
  sigma: number[];
  complete: boolean[];
}

/** A stack across the processes that hold it (core/stats/suspects.ts group), ranked job-wide. */
export interface SuspectRow {
  group: number;
  pattern: string;
  score: number;
  deltaBytes: number;
  lastBytes: number;
  sigmaBytes: number;
  withinNoise: boolean;
  label: string;
  context: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** `file:line` of the naming stack's first Python frame (else first frame with a line), null when none */
  site: string | null;
  /** the holders' late Theil–Sen slopes summed: per second when every holder's times are known, else per dump */
  lateRate: number;
  lateRatePerSecond: boolean;
  /** members by score; the first is the group's top */
  members: SuspectMember[];
  /** processes holding the stack (members may list fewer: only the top few carry series) */
  processCount: number;
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

export type Request =
  | { type: 'load'; files: SourceFile[]; symbolFiles?: SourceFile[] }
  /** the job sent before it as `jobBatch` messages (a dataset read by the desktop app's main process) */
  | { type: 'loadBatches' }
  | { type: 'summary' }
  | { type: 'stackSeries'; proc: number; n: number; view: ViewOptions }
  | {
      type: 'growth';
      proc: number;
      base: number;
      target: number;
      view: ViewOptions;
      limit: number;
      /** rows of the by-function table (by Δ total), `limit` when absent */
      functionLimit?: number;
    }
  /** the job-wide ranking: top `limit` stacks across processes, with each holder's series and σ */
  | { type: 'suspects'; view: ViewOptions; limit: number }
  | { type: 'flame'; proc: number; snapshot: number; base: number | null; view: ViewOptions; shape?: FlameShape }
  /** modules whose frames stay unresolved at a snapshot (core/symbolize/missing-binaries.ts) */
  | { type: 'missingBinaries'; proc: number; snapshot: number; view: ViewOptions }
  | {
      type: 'stack';
      proc: number;
      stackId: number;
      members?: number[];
      base: number;
      target: number;
      view: ViewOptions;
    }
  /** stacks as note targets (their return addresses), for notes and sessions */
  | { type: 'stackTargets'; proc: number; stackIds: number[] }
  /** note/session stack targets back to stack ids (null: not in these dumps) */
  | { type: 'resolveStacks'; targets: StackTarget[] }
  /** the single-file HTML report (html null when only the sanitize preview is asked for) */
  | {
      type: 'report';
      procs: number[];
      base: number;
      target: number;
      session: Session;
      title: string;
      sanitize: SanitizeOptions;
      view: ViewOptions;
      previewOnly: boolean;
    }
  /** interop export of one snapshot of the given processes */
  | { type: 'export'; format: ExportFormat; procs: number[]; snapshot: number; view: ViewOptions }
  /** a report (its file's text, or the payload a report page embeds) becomes the loaded job; its session is
   *  returned read-only */
  | { type: 'reopenReport'; html?: string; payload?: string }
  | { type: 'close' };

export type ExportFormat = 'pprof' | 'folded' | 'speedscope';

/**
 * The shape of a flame-graph tree: as recorded (root on top), bottom-up (allocation sites as roots), or the
 * callers / callees of one frame key (the sandwich view). `by`: weigh by the snapshot's bytes (or the diff's
 * target and Δ when a base is given), or by each stack's steady-growth slope.
 */
export interface FlameShape {
  kind: 'normal' | 'inverted' | 'callers' | 'callees';
  key?: number;
  by?: 'bytes' | 'growth';
}

export type Response =
  | { type: 'load'; summary: JobSummary }
  | { type: 'loadBatches'; summary: JobSummary }
  | { type: 'summary'; summary: JobSummary }
  | { type: 'stackSeries'; series: StackSeries }
  | { type: 'growth'; growth: GrowthResult }
  | { type: 'suspects'; suspects: SuspectsResult }
  | { type: 'flame'; flame: FlameData }
  | { type: 'missingBinaries'; summary: MissingBinariesSummary; symbolized: boolean }
  | { type: 'stack'; stack: StackDetail }
  | { type: 'stackTargets'; targets: StackTarget[] }
  | { type: 'resolveStacks'; ids: ({ proc: number; stackId: number } | null)[] }
  | { type: 'report'; html: string | null; preview: SanitizePreview; bytes: number }
  | { type: 'export'; data: string | Uint8Array; name: string; mime: string }
  | { type: 'reopenReport'; session: Session; summary: JobSummary }
  | { type: 'close' };

export type ToWorker =
  | { id: number; req: Request }
  /** files sent ahead of a 'load' in batches (each batch is a separate task on the UI thread) */
  | { stage: SourceFile[] }
  /** one batch of a job ahead of a 'loadBatches' (core/model/job-batches.ts) */
  | { jobBatch: JobBatch }
  | { cancel: number }
  | { readReply: number; bytes?: Uint8Array; error?: string };

export type FromWorker =
  | { id: number; ok: true; res: Response; ms: number }
  | { id: number; ok: false; error: string; cancelled: boolean }
  | { id: number; progress: LoadProgress }
  | { read: number; hostPath: string; offset: number; length: number };
