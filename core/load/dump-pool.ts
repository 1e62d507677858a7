// A pool of workers reading dumps in parallel for loadJob (one dump per task, all cores), whatever
// the workers are: Node worker threads (node/io/dump-pool.ts) or Web Workers (the app's analysis
// worker). A task that kills its worker (out of memory, a crash) fails alone, as a warning naming its
// file, and the worker is replaced; workers that cannot start at all make the pool read in this
// thread. Cancelling terminates the busy workers at once (a message would wait for the parse).

import type { Inflater } from '../formats/inflate.js';
import type { InputFile } from '../formats/input-file.js';
import { dumpTaskTransfer, runDumpTask, runDumpTaskHere, type DumpTask, type DumpTaskResult } from './dump-task.js';
import { TASKS_AHEAD_PER_READER, type DumpRunner } from './load-job.js';
import { FramesReceiver, FramesSender, type FramesDelta } from './frame-delta.js';
import { StackReceiver, StackSender } from './stack-delta.js';
import type { SnapshotMeta } from '../model/process-builder.js';

/** What a worker is told: a task id, where its file is (host-specific `file`), and the snapshot's meta. */
export interface ToDumpWorker<F> {
  id: number;
  file: F;
  path: string;
  size: number;
  mtimeMs: number | null;
  meta: SnapshotMeta;
  /** the task's reader and massif snapshot (DumpTask.kind, .part) */
  kind?: DumpTask['kind'];
  part?: number;
  /** the dump's `.pyframes` sidecar (DumpTask.sidecar), where the worker finds it */
  sidecar?: { file: F; path: string; size: number; mtimeMs: number | null };
}

/** What a worker says. `read` asks the pool's thread for bytes it cannot reach itself (Electron host files). */
export type FromDumpWorker =
  | { ready: true }
  | { id: number; bytes: number }
  /** `frames`: the result's sidecar frames, sent apart as a delta (frame-delta.ts) */
  | { id: number; result: DumpTaskResult; frames?: FramesDelta }
  | { id: number; error: string }
  | { read: number; source: string; offset: number; length: number };

export type ReadReply = { readReply: number; bytes: Uint8Array } | { readReply: number; error: string };

export interface PoolWorker {
  post(msg: ToDumpWorker<unknown> | ReadReply, transfer?: ArrayBuffer[]): void;
  terminate(): void;
  /** Node: whether the worker keeps the process alive (only while it has a task) */
  keepAlive?(on: boolean): void;
}

export interface DumpPoolHost<F> {
  size: number;
  /** starts a worker; it must call `message` for each message and `lost` when it dies */
  spawn(message: (m: FromDumpWorker) => void, lost: (why: string) => void): PoolWorker;
  /** where a worker finds this task's file; null to read it in this thread */
  locate(file: InputFile): F | null;
  inflate: Inflater | null;
  /** bytes for a worker's `read` request */
  read?(source: string, offset: number, length: number): Promise<Uint8Array>;
}

export interface DumpPool {
  readonly size: number;
  run: DumpRunner;
  /**
   * Starts the workers now, before the first task, so they load their code (~0.1 s a worker) while this thread
   * does the load's own setup (listing and classifying the files, reading their heads).
   */
  warm(): void;
  /** terminates the workers */
  close(): void;
}

/**
 * Tasks a worker holds at once: the one it reads and those after it, which it starts as soon as it posts a
 * result, whether or not this thread is free to post more (it is not while it merges, ranks a process or posts an
 * update). With one, each task waited for this thread (3–12 % of a reader's time on one process's dumps); with
 * two, the engine's readers waited a third of the 1,000-process load. loadJob starts as many ahead of its merge.
 */
const TASKS_PER_WORKER = TASKS_AHEAD_PER_READER;

interface Job<F> {
  msg: ToDumpWorker<F>;
  task: DumpTask;
  signal: AbortSignal | undefined;
  onBytes: (n: number) => void;
  resolve: (r: DumpTaskResult) => void;
  reject: (e: unknown) => void;
}

interface Slot<F> {
  worker: PoolWorker;
  /** posted to the worker and not answered yet, in the order posted: the worker reads them in turn */
  jobs: Job<F>[];
  /** the worker has loaded its code (a failure before that is the pool's, not the file's) */
  ready: boolean;
  /** this worker's number (DumpTaskResult.parsed.reader: whose backtrace cache the result's serials are of) */
  reader: number;
}

/** The tasks' cancel handlers by signal: one listener a signal, where one a task held warned past 10 (Node). */
const aborts = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts; the function returned stops that. */
function onAbortOf(signal: AbortSignal, fn: () => void): () => void {
  let fns = aborts.get(signal);
  if (!fns) {
    const set = (fns = new Set());
    aborts.set(signal, set);
    signal.addEventListener('abort', () => [...set].forEach((f) => (set.delete(f), f())), { once: true });
  }
  fns.add(fn);
  return () => void fns.delete(fn);
}

