// A memleak log's reading half, the unit a reader worker runs (dump-task.ts kind 'memleak'), as PyTorch snapshots,
// pprof and massif are read: the file decompressed by content through the bounded decoder and read as a stream of
// lines (memory ~ the stacks, not the file), under the worker's heap limit. The loader builds the series from the
// result (capture-series.ts memleakSeries).

import { codecOf, DecodeProblem, decodedChunks } from '../formats/decompress.js';
import type { Inflater } from '../formats/inflate.js';
import type { InputFile } from '../formats/input-file.js';
import { MemleakReader, readMemleakLines, type MemleakFile } from '../formats/memleak.js';
import type { LoadWarning } from '../model/model.js';

/** A memleak log's bytes, decompressed by content through the bounded decoder (decompress.ts). */
async function* memleakBytes(file: InputFile, inflate: Inflater | null): AsyncGenerator<Uint8Array> {
  const codec = codecOf(await file.read(0, Math.min(16, file.size)));
  if (codec !== null) {
    yield* decodedChunks(file, codec, { inflate });
    return;
  }
  const step = 4 * 1024 * 1024;
  for (let at = 0; at < file.size; at += step) {
    const b = await file.read(at, Math.min(step, file.size - at));
    if (b.length === 0) return;
    yield b;
  }
}

/** The log read (a decoder's stop is a warning naming the file; what came before it is kept). */
export async function readMemleakTask(
  file: InputFile,
  warnings: LoadWarning[],
  options: { inflate?: Inflater | null } = {},
): Promise<MemleakFile> {
  const reader = new MemleakReader();
  try {
    return await readMemleakLines(memleakBytes(file, options.inflate ?? null), reader);
  } catch (e) {
    if (!(e instanceof DecodeProblem)) throw e;
    warnings.push({ file: file.path, message: e.message });
    return reader.finish(false);
  }
}
