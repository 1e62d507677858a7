// UI-side handle on the analysis worker: typed requests, progress, cancellation, and host reads (Electron).

import type { FromWorker, LoadProgress, Request, Response, SourceFile, ToWorker } from './protocol.ts';
import type { WorkerLike } from './spawn-worker.ts';
import type { JobBatch } from '../../../core/model/job-batches.ts';

type ResponseOf<T extends Request['type']> = Extract<Response, { type: T }>;

interface Pending {
  resolve: (r: Response) => void;
  reject: (e: Error) => void;
  onProgress?: (p: LoadProgress) => void;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

export class AnalysisClient {
  private readonly worker: WorkerLike;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** ms the worker spent on the last request of each type (for the status bar and the bench) */
  readonly timings: Record<string, number> = {};
  /** the page's ms decoding the slowest message of each kind (a response's type, 'progress', 'partial'): the bench's */
  readonly decodeMs: Record<string, number> = {};
  /** told once when the engine fails or goes away (a Node engine's socket closed) */
  onFailure: ((message: string) => void) | null = null;

  constructor(
    private readonly hostRead: ((hostPath: string, offset: number, length: number) => Promise<Uint8Array>) | null,
    worker: WorkerLike,
  ) {
    this.worker = worker;
    this.worker.onmessage = (ev: { data: FromWorker }) => {
      // a message is decoded on first access of its data (structured clone): measured, for the bench
      const t0 = performance.now();
      const msg = ev.data;
      const ms = performance.now() - t0;
      const kind =
        'res' in msg && msg.ok
          ? msg.res.type
          : 'progress' in msg
            ? msg.progress.partial || msg.progress.partialDelta
              ? 'partial'
              : msg.progress.preview
                ? 'preview'
                : 'progress'
            : 'other';
      if (ms > (this.decodeMs[kind] ?? 0)) this.decodeMs[kind] = ms;
      this.onMessage(msg);
    };
    this.worker.onerror = (ev: { message: string }) => {
      for (const p of this.pending.values()) p.reject(new Error(`analysis worker failed: ${ev.message}`));
      this.pending.clear();
      const told = this.onFailure;
      this.onFailure = null;
      told?.(ev.message);
    };
  }

  /** requests not answered yet (the bench waits for the views of a loaded job to have their data) */
  get inFlight(): number {
    return this.pending.size;
  }

  private send(msg: ToWorker, transfer: Transferable[] = []): void {
    this.worker.postMessage(msg, transfer);
  }

  private onMessage(msg: FromWorker): void {
    if ('read' in msg) {
      const { read, hostPath, offset, length } = msg;
      if (!this.hostRead) {
        this.send({ readReply: read, error: 'no host file access' });
        return;
      }
      this.hostRead(hostPath, offset, length).then(
        (bytes) => this.send({ readReply: read, bytes }, [bytes.buffer as ArrayBuffer]),
        (e: unknown) => this.send({ readReply: read, error: e instanceof Error ? e.message : String(e) }),
      );
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    if ('progress' in msg) {
      p.onProgress?.(msg.progress);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.ok) {
      this.timings[msg.res.type] = msg.ms;
      p.resolve(msg.res);
    } else p.reject(msg.cancelled ? new CancelledError() : new Error(msg.error));
  }

  /** Sends a request; returns its id (for cancel) and the promise of its typed response. */
  start<T extends Request['type']>(
    req: Extract<Request, { type: T }>,
    onProgress?: (p: LoadProgress) => void,
  ): { id: number; done: Promise<ResponseOf<T>> } {
    const id = this.nextId++;
    const done = new Promise<ResponseOf<T>>((resolve, reject) => {
      this.pending.set(id, { resolve: (r) => resolve(r as ResponseOf<T>), reject, onProgress });
    });
    this.send({ id, req });
    return { id, done };
  }

  /**
   * Starts a load, handing Blob-backed files to the worker in batches: cloning a disk-backed File costs a
   * synchronous stat on the UI thread, so one postMessage of 10,000 files would block the page for seconds.
   */
  async startLoad(
    files: SourceFile[],
    symbolFiles: SourceFile[],
    onProgress: (p: LoadProgress) => void,
    onStaged?: (n: number) => void,
  ): Promise<{ id: number; done: Promise<ResponseOf<'load'>> }> {
    // Batches cut by time, not count: a fixed count blocked the page for 130–270 ms per batch on a busy
    // machine. Each slice stays well under the 100 ms a user notices.
    const SLICE_MS = 20;
    const BATCH = 16;
    let i = 0;
    while (files.length - i > BATCH) {
      const t0 = performance.now();
      while (files.length - i > BATCH && performance.now() - t0 < SLICE_MS) {
        this.send({ stage: files.slice(i, i + BATCH) });
        i += BATCH;
      }
      onStaged?.(i);
      await new Promise<void>((r) => setTimeout(r, 0));
    }
    return this.start({ type: 'load', files: files.slice(i), symbolFiles }, onProgress);
  }

  /** Hands one batch of a job to the worker (typed arrays transferred), ahead of a 'loadBatches' request. */
  sendJobBatch(batch: JobBatch): void {
    const transfer: ArrayBuffer[] = [];
    if (batch.kind === 'cells') {
      for (const c of batch.snapshots)
        for (const a of [c.stackIds, c.liveBytes, c.liveObjects, c.liveVarBytes, c.accumBytes, c.accumObjects])
          if (a) transfer.push(a.buffer as ArrayBuffer);
    }
    this.send({ jobBatch: batch }, transfer);
  }

  request<T extends Request['type']>(req: Extract<Request, { type: T }>): Promise<ResponseOf<T>> {
    return this.start(req).done;
  }

  cancel(id: number): void {
    this.send({ cancel: id });
  }

  terminate(): void {
    this.worker.terminate();
  }
}
