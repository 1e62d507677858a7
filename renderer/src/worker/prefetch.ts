// Read-ahead for loading: the loader reads files one after another, and each read of a File (or of a host
// path in Electron) is an IPC round trip. Knowing the loader's order (classifyFiles + groupProcesses, both
// pure for named dumps), whole small files are fetched a window ahead, several at a time.

import type { InputFile } from '../../../core/formats/input-file.ts';

export interface PrefetchOptions {
  /** files fetched concurrently */
  concurrency: number;
  /** most bytes held ahead of the reader */
  maxBytesAhead: number;
  /** files larger than this are read directly in chunks, never prefetched */
  maxFileBytes: number;
}

export const DEFAULT_PREFETCH: PrefetchOptions = {
  concurrency: 24,
  maxBytesAhead: 128 * 1024 * 1024,
  maxFileBytes: 8 * 1024 * 1024,
};

/**
 * Wraps `files` so that reads follow `order` (indices into files) with read-ahead. `readWhole(i)` fetches file i
 * entirely. Files not in `order` (or large ones) read through `direct`.
 */
export function withPrefetch(
  files: InputFile[],
  order: number[],
  readWhole: (i: number) => Promise<Uint8Array>,
  opts: PrefetchOptions = DEFAULT_PREFETCH,
): InputFile[] {
  const posOf = new Map<number, number>();
  order.forEach((fi, pos) => posOf.set(fi, pos));
  const cache = new Map<number, Promise<Uint8Array>>();
  let next = 0; // next position in `order` to start fetching
  let inFlight = 0;
  let bytesAhead = 0;
  let consumerPos = 0;

  const start = (fi: number): Promise<Uint8Array> => {
    inFlight++;
    bytesAhead += files[fi].size;
    const p = readWhole(fi).finally(() => {
      inFlight--;
      pump();
    });
    p.catch(() => undefined);
    cache.set(fi, p);
    return p;
  };

  function pump(): void {
    while (next < order.length && inFlight < opts.concurrency && bytesAhead < opts.maxBytesAhead) {
      const fi = order[next++];
      if (cache.has(fi) || files[fi].size > opts.maxFileBytes) continue;
      start(fi);
    }
  }

  const release = (fi: number): void => {
    if (cache.delete(fi)) bytesAhead -= files[fi].size;
  };

  return files.map((f, fi) => ({
    path: f.path,
    size: f.size,
    mtimeMs: f.mtimeMs,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const pos = posOf.get(fi);
      if (pos === undefined || f.size > opts.maxFileBytes) return f.read(offset, length);
      if (pos > consumerPos) {
        // the reader moved on: drop what it skipped
        for (let p = consumerPos; p < pos; p++) release(order[p]);
        consumerPos = pos;
      }
      if (next <= pos) next = pos; // jumped ahead of the window: restart it here
      pump();
      const whole = cache.get(fi) ?? start(fi);
      const bytes = await whole;
      const end = Math.min(bytes.byteLength, offset + length);
      if (end >= bytes.byteLength) release(fi);
      return offset === 0 && end === bytes.byteLength ? bytes : bytes.subarray(offset, end);
    },
  }));
}
