import type { Session, StackTarget } from '../notes/schema.js';
import type { AppReport, AppReportRequest } from '../report/app-report.js';
import type { JobBatch } from '../model/job-batches.js';
import type { LoadWarning } from '../model/model.js';
import type { LoadProgress as EngineLoadProgress, ViewOptions } from '../model/vocab.js';
import type { MissingBinariesSummary } from '../symbolize/missing-binaries.js';
import type { JobPreview } from '../load/job-preview.js';
import type { JobSummary } from '../query/job-summary.js';
import type { JobSoFarDelta } from './job-so-far.js';
import type { GrowthRequest, GrowthResult } from '../query/growth-table.js';
import type { FlameData, FlameRequest } from '../query/flame.js';
import type { StackDetail, StackRequest, StackSeries } from '../query/series.js';
import type { SuspectsResult } from '../query/suspects.js';
import type { ProvisionalRanking } from '../query/provisional.js';
import type { ExportRequest } from '../export/job-export.js';
import type { PostmortemView } from '../query/postmortem-view.js';
import type { LimitGiven } from '../query/postmortem.js';
import type { DiffListing, DiffRequest, TopListing, TopRequest } from '../query/stack-listings.js';
import type { GpuTimelineView } from '../query/gpu-timeline.js';
import type { SummaryListing, SummaryRequest } from '../query/summary-listing.js';
import type { GrowthListing, GrowthListingRequest } from '../query/growth-listing.js';
import type { PostmortemListing, PostmortemListingRequest } from '../query/postmortem-listing.js';
import type { BinariesListing, BinariesRequest } from '../query/binaries-listing.js';

export type { JobPreview };

// The engine's API, declared once: every question a view or a command asks (`Request`), its answer (`Response`),
// and the messages that carry them (`ToEngine`, `FromEngine`). One engine (core/engine/answer.ts over a
// core/query/session.ts QuerySession) answers them behind several transports: the browser worker
// (renderer/src/worker/analysis.worker.ts), the report page (in-page), and Node (node/engine/: `heaplens open` over a
// WebSocket, the desktop app's utility process over a MessagePort). Everything heavy happens in the engine; the UI
// receives small summaries and typed arrays, never the dumps.

// The shared vocabulary is the engine's, declared once (core/model/vocab.ts); the frames are core/frames/catalog.ts's.
export type {
  FrameGroup,
  FrameKind,
  ModuleRole,
  SampleType,
  StackFilterChip,
  StackMode,
  ViewOptions,
} from '../model/vocab.js';
export type { FrameInfo } from '../frames/catalog.js';
// What the worker answers is the query layer's typed data (core/query/*.ts), declared there once.
export type {
  JobSummary,
  ProcessIdentitySummary,
  ProcessSummary,
  SnapshotMemory,
  SnapshotSummary,
  WarningSummary,
} from '../query/job-summary.js';
export type { GrowthResult, StackRow } from '../query/growth-table.js';
export type { FunctionRow } from '../query/functions.js';
export type { FlameData, FlameShape } from '../query/flame.js';
export type { StartupFold } from '../query/flame-startup.js';
export type { StackDetail, StackSeries } from '../query/series.js';
export type { ProcessVerdict, SuspectMember, SuspectRow, SuspectsResult } from '../query/suspects.js';
export type { ProvisionalRanking } from '../query/provisional.js';
export type { ExportFormat, ExportRequest } from '../export/job-export.js';
export type { DiffListing, DiffRequest, ListedStack, TopListing, TopRequest } from '../query/stack-listings.js';
export type { GpuSpanView, GpuTimelineView } from '../query/gpu-timeline.js';
export type { SummaryListing, SummaryRequest } from '../query/summary-listing.js';
export type { GrowthListing, GrowthListingRequest } from '../query/growth-listing.js';
export type { LimitText, PostmortemListing, PostmortemListingRequest } from '../query/postmortem-listing.js';
export type { BinariesListing, BinariesRequest } from '../query/binaries-listing.js';

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
   * the job so far as the load sends it: what changed since its last update (job-so-far.ts applyJobSoFar puts it
   * together). `partial` is the whole of it, for a window that attaches to a load under way (the Node engine's).
   */
  partialDelta?: JobSoFarDelta;
  /**
   * until the first process is read whole: the ranking of the dumps read so far (core/query/provisional.ts), at
   * most one every ~second, for the first screen to show as provisional; the job's own replaces it
   */
  provisional?: ProvisionalRanking;
}

/** Which engine answers, for the UI to show (and the bench to check): in the page, or Node behind a transport. */
export interface EngineInfo {
  kind: 'in-page' | 'node';
  /** in words, for the header: "in this page", "heaplens open (Node)", "the desktop app's engine (Node)" */
  label: string;
  /** the paths the engine was started on (`heaplens open <paths…>`), when it was: the page opens that job */
  served: string[] | null;
}

