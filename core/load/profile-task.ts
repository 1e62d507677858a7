// One pprof profile or one massif snapshot read as a dump task (dump-task.ts runs the text dumps): the file is
// decompressed by content and read whole (bounded), its records go through the same SnapshotBuilder as a
// jemalloc dump's, and the names the profile carries travel with the task to the process.

import type { InputFile } from '../formats/input-file.js';
import type { Inflater } from '../formats/inflate.js';
import { codecOf, DecodeProblem, decodedChunks } from '../formats/decompress.js';
import { MAX_PPROF_BYTES, parsePprof, pprofHeap } from '../formats/pprof.js';
import { MAX_MASSIF_BYTES, massifRecords, parseMassif, type MassifFile } from '../formats/massif.js';
import type { ParsedDumpInfo } from '../formats/heap-dump.js';
import type { ProfileFrame } from '../formats/dump-types.js';
import type { LoadWarning, Snapshot } from '../model/model.js';
import { SnapshotBuilder, type SnapshotMeta, type StackInterner } from '../model/process-builder.js';

/** A file's decompressed bytes, whole, at most `max` of them; `problem` says why fewer came. */
export async function readWhole(
  file: InputFile,
  max: number,
  options: { signal?: AbortSignal; inflate?: Inflater | null } = {},
): Promise<{ bytes: Uint8Array; problem: string | null }> {
  const head = await file.read(0, Math.min(16, file.size));
  const codec = codecOf(head);
  const parts: Uint8Array[] = [];
  let n = 0;
  let problem: string | null = null;
  if (codec === null) {
    if (file.size > max)
      return { bytes: new Uint8Array(0), problem: `${file.size} bytes, above the ${max} this reader holds` };
    const bytes = await file.read(0, file.size);
    return { bytes, problem: null };
  }
  try {
    for await (const c of decodedChunks(file, codec, {
      ...(options.signal ? { signal: options.signal } : {}),
      inflate: options.inflate ?? null,
    })) {
      n += c.length;
      if (n > max) {
        problem = `more than ${max} bytes once decompressed, above what this reader holds; the rest is not read`;
        break;
      }
      parts.push(c);
    }
  } catch (e) {
    if (!(e instanceof DecodeProblem)) throw e;
    problem = e.message;
  }
  const bytes = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return { bytes, problem };
}

let lastMassif: { key: string; file: MassifFile } | null = null;

export interface ProfileTaskOutput {
  snapshot: Snapshot;
  info: ParsedDumpInfo;
  symbols: Map<string, ProfileFrame[]>;
  /** the mappings' build-ids by path (pprof), else null */
  buildIds: Record<string, string> | null;
}

/**
 * Reads a pprof profile, or snapshot `part` of a massif file, into a snapshot. Returns null (with a warning
 * said) when the file holds no heap profile.
 */
export async function readProfileTask(
  file: InputFile,
  kind: 'pprof' | 'massif',
  part: number,
  meta: SnapshotMeta,
  stacks: StackInterner,
  warnings: LoadWarning[],
  options: { signal?: AbortSignal; inflate?: Inflater | null } = {},
): Promise<ProfileTaskOutput | null> {
  const path = file.path;
  const { bytes, problem } = await readWhole(file, kind === 'pprof' ? MAX_PPROF_BYTES : MAX_MASSIF_BYTES, options);
  // a massif file's is said once, when the loader tells it (load-job.ts), not by each of its snapshots' tasks
  if (problem && kind === 'pprof') warnings.push({ file: path, message: problem });
  if (kind === 'pprof') {
    const parsed = parsePprof(bytes);
    for (const p of parsed.problems) warnings.push({ file: path, byteOffset: p.byteOffset, message: p.message });
    if (!parsed.profile) return null;
    const heap = pprofHeap(parsed.profile, bytes.length);
    if ('notHeap' in heap) {
      warnings.push({ file: path, message: `skipped: ${heap.notHeap}` });
      return null;
    }
    for (const p of heap.info.problems) warnings.push({ file: path, message: p.message });
    for (const n of heap.notes) warnings.push({ file: path, message: n });
    const snap = new SnapshotBuilder(stacks, heap.extraTypes, { signed: heap.delta });
    for (const r of heap.records) snap.add(r, heap.info.sampling);
    const t = parsed.profile.timeNanos;
    const snapshot = snap.build(
      { ...meta, mtimeMs: t !== null && t > 0 ? t / 1e6 : meta.mtimeMs },
      heap.info,
      heap.mapsText ? 'dump' : null,
    );
    if (heap.defaultSample) snapshot.defaultSample = heap.defaultSample;
    if (!heap.recordsLive) snapshot.noLive = true;
    return { snapshot, info: heap.info, symbols: heap.symbols, buildIds: heap.buildIds };
  }
  // a massif file is one task per snapshot: parsed once, for its tasks in a row (in this thread or a worker)
  const key = `${path}\u0000${file.size}\u0000${file.mtimeMs}`;
  if (lastMassif?.key !== key) lastMassif = { key, file: parseMassif(new TextDecoder('utf-8').decode(bytes)) };
  const massif = lastMassif.file;
  // the file's problems once, with its first snapshot
  if (part === 0) for (const p of massif.problems) warnings.push({ file: path, line: p.line, message: p.message });
  const s = massif.snapshots[part];
  if (!s) {
    warnings.push({
      file: path,
      message: `massif snapshot ${part} is missing (the file has ${massif.snapshots.length})`,
    });
    return null;
  }
  const { records, symbols } = massifRecords(s);
  const snap = new SnapshotBuilder(stacks);
  for (const r of records) snap.add(r, { kind: 'none' });
  const info: ParsedDumpInfo = {
    format: 'massif',
    sampling: { kind: 'none' },
    header: null,
    headerThreads: [],
    recordCount: records.length,
    mapsText: null,
    mapsFirstLine: 1,
    mapsComplete: true,
    trailerText: null,
    truncated: null,
    fatal: null,
    problems: [],
    problemsOmitted: 0,
    skippedLeadingLines: 0,
    goRuntime: false,
    bytes: bytes.length,
    lines: 0,
  };
  // massif's peak is its high-water mark
  const trigger = s.tree === 'peak' ? 'high-water' : 'interval';
  const snapshot = snap.build({ ...meta, seq: s.index, trigger }, info, null);
  snapshot.massif = {
    time: s.time,
    timeUnit: massif.timeUnit,
    heapExtraBytes: s.heapExtraBytes,
    stacksBytes: s.stacksBytes,
    tree: s.tree,
    unexplainedBytes: s.unexplainedBytes,
    cmd: massif.cmd,
  };
  // massif's times are its own (instructions, bytes, ms since start): the file's mtime is none of its snapshots'
  snapshot.mtimeMs = null;
  return { snapshot, info, symbols, buildIds: null };
}
