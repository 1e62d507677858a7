// The analysis worker as a real Worker (web page, Electron). Kept apart so the report build, which runs the
// same code in-page (in-page-worker.ts), never bundles a worker file.

import type { FromWorker, ToWorker } from './protocol.ts';

/** What AnalysisClient needs of a worker. */
export interface WorkerLike {
  postMessage(msg: ToWorker, transfer?: Transferable[]): void;
  onmessage: ((ev: { data: FromWorker }) => void) | null;
  onerror: ((ev: { message: string }) => void) | null;
  terminate(): void;
}

export function spawnAnalysisWorker(): WorkerLike {
  return new Worker(new URL('../worker/analysis.worker.ts', import.meta.url), {
    type: 'module',
    name: 'heaplens-analysis',
  }) as unknown as WorkerLike;
}