export type Request =
  | { type: 'load'; files: SourceFile[]; symbolFiles?: SourceFile[] }
  /** Node engines: the job they were started on (`heaplens open <paths…>`), loaded once; later asks attach to it */
  | { type: 'open' }
  /** the desktop app's engine: paths the user dropped or picked (a served engine refuses it: the page names no path) */
  | { type: 'openPaths'; paths: string[]; symbolDirs?: string[] }
  | { type: 'engineInfo' }
  /** the job sent before it as `jobBatch` messages (a dataset read by the desktop app's main process) */
  | { type: 'loadBatches' }
  | { type: 'summary' }
  /** the post-mortem again with the limit the user typed (null: the limit the evidence gives) */
  | { type: 'postmortem'; limit: LimitGiven | null }
  | { type: 'stackSeries'; proc: number; n: number; view: ViewOptions }
  | ({ type: 'growth' } & GrowthRequest)
  /** one snapshot's stacks by the sample's value in each process (`heaplens top`) */
  | ({ type: 'top' } & TopRequest)
  /** the change between two snapshots in each process, largest growth first (`heaplens diff`) */
  | ({ type: 'diff' } & DiffRequest)
  /** the processes, their snapshots with capture context, the warnings (`heaplens summary`) */
  | ({ type: 'summaryListing' } & SummaryRequest)
  /** the job-wide suspects, then each process's series; the page of many processes (`heaplens growth`) */
  | ({ type: 'growthListing' } & GrowthListingRequest)
  /** why the job died, its fates and memory, its top suspects job-wide (`heaplens postmortem`) */
  | ({ type: 'postmortemListing' } & PostmortemListingRequest)
  /** each process's modules whose frames stay unresolved at a snapshot, and what to hand over (`heaplens binaries`) */
  | ({ type: 'binariesListing' } & BinariesRequest)
  /** the job-wide ranking: top `limit` stacks across processes, with each holder's series and σ */
  | { type: 'suspects'; view: ViewOptions; limit: number }
  | ({ type: 'flame' } & FlameRequest)
  /** modules whose frames stay unresolved at a snapshot (core/symbolize/missing-binaries.ts) */
  | { type: 'missingBinaries'; proc: number; snapshot: number; view: ViewOptions }
  /** a PyTorch snapshot's device over time (core/query/gpu-timeline.ts), at most `maxPoints` points a line */
  | { type: 'gpuTimeline'; proc: number; maxPoints: number }
  | ({ type: 'stack' } & StackRequest)
  /** stacks as note targets (their return addresses), for notes and sessions */
  | { type: 'stackTargets'; proc: number; stackIds: number[] }
  /** note/session stack targets back to stack ids (null: not in these dumps) */
  | { type: 'resolveStacks'; targets: StackTarget[] }
  /** the single-file HTML report (html null when only the sanitize preview is asked for) */
  | ({ type: 'report' } & AppReportRequest)
  /** interop export of the processes' snapshots (core/export/job-export.ts; `heaplens export` asks the same) */
  | ({ type: 'export' } & ExportRequest)
  /** a report (its file's text, or the payload a report page embeds) becomes the loaded job; its session is
   *  returned read-only */
  | { type: 'reopenReport'; html?: string; payload?: string }
  | { type: 'close' };

/**
 * A Node engine's load as a client gets its end: to a client that has the job so far the load last sent (each
 * `partialDelta`), what changed since (`delta`: applyJobSoFar puts the full job's summary together); to one that
 * attached after the load, the whole `summary`. The whole was ~8 MB at 1,000 processes: ~150 ms to encode on the
 * engine's merging thread and the page's longest task to decode.
 */
export type LoadEnd = { summary: JobSummary; delta?: undefined } | { summary?: undefined; delta: JobSoFarDelta };

export type Response =
  | { type: 'load'; summary: JobSummary }
  | ({ type: 'open' } & LoadEnd)
  | ({ type: 'openPaths' } & LoadEnd)
  | { type: 'engineInfo'; info: EngineInfo }
  | { type: 'loadBatches'; summary: JobSummary }
  | { type: 'summary'; summary: JobSummary }
  | { type: 'postmortem'; postmortem: PostmortemView | null }
  | { type: 'stackSeries'; series: StackSeries }
  | { type: 'growth'; growth: GrowthResult }
  | { type: 'top'; listing: TopListing }
  | { type: 'diff'; listing: DiffListing }
  | { type: 'summaryListing'; listing: SummaryListing }
  | { type: 'growthListing'; listing: GrowthListing }
  | { type: 'postmortemListing'; listing: PostmortemListing }
  | { type: 'binariesListing'; listing: BinariesListing }
  | { type: 'suspects'; suspects: SuspectsResult }
  | { type: 'flame'; flame: FlameData }
  | { type: 'missingBinaries'; summary: MissingBinariesSummary; symbolized: boolean }
  | { type: 'stack'; stack: StackDetail }
  | { type: 'gpuTimeline'; timeline: GpuTimelineView | null }
  | { type: 'stackTargets'; targets: StackTarget[] }
  | { type: 'resolveStacks'; ids: ({ proc: number; stackId: number } | null)[] }
  | ({ type: 'report' } & AppReport)
  | {
      type: 'export';
      data: string | Uint8Array;
      name: string;
      mime: string;
      processes: number;
      warnings: LoadWarning[];
    }
  | { type: 'reopenReport'; session: Session; summary: JobSummary }
  | { type: 'close' };

/** What the UI sends an engine. */
export type ToEngine =
  | { id: number; req: Request }
  /** files sent ahead of a 'load' in batches (each batch is a separate task on the UI thread) */
  | { stage: SourceFile[] }
  /** one batch of a job ahead of a 'loadBatches' (core/model/job-batches.ts) */
  | { jobBatch: JobBatch }
  | { cancel: number }
  | { readReply: number; bytes?: Uint8Array; error?: string };

/** The questions any engine answers the same way over its loaded job (core/engine/answer.ts). */
export type Query = Exclude<Request, { type: 'load' | 'loadBatches' | 'open' | 'openPaths' | 'engineInfo' }>;
export type ResponseOf<T extends Request['type']> = Extract<Response, { type: T }>;

/** What an engine sends the UI. */
export type FromEngine =
  | { id: number; ok: true; res: Response; ms: number }
  | { id: number; ok: false; error: string; cancelled: boolean }
  | { id: number; progress: LoadProgress }
  | { read: number; hostPath: string; offset: number; length: number };
