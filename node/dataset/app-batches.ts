// A dataset for the desktop app: the Electron main process reads it here (DuckDB runs in main, never in the
// renderer) and hands the job to the renderer in batches (core/model/job-batches.ts), one IPC message each.

import { jobBatches, type JobBatch } from '../../core/model/job-batches.js';
import { readDataset } from './read-dataset.js';

export type DatasetBatch = JobBatch;

/** The dataset at `dir` as batches; a missing or damaged file rejects with a DatasetError naming it. */
export async function datasetBatches(dir: string): Promise<AsyncIterableIterator<DatasetBatch>> {
  const ds = await readDataset(dir);
  const it = jobBatches(ds.job);
  return (async function* () {
    yield* it;
  })();
}
