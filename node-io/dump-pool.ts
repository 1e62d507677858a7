// A pool of worker threads that read dumps in parallel for loadJob (one dump per task, all cores).
// A task that kills its worker (out of memory, a crash) fails alone, as a warning naming its file;
// the worker is replaced. Cancelling terminates the busy workers at once.

import { availableParallelism } from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { DumpRunner } from '../analysis/load-job.js';
import { runDumpTask, type DumpTask, type DumpTaskResult } from '../analysis/dump-task.js';
import { nodeInflater } from './gunzip.js';
import { nodeFilePath } from './node-files.js';
import type { WorkerTask } from './dump-worker.js';

// A worker's JavaScript heap cap. One dump of 1 GB text with 2 M distinct stacks needs about 1.2 GB
// there; a file that needs more is hostile (or a job for `heaplens ingest`) and must not take the
// machine's memory from the other files' tasks.
export const WORKER_HEAP_MB = 2048;

export interface DumpPoolOptions {
  /** worker threads; the machine's cores by default */
  size?: number;
  resourceLimits?: ResourceLimits;
}

export interface DumpPool {
  readonly size: number;
  run: DumpRunner;
  /** terminates the workers (idle ones do not keep the process alive meanwhile) */
  close(): Promise<void>;
}

interface Job {
  id: number;
  task: DumpTask;
  signal: AbortSignal | undefined;
  msg: WorkerTask;
  onBytes: (n: number) => void;
  resolve: (r: DumpTaskResult) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  /** the worker has loaded its code (a failure before that is the pool's, not the file's) */
  ready: boolean;
}

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
  const size = Math.max(1, options.size ?? availableParallelism());
  const limits: ResourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB, ...options.resourceLimits };
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  // Set when workers cannot start at all: then every task runs in this thread instead.
  let broken = false;

  const inThread = (task: DumpTask, onBytes: (n: number) => void, signal?: AbortSignal) =>
    runDumpTask(task, { onBytes, inflate: nodeInflater, ...(signal ? { signal } : {}) });

  const spawn = (): Slot => {
    const worker = newWorker(limits);
    const slot: Slot = { worker, job: null, ready: false };
    worker.on('message', (m: { id: number; ready?: true; bytes?: number; result?: DumpTaskResult; error?: string }) => {
      if (m.ready) {
        slot.ready = true;
        return;
      }
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      if (m.bytes !== undefined) return job.onBytes(m.bytes);
      slot.job = null;
      worker.unref();
      if (m.result) job.resolve(m.result);
      else job.reject(new Error(m.error ?? 'worker failed'));
      pump();
    });
    const lost = (why: string) => {
      const i = slots.indexOf(slot);
      if (i >= 0) slots.splice(i, 1);
      const job = slot.job;
      slot.job = null;
      if (!slot.ready) {
        broken = true;
        for (const j of [...(job ? [job] : []), ...queue.splice(0)]) inThread(j.task, j.onBytes, j.signal).then(j.resolve, j.reject);
        return;
      }
      if (job) {
        // The file's own failure: the other tasks go on, in fresh workers.
        job.resolve({ file: job.msg.path, warnings: [{ file: job.msg.path, message: `could not be read: ${why}` }], parsed: null });
      }
      pump();
    };
    worker.on('error', (e) => lost(`its reader stopped: ${e.message}`));
    worker.on('exit', (code) => lost(`its reader exited (code ${code})`));
    slots.push(slot);
    return slot;
  };

  const pump = () => {
    while (queue.length > 0 && !closed) {
      let slot = slots.find((s) => s.job === null);
      if (!slot) {
        if (slots.length >= size) return;
        slot = spawn();
      }
      const job = queue.shift() as Job;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage(job.msg);
    }
  };

  const run: DumpRunner = (task: DumpTask, onBytes, signal) => {
    const absPath = nodeFilePath(task.file);
    // Files that are not on the local disk (in-memory, tests) are read in this thread.
    if (absPath === null || closed || broken) return inThread(task, onBytes, signal);
    signal?.throwIfAborted();
    return new Promise<DumpTaskResult>((resolve, reject) => {
      const f = task.file;
      const job: Job = { id: nextId++, task, signal, msg: { id: 0, absPath, path: f.path, size: f.size, mtimeMs: f.mtimeMs, meta: task.meta }, onBytes, resolve, reject };
      job.msg.id = job.id;
      const onAbort = () => {
        const q = queue.indexOf(job);
        if (q >= 0) queue.splice(q, 1);
        const slot = slots.find((s) => s.job === job);
        if (slot) {
          // Stops the parse mid-chunk: terminate is immediate, unlike a message the busy worker would read later.
          slot.job = null;
          slots.splice(slots.indexOf(slot), 1);
          void slot.worker.terminate();
        }
        reject(signal?.reason ?? new Error('cancelled'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = <T>(f: (v: T) => void) => (v: T) => {
        signal?.removeEventListener('abort', onAbort);
        f(v);
      };
      job.resolve = done(resolve);
      job.reject = done(reject);
      queue.push(job);
      pump();
    });
  };

  return {
    size,
    run,
    async close() {
      closed = true;
      const all = slots.splice(0);
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}
