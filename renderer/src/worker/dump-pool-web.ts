// The dump pool (core/load/dump-pool.ts) on Web Workers, for the app: the analysis worker starts one
// dump reader per core (dump-reader.worker.ts); each reads a Blob itself and inflates with the
// platform's DecompressionStream. Files only this worker can reach (Electron host paths, with their
// read-ahead) are read here on the reader's request.

import { createDumpPool, type DumpPool, type FromDumpWorker } from '../../../core/load/dump-pool.ts';
import type { InputFile } from '../../../core/formats/input-file.ts';
import { webInflater } from '../../../core/formats/inflate.ts';

/** Where a reader finds a file: its Blob, or ask this worker (by source key) for bytes. */
export type ReaderFile = { blob: Blob } | { source: string };

export interface WebDumpPoolHost {
  locate(file: InputFile): ReaderFile | null;
  read(source: string, offset: number, length: number): Promise<Uint8Array>;
}

/** null where this context cannot start workers (then loadJob reads in this thread). */
export function createWebDumpPool(host: WebDumpPoolHost): DumpPool | null {
  if (typeof Worker === 'undefined') return null;
  return createDumpPool<ReaderFile>({
    size: Math.max(1, navigator.hardwareConcurrency || 2),
    inflate: webInflater(),
    locate: (f) => host.locate(f),
    read: (source, offset, length) => host.read(source, offset, length),
    spawn(message, lost) {
      const w = new Worker(new URL('./dump-reader.worker.ts', import.meta.url), {
        type: 'module',
        name: 'heaplens-dump-reader',
      });
      w.onmessage = (ev: MessageEvent<FromDumpWorker>) => message(ev.data);
      w.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        lost(`its reader stopped: ${ev.message}`);
      };
      return { post: (m, t) => w.postMessage(m, t ?? []), terminate: () => w.terminate() };
    },
  });
}
