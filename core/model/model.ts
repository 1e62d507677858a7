// The analysis model: per-process series of snapshots over interned stacks, values stored columnar.
// Everything here is already unbiased (jeprof's AdjustSamples applied per record before any sum).

import type { KernelOomLog } from '../formats/kernel-oom.js';
import type { CgroupFile } from '../formats/cgroup-memory.js';
import type { JobLog } from '../formats/job-log.js';
import type { SmapsRollup } from '../formats/smaps-rollup.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import type { DumpFormat, ProfileFrame, Trigger } from '../formats/dump-types.js';
import type { PyFrameTable } from '../formats/pyframes.js';
import type { DumpContext } from '../formats/dump-context.js';
import type { SymbolTable } from './symbol-table.js';
import type { SampleType } from './vocab.js';

/** Interned return addresses of one process, as normalized hex strings ("0x7f…", lowercase, no padding). */
export interface AddressTable {
  hex: string[];
  /** hex → address id */
  index: Map<string, number>;
}

/** Interned stacks of one process. Stack `i` has frames addressIds[offsets[i] .. offsets[i+1]), leaf first. */
export interface StackTable {
  count: number;
  /** start of each stack's frames in `frames`; length count+1 once sealed, grows while loading */
  offsets: number[];
  /** address ids, leaf first (typed: a deep process's are tens of thousands, which the collector need not visit) */
  frames: Uint32Array;
  /** leading frames of each stack that lie in the allocator (jemalloc) library: views hide them by default */
  allocatorDepth: number[];
}

export interface Counts {
  objects: number;
  bytes: number;
}

export interface ThreadTotals {
  /** jemalloc's per-thread uid (not the OS tid) */
  uid: number;
  name: string | null;
  live: Counts;
  accumulated: Counts;
}

export interface Snapshot {
  /** path as given by the user (relative to the folder opened, or absolute) */
  file: string;
  /** global dump sequence number from the file name, or null when the name has none */
  seq: number | null;
  trigger: Trigger;
  /** the number after the trigger letter (i3 → 3), null for final or unnamed */
  triggerSeq: number | null;
  mtimeMs: number | null;
  /**
   * when a log given with the dumps says this dump was written (a line naming its file with a time: a listing made
   * on the node, a job's "wrote …heap" line): its time when it has no capture clock and the copy lost mtimes
   * (core/load/evidence-load.ts); absent without one
   */
  logTime?: { ms: number; file: string; line: number };
  format: DumpFormat;
  /** 2^lg_prof_sample; 1 means every allocation was recorded */
  samplePeriod: number;
  /** sum of the unbiased records (what jeprof prints as Total) */
  live: Counts;
  accumulated: Counts;
  /** the dump's own header line (approximate; not the sum of records when jemalloc unbiased internally) */
  header: { live: Counts; accumulated: Counts };
  hasAccumulated: boolean;
  threads: ThreadTotals[];
  /** set when the file ended early; every complete record before it is kept */
  truncated: { byteOffset: number; line: number } | null;
  /**
   * false when the file was cut before its last record (truncated): its records are only part of the
   * heap. Views default to the last complete snapshot (core/model/snapshot-status.ts).
   */
  complete: boolean;
  /** the header's `t*` live bytes, unbiased as one record; null when the header has none (heap_profile 3.x has one too) */
  headerLiveBytes: number | null;
  /** columnar, sparse: the stacks present in this snapshot and their unbiased values */
  stackIds: Uint32Array;
  liveBytes: Float64Array;
  liveObjects: Float64Array;
  /** variance (bytes²) of each cell's live-bytes estimate from jemalloc's sampling model (core/model/sampling-error.ts); 0 when exact */
  liveVarBytes: Float64Array;
  /** null when the dump has no accumulated values (prof_accum off) */
  accumBytes: Float64Array | null;
  accumObjects: Float64Array | null;
  /** where the maps used for this snapshot came from */
  mapsSource: 'dump' | 'file' | null;
  /**
   * What the capture library recorded with this dump (time, process identity, allocator, RSS and
   * cgroup counters; docs/pyframes-format.md §5a); absent for dumps from jemalloc alone.
   */
  context?: DumpContext | null;
  /** the sample type the profile asks viewers to show first (pprof's default_sample_type); absent for dumps */
  defaultSample?: SampleType;
  /**
   * a pprof profile with no in-use bytes (alloc_space or alloc_objects only): its live columns are zeros, not a
   * measurement; absent for every other input
   */
  noLive?: true;
  /**
   * The values of the sample types a pprof profile declares beyond the built-in four, per row of stackIds (in the
   * file's order; absent for dumps). sampleSeries puts one in the live columns when it is chosen.
   */
  extraSamples?: ExtraSample[];
  /**
   * a massif snapshot's figures beside its heap (massif.ts): time in the file's unit (i instructions, ms, B
   * allocated and freed), heap-admin and stack bytes, whether massif kept its tree (peak: massif's peak snapshot;
   * empty: totals only, one row), the heap its tree does not explain (a row of its own), and the command massif ran
   */
  massif?: {
    time: number;
    timeUnit: string;
    heapExtraBytes: number;
    stacksBytes: number;
    tree?: 'empty' | 'detailed' | 'peak';
    unexplainedBytes?: number;
    cmd?: string;
  };
}

