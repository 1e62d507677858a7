// The analysis worker: the engine in the page (core/engine/answer.ts over one core/query/session.ts QuerySession),
// for the web page's dropped files and the report. It runs the load of dropped files (read-ahead, the dump readers
// on Web Workers, core/engine/progressive-load.ts) and answers every other message with the engine's `answer`.
// The same module runs in-page in a report (lib/in-page-worker.ts: `connect`, `receive`), over the job the report
// embeds. Node runs the same engine for `heaplens open` and the desktop app (node/engine/).

/// <reference lib="webworker" />
import { classifyFiles, groupProcesses } from '../../../core/load/load-job.ts';
import { withPrefetch } from './prefetch.ts';
import { createWebDumpPool, type ReaderFile } from './dump-pool-web.ts';
import type { DumpPool } from '../../../core/load/dump-pool.ts';
import { webInflater } from '../../../core/formats/inflate.ts';
import type { Job } from '../../../core/model/model.ts';
import { JobAssembler } from '../../../core/model/job-batches.ts';
import type { InputFile } from '../../../core/formats/input-file.ts';
import { compileAddr2line, type CompiledWasm } from '../../../core/symbolize/wasm-addr2line.ts';
import { inputFileSource, perfMapsAmong, symbolizeJob } from '../../../core/symbolize/symbolize-job.ts';
import addr2lineWasmUrl from 'virtual:heaplens/addr2line-wasm-url';
import reportApp from 'virtual:heaplens/report-app';
import { QuerySession } from '../../../core/query/session.ts';
import { answer, isQuery } from '../../../core/engine/answer.ts';
import { loadProgressively } from '../../../core/engine/progressive-load.ts';
import type { EngineInfo, FromWorker, LoadProgress, Request, Response, SourceFile, ToWorker } from '../lib/protocol.ts';
import { readBlob } from './blob-read.ts';

declare const self: DedicatedWorkerGlobalScope;

/** The worker's state, all of it: the job and its caches (the session), and the transport's and loader's parts. */
const w = {
  session: new QuerySession(),
  compiledWasm: null as Promise<CompiledWasm> | null,
  /** loads in progress, by request id (cancel aborts) */
  controllers: new Map<number, AbortController>(),
  /** reads of host paths (Electron) waiting for the UI thread's reply */
  pendingReads: new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>(),
  nextRead: 1,
  /** files sent ahead of a 'load' */
  staged: [] as SourceFile[],
  /** a job arriving in batches (a dataset the desktop app's main process reads), until 'loadBatches' */
  assembling: null as JobAssembler | null,
  /** dump readers, one per core, started on a load's first dump and closed once every dump is read */
  pool: undefined as DumpPool | null | undefined,
  /** where the load in progress has its files (the readers ask) */
  poolFiles: null as {
    locate: Map<InputFile, ReaderFile>;
    read: (i: number, offset: number, length: number) => Promise<Uint8Array>;
  } | null,
  postOut: ((msg, transfer) => self.postMessage(msg, transfer)) as (msg: FromWorker, transfer: Transferable[]) => void,
};

function post(msg: FromWorker, transfer: Transferable[] = []): void {
  w.postOut(msg, transfer);
}

/** In-page use (a report): where answers go instead of the worker's postMessage. */
export function connect(out: (msg: FromWorker) => void): void {
  w.postOut = (msg) => out(msg);
}

function hostRead(hostPath: string, offset: number, length: number): Promise<Uint8Array> {
  const id = w.nextRead++;
  return new Promise((resolve, reject) => {
    w.pendingReads.set(id, { resolve, reject });
    post({ read: id, hostPath, offset, length });
  });
}

// The model's memory budget in the app: a renderer process holds a few GB at most (V8 caps each heap
// near 4 GB and the readers need room too); beyond it the load stops with a message naming
// `heaplens ingest` (core/load/memory-budget.ts) rather than the tab crashing.
const APP_MEMORY_BUDGET = 2e9;

function dumpPool(): DumpPool | null {
  if (w.pool === undefined) {
    w.pool = createWebDumpPool({
      locate: (f) => w.poolFiles?.locate.get(f) ?? null,
      read: (source, offset, length) =>
        w.poolFiles
          ? w.poolFiles.read(Number(source), offset, length)
          : Promise.reject(new Error('no load in progress')),
    });
  }
  return w.pool;
}

/** Closes the dump readers (their heaps go with them); the next load starts fresh ones. */
function closeDumpPool(): void {
  w.pool?.close();
  w.pool = undefined;
}

function toInputFile(f: SourceFile): InputFile {
  const blob = f.blob;
  const hostPath = f.hostPath;
  const file = blob instanceof File ? blob : null;
  return {
    path: f.path,
    size: f.size >= 0 ? f.size : (blob?.size ?? 0),
    mtimeMs: f.mtimeMs ?? (file && file.lastModified > 0 ? file.lastModified : null),
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (blob) return await readBlob(blob, offset, length);
      if (hostPath) return await hostRead(hostPath, offset, length);
      throw new Error(`no content for ${f.path}`);
    },
  };
}

/**
 * Symbolizes the job (core/symbolize/symbolize-job.ts) over the files loaded with it (binaries and debug files the
 * user dropped beside the dumps) and `extra` (symbol folders): each process's table goes onto the model, and what
 * could not be found or trusted becomes a warning (missing binaries have their own view: 'missingBinaries').
 */
