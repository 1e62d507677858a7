// One dump read on its own: the unit of work of the parallel loader (a worker thread or Web Worker per
// task, or in-thread). Stacks are interned per task; the merging thread re-interns each task's distinct
// stacks into its process (mergeDumpTask), so ids, rows and sums come out exactly as a serial read.

import type { InputFile } from '../formats/input-file.js';
import type { Inflater } from '../formats/inflate.js';
import { readDump } from '../formats/read-dump.js';
import { BacktraceCache } from '../formats/backtrace-cache.js';
import { readSidecar, type SidecarRead } from '../formats/pyframes.js';
import type { ProfileFrame } from '../formats/dump-types.js';
import { truncationText } from '../formats/heap-dump.js';
import type { LoadWarning, Snapshot } from '../model/model.js';
import {
  SnapshotBuilder,
  type ProcessBuilder,
  type SnapshotMeta,
  type StackInterner,
  stackHash,
} from '../model/process-builder.js';
import { LocalStacks, SerialMap, type SentSerials, type TaskStacks } from './stack-delta.js';
import type { TorchSnapshot } from '../formats/torch-snapshot.js';
import type { MemleakFile } from '../formats/memleak.js';

export interface DumpTask {
  file: InputFile;
  meta: SnapshotMeta;
  /**
   * which reader (core/formats/sniff.ts told it): a text dump when absent; 'torch-snapshot' reads a PyTorch
   * snapshot's pickle (the result's `torch`, whose series the loader builds)
   */
  kind?: 'text' | 'pprof' | 'massif' | 'torch-snapshot' | 'memleak';
  /** for massif: which snapshot of the file */
  part?: number;
  /** the dump's `.pyframes` sidecar: read and parsed by the task, beside its dump (not by the merging thread) */
  sidecar?: InputFile;
  /**
   * the job's only dump: no later task reads its lines again, so they are not kept in the thread's backtrace
   * cache (keeping them was ~2 % of `top` of one 1 MB dump)
   */
  alone?: boolean;
}

/** The parts of the parser's info the merge still needs (maps and Python tables, read per process). */
export interface DumpTaskInfo {
  mapsText: string | null;
  mapsFirstLine: number;
  mapsComplete: boolean;
  /** text after the maps that starts with a known trailer header (a PYFRAMES/1 table), else null */
  trailerText: string | null;
  /** frames the profile names itself (pprof, massif), by hex address; null for jemalloc dumps */
  symbols: Map<string, ProfileFrame[]> | null;
  /** the task's sidecar, read when the dump has no table of its own; null when there was none to read */
  sidecar: SidecarRead | null;
  /** build-ids of the mapped files by path, when the profile names them (pprof); null for jemalloc dumps */
  buildIds: Record<string, string> | null;
}

export interface DumpTaskResult {
  file: string;
  /** the file's own warnings, in the order a serial read gives them */
  warnings: LoadWarning[];
  /** a 'torch-snapshot' task's snapshot (null: not read, said in `warnings`) */
  torch?: TorchSnapshot | null;
  /** a 'memleak' task's log as read */
  memleak?: MemleakFile;
  /** null when the file was skipped (unreadable, or not a heap profile) */
  parsed:
    | (TaskStacks & {
        /** stackIds index this task's own stacks */
        snapshot: Snapshot;
        /**
         * which reader's cache the serials are of: set by the dump pool as the result arrives (each worker its own
         * number); absent for this thread's own cache
         */
        reader?: number;
        info: DumpTaskInfo;
      })
    | null;
}

export interface DumpTaskOptions {
  signal?: AbortSignal;
  onBytes?: (bytesRead: number) => void;
  inflate?: Inflater | null;
  /** a buffer for the task's stack words (the reader's, kept from its last task), grown when too small */
  words?: Uint32Array;
  /** what this thread's reader has posted before: a stack with one of those serials is left out (stack-delta.ts) */
  sent?: SentSerials;
}

/**
 * This thread's backtrace lines, kept from one task to the next: a process's stacks recur in each of its dumps
 * (a reader thread, a Web Worker or the loading thread each have their own module, so their own cache).
 */
const threadBacktraces = new BacktraceCache();

/** The stacks this thread's own tasks sent (stack-delta.ts), for those read here rather than in a reader. */
const threadStacks = new LocalStacks();

/** runDumpTask in the merging thread itself: a stack its earlier tasks here sent is left out too. */
export async function runDumpTaskHere(task: DumpTask, options: DumpTaskOptions = {}): Promise<DumpTaskResult> {
  const result = await runDumpTask(task, { ...options, sent: threadStacks });
  threadStacks.keep(result);
  return result;
}

