// How every CLI command loads dumps: a worker-thread pool parses them in parallel (node/io/dump-pool.ts),
// within a memory budget; a job beyond it stops with a message that names `heaplens ingest`.

import { loadJob, type LoadOptions } from '../../core/load/load-job.js';
import type { Job } from '../../core/model/model.js';
import { JobTooLargeError } from '../../core/load/memory-budget.js';
import type { InputFile } from '../../core/formats/input-file.js';
import type { DumpPool } from '../io/dump-pool.js';
import type { Inflater } from '../../core/formats/inflate.js';
import { memoryBudget } from '../engine/open-job.js';

export { memoryBudget };

export { JobTooLargeError };

/** loadDumps, or null after writing why when the job does not fit in memory (the message names `heaplens ingest`). */
export async function loadDumpsOrSay(files: readonly InputFile[], err: (s: string) => void): Promise<Job | null> {
  try {
    return await loadDumps(files);
  } catch (e) {
    if (!(e instanceof JobTooLargeError)) throw e;
    err(`heaplens: ${e.message}`);
    return null;
  }
}

/**
 * Below this many bytes of input, dumps are read in this thread: starting a worker (its own module loading,
 * ~0.1 s) costs more than a small job's parse (a 9 MB dump parses in ~0.1 s on a core).
 */
export const POOL_MIN_BYTES = 32 * 1024 * 1024;

/** The input's text size, roughly: a compressed file counts as ten times its bytes (dumps inflate 8–12×). */
function textBytes(files: readonly InputFile[]): number {
  return files.reduce((s, f) => s + (/\.(gz|zst|bz2|xz)$/.test(f.path) ? 10 * f.size : f.size), 0);
}

/**
 * node:zlib, loaded with the first gzipped input read in this thread (a plain-text input never loads it). That first
 * file streams; once loaded, a small gzip is inflated whole (Inflater.whole) as the readers do: streaming through
 * libuv's pool left this thread waiting ~15 % of an in-thread read of a process's 100 dumps.
 */
let gunzip: typeof import('../io/gunzip.js') | null = null;
const inflateInThread: Inflater = Object.assign(
  async function* (compressed: AsyncIterable<Uint8Array>) {
    gunzip ??= await import('../io/gunzip.js');
    yield* gunzip.nodeInflater(compressed);
  },
  {
    // null (not loaded yet) sends the file down the streaming path, which says the same about any gzip
    whole: (compressed: Uint8Array, maxBytes: number) => gunzip?.nodeInflater.whole?.(compressed, maxBytes) ?? null,
  },
);

export type DumpLoader = (files: readonly InputFile[], options?: LoadOptions) => Promise<Job>;

/**
 * Runs `fn` with loadJob over one worker pool for all its loads (HEAPLENS_WORKERS=<n> sets the pool's size; 0
 * reads in this thread; unset, inputs below POOL_MIN_BYTES are read in this thread), within the memory budget;
 * the pool is closed after. The pool's module (worker threads, node:zlib) loads with the first load that uses
 * it, and its workers start then, while loadJob classifies the files: a small input pays for neither.
 */
export async function withDumpLoader<T>(fn: (load: DumpLoader) => Promise<T>): Promise<T> {
  const n = process.env.HEAPLENS_WORKERS;
  const size = n !== undefined && /^\d+$/.test(n) ? Number(n) : undefined;
  // what is read in this thread (small inputs, HEAPLENS_WORKERS=0) inflates with node:zlib, as the workers do
  const budget = { memoryBudget: memoryBudget(), inflate: inflateInThread };
  if (size === 0) return fn((files, options = {}) => loadJob(files, { ...budget, ...options }));
  const held: { pool: Promise<DumpPool> | null } = { pool: null };
  try {
    return await fn(async (files, options = {}) => {
      if (size === undefined && textBytes(files) < POOL_MIN_BYTES) return loadJob(files, { ...budget, ...options });
      held.pool ??= import('../io/dump-pool.js').then((m) => {
        const pool = m.createDumpPool(size !== undefined ? { size } : {});
        pool.warm();
        return pool;
      });
      const p = await held.pool;
      // loadJob keeps each reader some tasks ahead (TASKS_AHEAD_PER_READER): none waits while this thread merges.
      return loadJob(files, { ...budget, ...options, runDump: p.run, readers: p.size });
    });
  } finally {
    await held.pool?.then(
      (p) => p.close(),
      () => undefined,
    );
  }
}

/** loadJob over a worker pool (HEAPLENS_WORKERS=<n> sets its size; 0 reads in this thread). */
export async function loadDumps(files: readonly InputFile[], options: LoadOptions = {}): Promise<Job> {
  return withDumpLoader((load) => load(files, options));
}
