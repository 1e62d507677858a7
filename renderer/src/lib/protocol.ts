import type { Session, StackTarget } from '../../../core/notes/schema.ts';
import type { SanitizeOptions, SanitizePreview } from '../../../core/report/build-report.ts';
import type { JobBatch } from '../../../core/model/job-batches.ts';
import type { LoadProgress as EngineLoadProgress, ViewOptions } from '../../../core/model/vocab.ts';
import type { MissingBinariesSummary } from '../../../core/symbolize/missing-binaries.ts';
import type { JobPreview } from '../../../core/load/job-preview.ts';
import type { JobSummary } from '../../../core/query/job-summary.ts';
import type { GrowthResult } from '../../../core/query/growth-table.ts';
import type { FlameData, FlameShape } from '../../../core/query/flame.ts';
import type { StackDetail, StackSeries } from '../../../core/query/series.ts';
import type { SuspectsResult } from '../../../core/query/suspects.ts';
import type { ProvisionalRanking } from '../../../core/query/provisional.ts';
import type { ExportFormat } from '../../../core/export/snapshot-export.ts';
import type { PostmortemView } from '../../../core/query/postmortem-view.ts';
import type { LimitGiven } from '../../../core/query/postmortem.ts';

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
// What the worker answers is the query layer's typed data (core/query/*.ts), declared there once.
export type {
  JobSummary,
  ProcessIdentitySummary,
  ProcessSummary,
  SnapshotMemory,
  SnapshotSummary,
  WarningSummary,
} from '../../../core/query/job-summary.ts';
export type { GrowthResult, StackRow } from '../../../core/query/growth-table.ts';
export type { FunctionRow } from '../../../core/query/functions.ts';
export type { FlameData, FlameShape } from '../../../core/query/flame.ts';
export type { StartupFold } from '../../../core/query/flame-startup.ts';
export type { StackDetail, StackSeries } from '../../../core/query/series.ts';
export type { ProcessVerdict, SuspectMember, SuspectRow, SuspectsResult } from '../../../core/query/suspects.ts';
export type { ProvisionalRanking } from '../../../core/query/provisional.ts';
export type { ExportFormat } from '../../../core/export/snapshot-export.ts';

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
  /**
   * until the first process is read whole: the ranking of the dumps read so far (core/query/provisional.ts), at
   * most one every ~second, for the first screen to show as provisional; the job's own replaces it
   */
  provisional?: ProvisionalRanking;
}

export type Request =
  | { type: 'load'; files: SourceFile[]; symbolFiles?: SourceFile[] }
  /** the job sent before it as `jobBatch` messages (a dataset read by the desktop app's main process) */
  | { type: 'loadBatches' }
  | { type: 'summary' }
  /** the post-mortem again with the limit the user typed (null: the limit the evidence gives) */
  | { type: 'postmortem'; limit: LimitGiven | null }
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

export type Response =
  | { type: 'load'; summary: JobSummary }
  | { type: 'loadBatches'; summary: JobSummary }
  | { type: 'summary'; summary: JobSummary }
  | { type: 'postmortem'; postmortem: PostmortemView | null }
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