async function symbolizeAll(
  j: Job,
  files: InputFile[],
  extra: InputFile[],
  signal: AbortSignal,
  progress: (p: LoadProgress) => void,
): Promise<void> {
  if (!j.processes.some((p) => p.maps)) return;
  const dumps = new Set(j.processes.flatMap((p) => p.snapshots.map((s) => s.file)));
  const others = files.filter((f) => !dumps.has(f.path));
  w.compiledWasm ??= fetch(addr2lineWasmUrl)
    .then((r) => r.arrayBuffer())
    .then((b) => compileAddr2line(new Uint8Array(b)));
  const { source, dirs } = inputFileSource(others.concat(extra));
  const problems = await symbolizeJob(j, {
    source,
    wasm: await w.compiledWasm,
    symbolDirs: dirs,
    sysroot: null,
    hostPaths: false,
    cacheStore: null,
    perfMaps: await perfMapsAmong(others),
    signal,
    onProgress: progress,
  });
  for (const pr of problems) if (pr.kind !== 'missing') j.warnings.push({ file: pr.file, message: pr.message });
}

/**
 * A load of dropped files (or the desktop app's host paths, read through the UI thread): read-ahead in the
 * loader's order, Blob-backed dumps read by the readers themselves, then the engine's progressive load
 * (core/engine/progressive-load.ts).
 */
async function load(id: number, req: Extract<Request, { type: 'load' }>): Promise<Response> {
  const ctrl = new AbortController();
  w.controllers.set(id, ctrl);
  try {
    const all = w.staged.concat(req.files);
    w.staged = [];
    const direct = all.map(toInputFile);
    // the loader's own order, so read-ahead fetches what it will read next
    const inflate = webInflater();
    const classified = await classifyFiles(direct, ctrl.signal, inflate);
    const index = new Map<InputFile, number>();
    direct.forEach((f, i) => index.set(f, i));
    const order: number[] = [];
    for (const g of groupProcesses(classified.dumps)) for (const d of g.dumps) order.push(index.get(d.file) as number);
    const files = withPrefetch(direct, order, (i) => direct[i].read(0, direct[i].size));
    let waited = 0;
    const timed = files.map((f) => ({
      ...f,
      read: async (o: number, l: number) => {
        const t = performance.now();
        try {
          return await f.read(o, l);
        } finally {
          waited += performance.now() - t;
        }
      },
    }));
    // Blob-backed dumps are read by the pool's readers themselves; host paths through this worker's read-ahead.
    const locate = new Map<InputFile, ReaderFile>();
    timed.forEach((f, i) => locate.set(f, all[i].blob ? { blob: all[i].blob as Blob } : { source: String(i) }));
    w.poolFiles = { locate, read: (i, o, l) => timed[i].read(o, l) };
    const readers = dumpPool();
    // the page's one client has every job so far posted, but its load ends on the whole summary (a structured clone)
    const { summary } = await loadProgressively({
      session: w.session,
      files: direct,
      classified,
      reading: { files: timed, of: (f) => timed[index.get(f) as number] },
      readers,
      inflate,
      memoryBudget: APP_MEMORY_BUDGET,
      signal: ctrl.signal,
      post: (progress) => post({ id, progress }),
      // the readers' heaps go once every dump is read, before the job is put together and ranked (a load's peak)
      onAllRead: closeDumpPool,
      symbolize: (j, signal, progress) =>
        symbolizeAll(j, direct, (req.symbolFiles ?? []).map(toInputFile), signal, progress),
      waitedMs: () => waited,
    });
    return { type: 'load', summary };
  } finally {
    closeDumpPool();
    w.poolFiles = null;
    w.controllers.delete(id);
  }
}

const IN_PAGE: EngineInfo = { kind: 'in-page', label: 'in this page', served: null };

async function handle(id: number, req: Request): Promise<{ res: Response; transfer?: Transferable[] }> {
  const s = w.session;
  if (isQuery(req)) return await answer(s, req, { reportApp });
  switch (req.type) {
    case 'load':
      return { res: await load(id, req) };
    case 'loadBatches': {
      const t0 = performance.now();
      const asm = w.assembling;
      w.assembling = null;
      if (!asm) throw new Error('no job batches arrived');
      const j = asm.finish();
      return {
        res: { type: 'loadBatches', summary: s.open(j, { loadMs: performance.now() - t0, bytesTotal: 0, waitMs: 0 }) },
      };
    }
    case 'engineInfo':
      return { res: { type: 'engineInfo', info: IN_PAGE } };
    case 'open':
    case 'openPaths':
      throw new Error('this engine reads the files given to the page: it opens no paths (heaplens open does)');
  }
}

/** One message from the UI (the worker's onmessage, or a direct call in-page). */
export function receive(msg: ToWorker): void {
  if ('stage' in msg) {
    w.staged.push(...msg.stage);
    return;
  }
  if ('jobBatch' in msg) {
    // a 'job' batch starts a job afresh (what an interrupted earlier one left is dropped)
    if (msg.jobBatch.kind === 'job' || !w.assembling) w.assembling = new JobAssembler();
    w.assembling.add(msg.jobBatch);
    return;
  }
  if ('cancel' in msg) {
    w.controllers.get(msg.cancel)?.abort();
    return;
  }
  if ('readReply' in msg) {
    const r = w.pendingReads.get(msg.readReply);
    w.pendingReads.delete(msg.readReply);
    if (!r) return;
    if (msg.bytes) r.resolve(msg.bytes);
    else r.reject(new Error(msg.error ?? 'read failed'));
    return;
  }
  const { id, req } = msg;
  const t0 = performance.now();
  handle(id, req).then(
    ({ res, transfer }) => post({ id, ok: true, res, ms: performance.now() - t0 }, transfer ?? []),
    (e: unknown) => {
      const err = e instanceof Error ? e : new Error(String(e));
      post({ id, ok: false, error: err.message, cancelled: err.name === 'AbortError' });
    },
  );
}

// in a worker (not when imported in-page): messages come from the UI thread
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined')
  self.onmessage = (ev: MessageEvent<ToWorker>) => receive(ev.data);