export function createDumpPool<F>(host: DumpPoolHost<F>): DumpPool {
  const size = Math.max(1, host.size);
  const slots: Slot<F>[] = [];
  const queue: Job<F>[] = [];
  let nextId = 1;
  // 0 is this thread's own cache (a task read in this thread)
  let nextReader = 1;
  let closed = false;
  // Set when workers cannot start at all: then every task runs in this thread instead.
  let broken = false;

  const inThread = (task: DumpTask, onBytes: (n: number) => void, signal?: AbortSignal) =>
    runDumpTaskHere(task, { onBytes, inflate: host.inflate, ...(signal ? { signal } : {}) });

  const spawn = (): Slot<F> => {
    const slot = { jobs: [], ready: false, reader: nextReader++ } as unknown as Slot<F>;
    const frames = new FramesReceiver();
    const stacks = new StackReceiver();
    const message = (m: FromDumpWorker) => {
      if ('ready' in m) {
        slot.ready = true;
        return;
      }
      if ('read' in m) {
        const reply = (r: ReadReply, t: ArrayBuffer[] = []) => slot.worker.post(r, t);
        if (!host.read) return reply({ readReply: m.read, error: 'no host file access' });
        host.read(m.source, m.offset, m.length).then(
          (bytes) => reply({ readReply: m.read, bytes }, [bytes.buffer as ArrayBuffer]),
          (e: unknown) => reply({ readReply: m.read, error: e instanceof Error ? e.message : String(e) }),
        );
        return;
      }
      // every delta is taken, even a result no one waits for: later ones number entries after it
      if ('result' in m && m.frames) frames.give(m.result, m.frames);
      if ('result' in m) stacks.give(m.result);
      const k = slot.jobs.findIndex((j) => j.msg.id === m.id);
      if (k < 0) return;
      const job = slot.jobs[k];
      if ('bytes' in m) return job.onBytes(m.bytes);
      slot.jobs.splice(k, 1);
      if (slot.jobs.length === 0) slot.worker.keepAlive?.(false);
      if ('result' in m) {
        if (m.result.parsed) m.result.parsed.reader = slot.reader;
        job.resolve(m.result);
      } else job.reject(new Error(m.error));
      pump();
    };
    const lost = (why: string) => {
      const i = slots.indexOf(slot);
      if (i < 0) return; // terminated by us
      slots.splice(i, 1);
      const jobs = slot.jobs.splice(0);
      if (!slot.ready) {
        broken = true;
        for (const j of [...jobs, ...queue.splice(0)]) inThread(j.task, j.onBytes, j.signal).then(j.resolve, j.reject);
        return;
      }
      // The file's own failure (the first task is the one being read): the other tasks go on, in fresh workers,
      // the worker's next task first.
      const [job, ...waiting] = jobs;
      queue.unshift(...waiting);
      if (job)
        job.resolve({
          file: job.msg.path,
          warnings: [{ file: job.msg.path, message: `could not be read: ${why}` }],
          parsed: null,
        });
      pump();
    };
    slot.worker = host.spawn(message, lost);
    slots.push(slot);
    return slot;
  };

  const pump = () => {
    while (queue.length > 0 && !closed) {
      // cancelled while it waited its turn again (its own abort handler rejects it): no worker is started for it
      if (queue[0].signal?.aborted) {
        queue.shift();
        continue;
      }
      // an idle worker, else a new one while there are fewer than `size`, else the worker holding the fewest (so
      // the load's last tasks are shared, not left queued behind one worker)
      let slot = slots.find((s) => s.jobs.length === 0);
      if (!slot && slots.length < size) slot = spawn();
      for (const s of slots) if (!slot || s.jobs.length < slot.jobs.length) slot = s;
      if (!slot || slot.jobs.length >= TASKS_PER_WORKER) return;
      const job = queue.shift() as Job<F>;
      slot.jobs.push(job);
      slot.worker.keepAlive?.(true);
      slot.worker.post(job.msg);
    }
  };

  const run: DumpRunner = (task, onBytes, signal) => {
    const where = closed || broken ? null : host.locate(task.file);
    if (where === null) return inThread(task, onBytes, signal);
    signal?.throwIfAborted();
    return new Promise<DumpTaskResult>((resolve, reject) => {
      const f = task.file;
      const msg: ToDumpWorker<F> = {
        id: nextId++,
        file: where,
        path: f.path,
        size: f.size,
        mtimeMs: f.mtimeMs,
        meta: task.meta,
        ...(task.kind ? { kind: task.kind } : {}),
        ...(task.part !== undefined ? { part: task.part } : {}),
      };
      // a sidecar the worker cannot reach is read by the merging thread instead (python-stacks.ts)
      const side = task.sidecar;
      const sideWhere = side ? host.locate(side) : null;
      if (side && sideWhere !== null)
        msg.sidecar = { file: sideWhere, path: side.path, size: side.size, mtimeMs: side.mtimeMs };
      const onAbort = () => {
        const q = queue.indexOf(job);
        if (q >= 0) queue.splice(q, 1);
        const slot = slots.find((s) => s.jobs.includes(job));
        if (slot) {
          slots.splice(slots.indexOf(slot), 1);
          slot.worker.terminate();
          // the worker's other task (not started yet, or being read but not cancelled) goes back first in line
          queue.unshift(...slot.jobs.splice(0).filter((j) => j !== job));
        }
        reject(signal?.reason ?? new Error('cancelled'));
        if (slot) pump();
      };
      const unwatch = signal ? onAbortOf(signal, onAbort) : () => undefined;
      const settle =
        <T>(fn: (v: T) => void) =>
        (v: T) => {
          unwatch();
          fn(v);
        };
      const job: Job<F> = { msg, task, signal, onBytes, resolve: settle(resolve), reject: settle(reject) };
      queue.push(job);
      pump();
    });
  };

  return {
    size,
    run,
    warm() {
      // an idle worker does not keep the process alive (it is kept alive while it has a task)
      while (!closed && !broken && slots.length < size) spawn().worker.keepAlive?.(false);
    },
    close() {
      closed = true;
      for (const s of slots.splice(0)) s.worker.terminate();
    },
  };
}

