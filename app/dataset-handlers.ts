// A dataset (heaplens ingest) opened in the desktop app: DuckDB runs here in the main process, and the job goes
// to the renderer one batch per call (pull: the renderer asks for the next batch when it has passed on the last,
// so main never queues a whole job in IPC). Plain functions over injected file access and reader.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AccessError, type FileAccess } from './file-access.js';
import { CHANNELS } from './host-api.js';
import type { Handler } from './ipc-handlers.js';

/** The manifest that marks a dataset folder (node/dataset/schema.ts MANIFEST_FILE; app/ is self-contained). */
export const DATASET_MANIFEST = '_heaplens.json';
/** Datasets open at once: each holds its job in main's memory until the renderer has taken every batch. */
export const MAX_OPEN_DATASETS = 4;

/** Reads a dataset folder as batches (node/dataset/app-batches.ts datasetBatches, loaded lazily: DuckDB is a native addon). */
export type DatasetReader = (dir: string) => Promise<AsyncIterator<unknown>>;

export function createDatasetHandlers(files: FileAccess, reader: DatasetReader): Record<string, Handler> {
  const open = new Map<number, AsyncIterator<unknown>>();
  let next = 1;
  return {
    async [CHANNELS.datasetOpen](dir: unknown): Promise<number> {
      const real = await files.checkReadable(dir);
      if (!(await stat(real)).isDirectory()) throw new AccessError(`not a folder: ${real}`);
      try {
        await stat(path.join(real, DATASET_MANIFEST));
      } catch {
        throw new AccessError(`not a heaplens dataset (no ${DATASET_MANIFEST}): ${real}`);
      }
      if (open.size >= MAX_OPEN_DATASETS) throw new AccessError(`${MAX_OPEN_DATASETS} datasets are already open`);
      const it = await reader(real);
      const handle = next++;
      open.set(handle, it);
      return handle;
    },
    /** the next batch, or null once the job has been sent (the handle is then closed) */
    async [CHANNELS.datasetNext](handle: unknown): Promise<unknown> {
      const it = typeof handle === 'number' ? open.get(handle) : undefined;
      if (!it) throw new AccessError('no such open dataset');
      const r = await it.next();
      if (r.done) {
        open.delete(handle as number);
        return null;
      }
      return r.value;
    },
    async [CHANNELS.datasetClose](handle: unknown): Promise<void> {
      const it = typeof handle === 'number' ? open.get(handle) : undefined;
      if (!it) return;
      open.delete(handle as number);
      await it.return?.();
    },
  };
}