/** Reads and parses one dump. Never throws for bad input (that becomes warnings); only for cancellation. */
export async function runDumpTask(task: DumpTask, options: DumpTaskOptions = {}): Promise<DumpTaskResult> {
  const path = task.file.path;
  const warnings: LoadWarning[] = [];
  if (task.kind === 'torch-snapshot') {
    const { readTorchTask } = await import('./torch-task.js');
    const torch = await readTorchTask(task.file, warnings, {
      ...(options.signal ? { signal: options.signal } : {}),
      inflate: options.inflate ?? null,
    });
    return { file: path, warnings, parsed: null, torch };
  }
  if (task.kind === 'memleak') {
    const { readMemleakTask } = await import('./memleak-task.js');
    const memleak = await readMemleakTask(task.file, warnings, { inflate: options.inflate ?? null });
    return { file: path, warnings, parsed: null, memleak };
  }
  const local = new RecordStacks(options.words, options.sent ?? null);
  if (task.kind === 'pprof' || task.kind === 'massif') {
    let out;
    try {
      // pprof and massif readers load only for such files (pprof-format is a third of the reading modules)
      const { readProfileTask } = await import('./profile-task.js');
      out = await readProfileTask(task.file, task.kind, task.part ?? 0, task.meta, local, warnings, {
        ...(options.signal ? { signal: options.signal } : {}),
        inflate: options.inflate ?? null,
      });
    } catch (e) {
      if (options.signal?.aborted) throw e;
      warnings.push({ file: path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
      return { file: path, warnings, parsed: null };
    }
    if (!out) return { file: path, warnings, parsed: null };
    const { offsets, words, hashes } = local.seal();
    const i = out.info;
    return {
      file: path,
      warnings,
      parsed: {
        snapshot: out.snapshot,
        stackOffsets: offsets,
        stackWords: words,
        stackHashes: hashes,
        info: {
          mapsText: i.mapsText,
          mapsFirstLine: 1,
          mapsComplete: true,
          trailerText: null,
          symbols: out.symbols,
          sidecar: null,
          buildIds: out.buildIds,
        },
      },
    };
  }
  const snap = new SnapshotBuilder(local);
  let result;
  try {
    result = await readDump(task.file, {
      onRecord: (r, live) => snap.add(r, live.sampling),
      ...(options.onBytes ? { onBytes: options.onBytes } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.inflate ? { inflate: options.inflate } : {}),
      ...(task.alone ? {} : { backtraces: threadBacktraces }),
    });
  } catch (e) {
    if (options.signal?.aborted) throw e;
    warnings.push({ file: path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
    return { file: path, warnings, parsed: null };
  }
  const info = result.info;
  if (result.gzipProblem) warnings.push({ file: path, message: result.gzipProblem });
  for (const p of info.problems)
    warnings.push({ file: path, line: p.line, byteOffset: p.byteOffset, message: p.message });
  if (info.problemsOmitted > 0)
    warnings.push({
      file: path,
      message: `${info.problemsOmitted} more problems of the same kinds (lines skipped or records dropped) not listed one by one`,
    });
  if (info.fatal) {
    warnings.push({
      file: path,
      line: info.fatal.line,
      byteOffset: info.fatal.byteOffset,
      message: `skipped: ${info.fatal.message}`,
    });
    return { file: path, warnings, parsed: null };
  }
  if (info.truncated) {
    warnings.push({
      file: path,
      line: info.truncated.line,
      byteOffset: info.truncated.byteOffset,
      message: `${truncationText(info.truncated)}; kept ${info.recordCount} complete records`,
    });
  }
  if (snap.nonFinite > 0)
    warnings.push({ file: path, message: `${snap.nonFinite} record(s) left out: unbiasing them gives no finite size` });
  const snapshot = snap.build(task.meta, info, info.mapsText ? 'dump' : null);
  const { offsets, words, hashes, entries, leftOut } = local.seal();
  // a table appended to the dump comes first (python-stacks.ts): the sidecar is read only without one
  const sidecar = task.sidecar && info.trailerText === null ? await readSidecar(task.sidecar) : null;
  return {
    file: path,
    warnings,
    parsed: {
      snapshot,
      stackOffsets: offsets,
      stackWords: words,
      stackHashes: hashes,
      stackEntries: entries,
      ...(leftOut ? { stackLeftOut: leftOut } : {}),
      info: {
        mapsText: info.mapsText,
        mapsFirstLine: info.mapsFirstLine,
        mapsComplete: info.mapsComplete,
        trailerText: info.trailerText,
        symbols: null,
        sidecar,
        buildIds: null,
      },
    },
  };
}

/**
 * A task's records' stacks as frame words, one per record, not deduplicated: a stack rarely repeats
 * within one dump, and the merge hashes every stack anyway, so hashing here too was a second pass
 * over every frame (a fifth of the parse). The merge folds a repeated stack's rows together. A stack whose
 * serial this thread's reader posted before is left out (an empty range, marked in `leftOut`): the pool's
 * thread has its words (stack-delta.ts).
 */
class RecordStacks implements StackInterner {
  readonly freshIds = true;
  private words: Uint32Array;
  private used = 0;
  // typed, not a JS array: what a reader keeps for the whole dump stays out of its young heap
  private offsets = new Uint32Array(1024);
  private hashes = new Int32Array(1024);
  private entries = new Int32Array(1024);
  private leftOut: Uint8Array | null = null;
  private count = 0;

  constructor(
    words: Uint32Array | undefined,
    private readonly sent: SentSerials | null,
  ) {
    this.words = words && words.length > 0 ? words : new Uint32Array(1 << 16);
  }

  internStack(w: Uint32Array, hash: number = stackHash(w, 0, w.length), entry = -1): number {
    if (this.count + 2 > this.offsets.length) this.grow();
    // a serial past Int32 (after 2^31 cache entries in one thread) is kept as none: that stack is compared
    const serial = entry <= 0x7fffffff ? entry : -1;
    if (serial >= 0 && this.sent?.has(serial)) {
      (this.leftOut ??= new Uint8Array(this.offsets.length))[this.count] = 1;
    } else {
      if (this.used + w.length > this.words.length) {
        const next = new Uint32Array(Math.max(2 * this.words.length, this.used + w.length));
        next.set(this.words.subarray(0, this.used));
        this.words = next;
      }
      this.words.set(w, this.used);
      this.used += w.length;
    }
    this.hashes[this.count] = hash;
    this.entries[this.count] = serial;
    this.offsets[++this.count] = this.used;
    return this.count - 1;
  }

  private grow(): void {
    const next = new Uint32Array(2 * this.offsets.length);
    next.set(this.offsets);
    this.offsets = next;
    const h = new Int32Array(next.length);
    h.set(this.hashes);
    this.hashes = h;
    const en = new Int32Array(next.length);
    en.set(this.entries);
    this.entries = en;
    if (this.leftOut) {
      const out = new Uint8Array(next.length);
      out.set(this.leftOut);
      this.leftOut = out;
    }
  }

  /**
   * Offsets in frames (word pairs), and the words: a view of the whole buffer (no copy); a reader keeps the buffer
   * for its next task and posts a copy (dump-pool.ts serveDumpTasks).
   */
  seal(): {
    offsets: Uint32Array;
    words: Uint32Array;
    hashes: Int32Array;
    entries: Int32Array;
    leftOut: Uint8Array | null;
  } {
    return {
      offsets: this.offsets.slice(0, this.count + 1).map((o) => o >>> 1),
      words: this.words.subarray(0, this.used),
      hashes: this.hashes.slice(0, this.count),
      entries: this.entries.slice(0, this.count),
      leftOut: this.leftOut ? this.leftOut.slice(0, this.count) : null,
    };
  }
}

/** Per process: which stacks the dump being merged has shown, and at which row (stamped per dump, no clearing). */
interface RowScratch {
  dump: number;
  seenIn: Int32Array;
  row: Uint32Array;
}
const scratchOf = new WeakMap<ProcessBuilder, RowScratch>();

/**
 * Per process, per reader (DumpTaskResult.parsed.reader; 0: this thread): its backtrace-cache serials → the stack
 * ids they were interned as. A serial's words never change (BacktraceCache.serial), so a serial seen again is that
 * stack, exactly, without hashing or comparing its words (that compare was most of the merging thread's time).
 */
const entryStacksOf = new WeakMap<ProcessBuilder, Map<number, SerialMap>>();

function entryStacks(builder: ProcessBuilder, reader: number): SerialMap {
  let byReader = entryStacksOf.get(builder);
  if (!byReader) entryStacksOf.set(builder, (byReader = new Map()));
  let e = byReader.get(reader);
  if (!e) byReader.set(reader, (e = new SerialMap()));
  return e;
}

/** A left-out stack's words, found in its reader's mirror (one object, reused). */
const mirrored = { words: new Uint32Array(0), from: 0, to: 0, hash: 0 };

/**
 * Adds a task's snapshot to its process: each record's stack interned in record order (as a serial read
 * interns them), its row remapped; rows of a stack seen twice in the dump are summed into its first row
 * in record order, the same additions a serial read makes.
 */
export function mergeDumpTask(
  builder: ProcessBuilder,
  parsed: NonNullable<DumpTaskResult['parsed']>,
  /** called every 65,536 records while interning (one dump may hold millions of stacks): may throw to stop */
  onProgress?: () => void,
): Snapshot {
  const { stackOffsets: off, stackWords: words, stackHashes: hashes, stackEntries: entries, snapshot: s } = parsed;
  const leftOut = parsed.stackLeftOut;
  const mirror = parsed.mirror;
  const n = s.stackIds.length;
  const known = entries ? entryStacks(builder, parsed.reader ?? 0) : null;
  let sc = scratchOf.get(builder);
  if (!sc) {
    sc = { dump: 0, seenIn: new Int32Array(1024), row: new Uint32Array(1024) };
    scratchOf.set(builder, sc);
  }
  const dump = ++sc.dump;
  const gids = s.stackIds;
  let repeated = false;
  for (let k = 0; k < n; k++) {
    const local = gids[k];
    if ((k & 0xffff) === 0xffff) onProgress?.();
    const serial = entries ? entries[local] : -1;
    let gid = serial >= 0 && known ? known.get(serial) : -1;
    if (gid < 0) {
      if (leftOut && leftOut[local] === 1) {
        // sent in an earlier result of this reader (for another process, or before a merge of this one)
        if (!mirror?.find(serial, mirrored))
          throw new Error(`reader ${parsed.reader ?? 0} left out stack serial ${serial} it never sent (a bug)`);
        gid = builder.internRange(mirrored.words, mirrored.from, mirrored.to, mirrored.hash);
      } else gid = builder.internRange(words, 2 * off[local], 2 * off[local + 1], hashes[local]);
      if (serial >= 0 && known) known.set(serial, gid);
    }
    if (gid >= sc.seenIn.length) {
      const size = Math.max(2 * sc.seenIn.length, gid + 1);
      const seen = new Int32Array(size);
      seen.set(sc.seenIn);
      const row = new Uint32Array(size);
      row.set(sc.row);
      sc.seenIn = seen;
      sc.row = row;
    }
    if (sc.seenIn[gid] === dump) repeated = true;
    else sc.seenIn[gid] = dump;
    gids[k] = gid;
  }
  const snapshot = repeated ? foldRepeats(s, sc, dump) : s;
  builder.snapshots.push(snapshot);
  return snapshot;
}

/** The rows of a snapshot with repeated stack ids, summed into one row per stack (first-appearance order). */
function foldRepeats(s: Snapshot, sc: RowScratch, dump: number): Snapshot {
  const n = s.stackIds.length;
  // A fresh stamp: rows are assigned on first sight below.
  const stamp = -dump;
  const extra = s.extraSamples ?? [];
  const cols = [
    s.liveBytes,
    s.liveObjects,
    s.liveVarBytes,
    s.accumBytes,
    s.accumObjects,
    ...extra.map((e) => e.values),
  ];
  const out = cols.map((c) => (c ? new Float64Array(n) : null));
  const ids = new Uint32Array(n);
  let m = 0;
  for (let k = 0; k < n; k++) {
    const gid = s.stackIds[k];
    if (sc.seenIn[gid] !== stamp) {
      sc.seenIn[gid] = stamp;
      sc.row[gid] = m;
      ids[m] = gid;
      cols.forEach((c, j) => {
        const o = out[j];
        if (c && o) o[m] = c[k];
      });
      m++;
    } else {
      const r = sc.row[gid];
      cols.forEach((c, j) => {
        const o = out[j];
        if (c && o) o[r] += c[k];
      });
    }
  }
  const cut = (a: Float64Array | null) => (a ? a.slice(0, m) : null);
  return {
    ...s,
    stackIds: ids.slice(0, m),
    liveBytes: cut(out[0]) as Float64Array,
    liveObjects: cut(out[1]) as Float64Array,
    liveVarBytes: cut(out[2]) as Float64Array,
    accumBytes: cut(out[3]),
    accumObjects: cut(out[4]),
    ...(s.extraSamples
      ? { extraSamples: extra.map((e, j) => ({ ...e, values: cut(out[5 + j]) as Float64Array })) }
      : {}),
  };
}

/** The typed arrays of a result, for a zero-copy postMessage. */
export function dumpTaskTransfer(r: DumpTaskResult): ArrayBuffer[] {
  const p = r.parsed;
  if (!p) return [];
  const s = p.snapshot;
  const arrays = [
    p.stackOffsets,
    p.stackWords,
    p.stackHashes,
    p.stackEntries ?? null,
    p.stackLeftOut ?? null,
    s.stackIds,
    s.liveBytes,
    s.liveObjects,
    s.liveVarBytes,
    s.accumBytes,
    s.accumObjects,
  ];
  return arrays.filter((a): a is NonNullable<typeof a> => a !== null).map((a) => a.buffer as ArrayBuffer);
}
