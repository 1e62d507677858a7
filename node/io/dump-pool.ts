// The dump pool (core/load/dump-pool.ts) on Node worker threads, for the CLI: one worker per core,
// each with a capped JavaScript heap, reading its files itself (node:zlib inflate).

import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { createDumpPool as createPool, type DumpPool, type FromDumpWorker } from '../../core/load/dump-pool.js';
import { nodeInflater } from './gunzip.js';
import { nodeFilePath } from './node-files.js';

// A worker's JavaScript heap cap. One dump of 1 GB text with 2 M distinct stacks needs about 1.2 GB
// there; a file that needs more is hostile (or a job for `heaplens ingest`) and must not take the
// machine's memory from the other files' tasks.
export const WORKER_HEAP_MB = 2048;

/**
 * Room for old objects a reader's heap starts with (MB). A reader keeps ~10 MB from one dump to the next and
 * promotes a few MB of each dump's garbage, so from V8's default start (a limit a few MB above what it keeps) it
 * marked and compacted every ~25 dumps: ~90 times per reader over 320 processes of the issue-49 bench job, most
 * of the CPU its collector spent (summary of those processes: CPU 0.86× with this room, peak RSS no higher).
 */
export const READER_INITIAL_OLD_MB = 64;

/**
 * No Worker option sets a heap's starting size, so it is set as a V8 flag, which the isolates started after it
 * read (this one's heap is set up already); left alone when the user gave the flag.
 */
function readerHeapStart(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('initial-old-space-size'));
  if (!given) setFlagsFromString(`--initial-old-space-size=${READER_INITIAL_OLD_MB}`);
}

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
  readerHeapStart();
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
