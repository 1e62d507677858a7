// One dump read on its own: the unit of work of the parallel loader (a worker thread or Web Worker per
// task, or in-thread). Stacks are interned per task; the merging thread re-interns each task's distinct
// stacks into its process (mergeDumpTask), so ids, rows and sums come out exactly as a serial read.

import type { InputFile } from '../parsers/input-file.js';
import type { Inflater } from '../parsers/inflate.js';
import { readDump } from '../parsers/read-dump.js';
import type { LoadWarning, Snapshot } from './model.js';
import { SnapshotBuilder, type ProcessBuilder, type SnapshotMeta, type StackInterner } from './process-builder.js';

export interface DumpTask {
  file: InputFile;
  meta: SnapshotMeta;
}

/** The parts of the parser's info the merge still needs (maps and Python tables, read per process). */
export interface DumpTaskInfo {
  mapsText: string | null;
  mapsFirstLine: number;
  mapsComplete: boolean;
  /** text after the maps that starts with a known trailer header (a PYFRAMES/1 table), else null */
  trailerText: string | null;
}

export interface DumpTaskResult {
  file: string;
  /** the file's own warnings, in the order a serial read gives them */
  warnings: LoadWarning[];
  /** null when the file was skipped (unreadable, or not a heap profile) */
  parsed: {
    /** stackIds index this task's own stacks */
    snapshot: Snapshot;
    /** task stack k is stackWords[2·stackOffsets[k] .. 2·stackOffsets[k+1]) as (hi, lo) address words */
    stackOffsets: Uint32Array;
    stackWords: Uint32Array;
    info: DumpTaskInfo;
  } | null;
}

export interface DumpTaskOptions {
  signal?: AbortSignal;
  onBytes?: (bytesRead: number) => void;
  inflate?: Inflater | null;
}

/** Reads and parses one dump. Never throws for bad input (that becomes warnings); only for cancellation. */
export async function runDumpTask(task: DumpTask, options: DumpTaskOptions = {}): Promise<DumpTaskResult> {
  const path = task.file.path;
  const warnings: LoadWarning[] = [];
  const local = new WordStacks();
  const snap = new SnapshotBuilder(local);
  let result;
  try {
    result = await readDump(task.file, {
      onRecord: (r, live) => snap.add(r, live.sampling),
      ...(options.onBytes ? { onBytes: options.onBytes } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.inflate ? { inflate: options.inflate } : {}),
    });
  } catch (e) {
    if (options.signal?.aborted) throw e;
    warnings.push({ file: path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
    return { file: path, warnings, parsed: null };
  }
  const info = result.info;
  if (result.gzipProblem) warnings.push({ file: path, message: result.gzipProblem });
  for (const p of info.problems) warnings.push({ file: path, line: p.line, byteOffset: p.byteOffset, message: p.message });
  if (info.fatal) {
    warnings.push({ file: path, line: info.fatal.line, byteOffset: info.fatal.byteOffset, message: `skipped: ${info.fatal.message}` });
    return { file: path, warnings, parsed: null };
  }
  if (info.truncated) {
    warnings.push({
      file: path,
      line: info.truncated.line,
      byteOffset: info.truncated.byteOffset,
      message: `truncated at byte ${info.truncated.byteOffset} (line ${info.truncated.line}): ${info.truncated.reason}; kept ${info.recordCount} complete records`,
    });
  }
  const snapshot = snap.build(task.meta, info, info.mapsText ? 'dump' : null);
  const { offsets, words } = local.seal();
  return {
    file: path,
    warnings,
    parsed: {
      snapshot,
      stackOffsets: offsets,
      stackWords: words,
      info: {
        mapsText: info.mapsText,
        mapsFirstLine: info.mapsFirstLine,
        mapsComplete: info.mapsComplete,
        trailerText: info.trailerText,
      },
    },
  };
}

/**
 * A task's own stacks, kept as frame words only: no address table, no hex strings (those are made
 * once per process by the merge, not once per dump).
 */
class WordStacks implements StackInterner {
  private words = new Uint32Array(1 << 16);
  private used = 0;
  private offsets: number[] = [0];
  private readonly byHash = new Map<number, number>();
  private readonly nextSameHash: number[] = [];

  internStack(w: Uint32Array): number {
    let h = 0x811c9dc5 ^ w.length;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w[i], 0x01000193);
    h |= 0;
    const { offsets, words } = this;
    for (let id = this.byHash.get(h) ?? -1; id >= 0; id = this.nextSameHash[id]) {
      const o = offsets[id];
      if (offsets[id + 1] - o !== w.length) continue;
      let k = 0;
      while (k < w.length && words[o + k] === w[k]) k++;
      if (k === w.length) return id;
    }
    const id = offsets.length - 1;
    this.nextSameHash.push(this.byHash.get(h) ?? -1);
    this.byHash.set(h, id);
    if (this.used + w.length > this.words.length) {
      const next = new Uint32Array(Math.max(2 * this.words.length, this.used + w.length));
      next.set(this.words.subarray(0, this.used));
      this.words = next;
    }
    this.words.set(w, this.used);
    this.used += w.length;
    offsets.push(this.used);
    return id;
  }

  /** Offsets in frames (word pairs), and the words. */
  seal(): { offsets: Uint32Array; words: Uint32Array } {
    return { offsets: Uint32Array.from(this.offsets, (o) => o >>> 1), words: this.words.slice(0, this.used) };
  }
}

/** Adds a task's snapshot to its process: its stacks interned in task order, its stack ids remapped. */
export function mergeDumpTask(builder: ProcessBuilder, parsed: NonNullable<DumpTaskResult['parsed']>): Snapshot {
  const { stackOffsets: off, stackWords: words, snapshot } = parsed;
  const ids = new Uint32Array(off.length - 1);
  for (let k = 0; k < ids.length; k++) ids[k] = builder.internStack(words.subarray(2 * off[k], 2 * off[k + 1]));
  const sids = snapshot.stackIds;
  for (let i = 0; i < sids.length; i++) sids[i] = ids[sids[i]];
  builder.snapshots.push(snapshot);
  return snapshot;
}

/** The typed arrays of a result, for a zero-copy postMessage. */
export function dumpTaskTransfer(r: DumpTaskResult): ArrayBuffer[] {
  const p = r.parsed;
  if (!p) return [];
  const s = p.snapshot;
  const arrays = [p.stackOffsets, p.stackWords, s.stackIds, s.liveBytes, s.liveObjects, s.liveVarBytes, s.accumBytes, s.accumObjects];
  return arrays.filter((a): a is NonNullable<typeof a> => a !== null).map((a) => a.buffer as ArrayBuffer);
}