export interface ExtraSample {
  /** the profile's sample type and unit strings (`samples`/`count`, `tlab`/`bytes`) */
  type: string;
  unit: string;
  values: Float64Array;
  total: number;
}

export interface ProcessSeries {
  /** stable key: prefix + pid namespace + pid, or the folder for unnamed files */
  key: string;
  pid: number | null;
  pidNamespace: number | null;
  prefix: string;
  /**
   * the top folder under the job root its dumps came from (`node-a/…`), set by the loader when the job's dumps
   * lie in more than one; the host is the capture context's hostname before it (core/model/process-host.ts)
   */
  host?: string | null;
  snapshots: Snapshot[];
  stacks: StackTable;
  addresses: AddressTable;
  /** the maps of the last snapshot that had any (addresses of one process keep their mappings, short of dlclose) */
  maps: MapsEntry[] | null;
  /** true when the series has no final ('f') dump: the process was killed or was still running */
  endedWithoutFinalDump: boolean;
  /**
   * PYFRAMES/1 table naming the Python pseudo-addresses in this process's stacks (merged from the
   * tables of its dumps: appended to a dump or in a `<dump>.pyframes` sidecar); absent without any.
   */
  pythonFrames?: PyFrameTable | null;
  /** the CUDA device of a series read from a PyTorch memory snapshot (core/load/capture-series.ts) */
  gpu?: GpuSeriesInfo;
  /**
   * The process's symbols (pprof's "symbolize into the profile"): written once by core/symbolize/symbolize-job.ts,
   * or read back from a dataset or a report; null before symbolization, without maps, or with --no-symbols.
   */
  symbols: SymbolTable | null;
  /**
   * Frames named by the profiles themselves (pprof locations, massif trees), by hex address ("0x…"): the
   * symbolizer uses them before any binary
   */
  profileSymbols?: Map<string, ProfileFrame[]>;
  /** RSS over time from a CSV log given with the dumps (core/load/rss-log-align.ts); absent without one */
  rssLog?: { file: string; timeMs: number[]; rss: number[] };
  /**
   * The role a job log gives this process's pid (`[rollout-1 pid=N]`, `started loader-1 pid=N`): its name in
   * every view (core/model/process-name.ts); absent when no log names it (core/load/evidence-load.ts)
   */
  role?: { name: string; file: string; line: number };
}

/** The GPU side of a series read from a PyTorch snapshot: what the heap model has no place for. */
export interface GpuSeriesInfo {
  device: number;
  reservedBytes: number;
  allocatedBytes: number;
  pendingFreeBytes: number;
  inactiveBytes: number;
  segments: number;
  /**
   * reserved, allocated and cached (reserved − allocated: held by the caching allocator for reuse) bytes over
   * time (ms since the epoch from the trace's time_us, or the entry index without it)
   */
  timeline: { timeMs: number[]; allocated: number[]; reserved: number[]; cached: number[] };
  ooms: { timeMs: number | null; size: number; deviceFree: number }[];
  /** record_function / external annotations as spans on the same clock (endMs null: open when taken) */
  spans: { name: string; startMs: number; endMs: number | null }[];
  settings: Record<string, string>;
  /** what the file held: `_dump_snapshot`'s dict, or the bare segment list `memory_snapshot()` returns */
  source?: 'snapshot' | 'segments';
  /** index in `snapshots` of the trace's peak of live bytes (where views open), absent without a trace */
  peakSnapshot?: number;
}

export interface LoadWarning {
  file: string;
  /** 1-based line, when the problem is on a line */
  line?: number;
  /** byte offset into the (decompressed) file */
  byteOffset?: number;
  message: string;
}

export interface Job {
  processes: ProcessSeries[];
  warnings: LoadWarning[];
  /** files recognised as neither dumps nor side files */
  ignoredFiles: string[];
  /** kill evidence and memory files read from the other files given (core/load/evidence-load.ts); absent without any */
  evidence?: JobEvidence;
}

/** What the files given beside the dumps said about how the job died (each reader in core/formats/). */
export interface JobEvidence {
  kernel: { file: string; log: KernelOomLog }[];
  cgroup: { file: string; cg: CgroupFile }[];
  jobLogs: { file: string; log: JobLog }[];
  smaps: { file: string; rollup: SmapsRollup }[];
}

/** Frames of stack `id`, leaf first (address ids). */
export function stackFrames(stacks: StackTable, id: number): number[] {
  return Array.from(stacks.frames.subarray(stacks.offsets[id], stacks.offsets[id + 1]));
}