/** How often a reader says how far it is into one task's file (the app's progress bar for a large dump). */
const PROGRESS_EVERY_MS = 100;

export interface WorkerPort {
  post(msg: FromDumpWorker, transfer?: ArrayBuffer[]): void;
  onMessage(handler: (msg: ToDumpWorker<unknown> | ReadReply) => void): void;
}

/**
 * The worker's side: reads one dump per message and posts the result with its typed arrays
 * transferred. `open` makes the task's InputFile; `ask` reads through the pool's thread.
 */
export function serveDumpTasks<F>(
  port: WorkerPort,
  open: (
    msg: ToDumpWorker<F>,
    ask: (source: string, offset: number, length: number) => Promise<Uint8Array>,
  ) => InputFile,
  inflate: Inflater | null,
): void {
  let nextRead = 1;
  let turn = Promise.resolve();
  const frames = new FramesSender();
  const stacks = new StackSender();
  // The reader's stack-words buffer, kept from one task to the next: each result carries a copy of the words it
  // used, which the pool's thread keeps as they are for the stacks a later result leaves out (stack-delta.ts
  // StackMirror). The buffer itself used to go to the merging thread and back, which copied each result's words
  // into its mirror (~2 s of that thread's time at 1,000 processes, where the readers wait for it).
  let words: Uint32Array | undefined;
  const reads = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
  const ask = (source: string, offset: number, length: number) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const read = nextRead++;
      reads.set(read, { resolve, reject });
      port.post({ read, source, offset, length });
    });
  port.onMessage((m) => {
    if ('readReply' in m) {
      const r = reads.get(m.readReply);
      reads.delete(m.readReply);
      if ('bytes' in m) r?.resolve(m.bytes);
      else r?.reject(new Error(m.error));
      return;
    }
    const msg = m as ToDumpWorker<F>;
    // one task at a time, in the order sent (the pool counts the first one held as the one being read)
    turn = turn.then(() => serve(msg));
  });
  const serve = async (msg: ToDumpWorker<F>): Promise<void> => {
    // every failure is the task's answer: the next task's turn comes whatever this one does
    try {
      const side = msg.sidecar;
      stacks.begin();
      // progress within a task only once it has run a while, and then at most every PROGRESS_EVERY_MS: a small
      // dump's result says it all (a message per dump woke the pool's thread 10,000 times on the issue-49 job)
      let lastPost = Date.now();
      const whole = await runDumpTask(
        {
          file: open(msg, ask),
          meta: msg.meta,
          ...(msg.kind ? { kind: msg.kind } : {}),
          ...(msg.part !== undefined ? { part: msg.part } : {}),
          ...(side ? { sidecar: open({ ...msg, ...side }, ask) } : {}),
        },
        {
          inflate,
          onBytes: (bytes) => {
            const now = Date.now();
            if (now - lastPost < PROGRESS_EVERY_MS) return;
            lastPost = now;
            port.post({ id: msg.id, bytes });
          },
          ...(words ? { words } : {}),
          sent: stacks,
        },
      );
      const parsed = whole.parsed;
      if (parsed) {
        words = new Uint32Array(parsed.stackWords.buffer as ArrayBuffer);
        parsed.stackWords = parsed.stackWords.slice();
      }
      const { result, delta } = frames.take(whole);
      const sentStacks = stacks.prepare(result);
      const transfer = dumpTaskTransfer(result);
      if (delta) transfer.push(delta.ids.buffer as ArrayBuffer);
      port.post({ id: msg.id, result, ...(delta ? { frames: delta } : {}) }, transfer);
      if (sentStacks) stacks.commit(sentStacks);
    } catch (e) {
      port.post({ id: msg.id, error: e instanceof Error ? e.message : String(e) });
    }
  };
  port.post({ ready: true });
}
