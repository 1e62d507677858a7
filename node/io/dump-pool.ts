// The dump pool (core/load/dump-pool.ts) on Node worker threads, for the CLI: one worker per core,
// each with a capped JavaScript heap, reading its files itself (node:zlib inflate).

import { availableParallelism } from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { createDumpPool as createPool, type DumpPool, type FromDumpWorker } from '../../core/load/dump-pool.js';
import { nodeInflater } from './gunzip.js';
import { nodeFilePath } from './node-files.js';

// A worker's JavaScript heap cap. One dump of 1 GB text with 2 M distinct stacks needs about 1.2 GB
// there; a file that needs more is hostile (or a job for `heaplens ingest`) and must not take the
// machine's memory from the other files' tasks.
export const WORKER_HEAP_MB = 2048;

export interface DumpPoolOptions {
  /** worker threads; the machine's cores by default */
  size?: number;
  resourceLimits?: ResourceLimits;
}

export type { DumpPool };

function newWorker(resourceLimits: ResourceLimits): Worker {
  if (import.meta.url.endsWith('.ts')) {
    // From the TypeScript sources (tests): the worker registers tsx, then loads its .ts.
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./dump-worker.ts', import.meta.url).href;
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
    return new Worker(code, { eval: true, resourceLimits });
  }
  // Built: the worker inherits node's own flags (--cpu-prof, --inspect…).
  return new Worker(new URL('./dump-worker.js', import.meta.url), { resourceLimits });
}

export function createDumpPool(options: DumpPoolOptions = {}): DumpPool {
  const limits: ResourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB, ...options.resourceLimits };
  return createPool<string>({
    size: options.size ?? availableParallelism(),
    inflate: nodeInflater,
    // Files that are not on the local disk (in-memory, tests) are read in this thread.
    locate: nodeFilePath,
    spawn(message, lost) {
      const w = newWorker(limits);
      w.on('message', (m: FromDumpWorker) => message(m));
      w.on('error', (e) => lost(`its reader stopped: ${e.message}`));
      w.on('exit', (code) => lost(`its reader exited (code ${code})`));
      return {
        post: (m, t) => w.postMessage(m, t ?? []),
        terminate: () => void w.terminate(),
        keepAlive: (on) => (on ? w.ref() : w.unref()),
      };
    },
  });
}
