// A PyTorch snapshot's reading half, the unit a reader worker runs (dump-task.ts kind 'torch-snapshot'): the file
// decompressed by content and bounded (profile-task.ts readWhole), the pickle read by the restricted unpickler.
// The loader builds the series from the result (capture-series.ts torchSeries).

import type { InputFile } from '../formats/input-file.js';
import type { Inflater } from '../formats/inflate.js';
import { PickleError } from '../formats/pickle.js';
import { readTorchSnapshot, TorchSnapshotError, type TorchSnapshot } from '../formats/torch-snapshot.js';
import type { LoadWarning } from '../model/model.js';
import { readWhole } from './profile-task.js';

/** Largest snapshot read (decompressed): a 10^6-entry trace with 30 frames an entry is ~0.3 GB. */
export const MAX_TORCH_BYTES = 1024 * 1024 * 1024;

/** A snapshot's bytes read as a snapshot, or a warning naming the file (and the byte offset of a pickle's fault). */
export function readTorchCapture(file: InputFile, bytes: Uint8Array, warnings: LoadWarning[]): TorchSnapshot | null {
  try {
    return readTorchSnapshot(bytes);
  } catch (e) {
    if (!(e instanceof PickleError) && !(e instanceof TorchSnapshotError) && !(e instanceof RangeError)) throw e;
    const byteOffset = e instanceof PickleError ? e.byteOffset : undefined;
    warnings.push({
      file: file.path,
      ...(byteOffset !== undefined ? { byteOffset } : {}),
      message: `not read as a PyTorch memory snapshot: ${e.message}`,
    });
    return null;
  }
}

/**
 * The reader's half of a snapshot (in a reader worker, under its heap limit, as pprof and massif are): the file
 * decompressed by content and bounded (readWhole), the pickle read. The series are built from it by the loader.
 */
export async function readTorchTask(
  file: InputFile,
  warnings: LoadWarning[],
  options: { signal?: AbortSignal; inflate?: Inflater | null } = {},
): Promise<TorchSnapshot | null> {
  const { bytes, problem } = await readWhole(file, MAX_TORCH_BYTES, options);
  if (problem) {
    // a pickle cut short cannot be read (its STOP is at the end): the problem is the file's one warning
    warnings.push({ file: file.path, message: problem });
    return null;
  }
  return readTorchCapture(file, bytes, warnings);
}
