// The analysis worker: holds the loaded job (one core/query/session.ts QuerySession) and runs the load pipeline
// (read-ahead, the dump readers, the job shown process by process, symbolization); every other message is answered
// by one query of core/query (or core/export, core/report) over the session. The UI thread never parses text.
// The same module runs in-page in a report (lib/in-page-worker.ts: `connect`, `receive`), over the job the
// report embeds.

/// <reference lib="webworker" />
import { classifyFiles, groupProcesses, loadJob, reclassify } from '../../../core/load/load-job.ts';
import { withPrefetch } from './prefetch.ts';
import { createWebDumpPool, type ReaderFile } from './dump-pool-web.ts';
import type { DumpPool } from '../../../core/load/dump-pool.ts';
import { previewJob } from '../../../core/load/job-preview.ts';
import { webInflater } from '../../../core/formats/inflate.ts';
import type { Job, LoadWarning, ProcessSeries } from '../../../core/model/model.ts';
import { JobAssembler } from '../../../core/model/job-batches.ts';
import type { InputFile } from '../../../core/formats/input-file.ts';
import { compileAddr2line, type CompiledWasm } from '../../../core/symbolize/wasm-addr2line.ts';
import { inputFileSource, perfMapsAmong, symbolizeJob } from '../../../core/symbolize/symbolize-job.ts';
import addr2lineWasmUrl from 'virtual:heaplens/addr2line-wasm-url';
import reportApp from 'virtual:heaplens/report-app';
import { reopenPayload, reopenReport } from '../../../core/report/reopen.ts';
import { fromBase64 } from '../../../core/report/payload.ts';
import { appReport } from '../../../core/report/app-report.ts';
import { exportSnapshot } from '../../../core/export/snapshot-export.ts';
import { QuerySession } from '../../../core/query/session.ts';
import { growthTable } from '../../../core/query/growth-table.ts';
import { flameTree } from '../../../core/query/flame.ts';
import { stackDetail, stackSeries } from '../../../core/query/series.ts';
import { suspectsResult } from '../../../core/query/suspects.ts';
import { provisionalRanking } from '../../../core/query/provisional.ts';
import { missingBinariesAt } from '../../../core/query/missing-binaries.ts';
import { resolveStacks, stackTargets } from '../../../core/query/stack-targets.ts';
import type { FromWorker, JobPreview, LoadProgress, Request, Response, SourceFile, ToWorker } from '../lib/protocol.ts';
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

// How long the parse waits for the dump heads' preview before starting anyway: the first picture in
// seconds matters more than the same delay on a load of minutes.
const PREVIEW_HEAD_START_MS = 2000;

// While a job loads, the job so far goes to the window at most this often (each update re-renders its views).
const PARTIAL_INTERVAL_MS = 500;
/** Progress (files and bytes read) posted at most this often: each post re-lays out and repaints the page's
 * progress line, and at 20 a second that was a quarter of the page's CPU during a load on two cores. */
const PROGRESS_INTERVAL_MS = 200;

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

/**
 * The job process by process while it loads (loadJob's onProcess): the first complete process at once, then at
 * most one update per PARTIAL_INTERVAL_MS (the last one waits on a timer). Each update makes the processes read
 * so far the session's job (QuerySession.showPartial), so the window's queries (suspects, growth, flame graphs)
 * answer on them, and posts its summary with the other processes from their dump heads.
 */
function partialPoster(
  id: number,
  signal: AbortSignal,
  preview: () => JobPreview | null,
  progress: () => LoadProgress,
): { onProcess: (processes: readonly ProcessSeries[], warnings: readonly LoadWarning[]) => void; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = -Infinity;
  let latest: { processes: readonly ProcessSeries[]; warnings: readonly LoadWarning[] } | null = null;
  let stopped = false;
  const send = (): void => {
    timer = null;
    if (stopped || !latest || signal.aborted) return;
    const { processes, warnings } = latest;
    latest = null;
    last = performance.now();
    const partial = w.session.showPartial(processes, warnings, preview(), progress().bytesTotal);
    post({ id, progress: { ...progress(), partial } });
  };
  return {
    onProcess(processes, warnings) {
      latest = { processes, warnings };
      const wait = last + PARTIAL_INTERVAL_MS - performance.now();
      if (wait <= 0) send();
      else timer ??= setTimeout(send, wait);
    },
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}

// The provisional ranking (before the first process is read whole): from this many dumps on, then no sooner than
// PROVISIONAL_INTERVAL_MS, nor than PROVISIONAL_SHARE × its last ranking's time, after the last (it is ranked in
// this worker, between two dumps' merges: the readers wait meanwhile).
const PROVISIONAL_MIN_DUMPS = 4;
const PROVISIONAL_INTERVAL_MS = 1000;
const PROVISIONAL_SHARE = 3;
// Rows of a provisional ranking: a screenful at 1280×800 over the preview (each row draws a sparkline per holder)
const PROVISIONAL_ROWS = 10;

/** loadJob's onDump: the ranking of the dumps read so far, posted while no process is read whole. */
function provisionalPoster(
  id: number,
  signal: AbortSignal,
  progress: () => LoadProgress,
): (processes: readonly ProcessSeries[], dumps: number, soFar: () => ProcessSeries) => void {
  let next = -Infinity;
  return (processes, dumps, soFar) => {
    if (processes.length > 0 || dumps < PROVISIONAL_MIN_DUMPS || signal.aborted) return;
    const t = performance.now();
    if (t < next) return;
    const pr = progress();
    const provisional = provisionalRanking(processes, soFar(), pr.filesTotal, PROVISIONAL_ROWS);
    const ms = performance.now() - t;
    next = performance.now() + Math.max(PROVISIONAL_INTERVAL_MS, PROVISIONAL_SHARE * ms);
    post({ id, progress: { ...pr, provisional } });
  };
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
 * A load: the dump heads' preview first (every process's timeline in seconds), then the dumps by the readers with
 * read-ahead in the loader's order, the job shown process by process, then symbolization. The job open before it
 * stays until this one is in; a load cancelled or failed after showing its first processes puts it back
 * (QuerySession.abandonLoad).
 */
async function load(id: number, req: Extract<Request, { type: 'load' }>): Promise<Response> {
  const ctrl = new AbortController();
  w.controllers.set(id, ctrl);
  const t0 = performance.now();
  let lastPost = 0;
  let partial: ReturnType<typeof partialPoster> | null = null;
  try {
    const all = w.staged.concat(req.files);
    w.staged = [];
    const direct = all.map(toInputFile);
    // the loader's own order, so read-ahead fetches what it will read next
    const classified = await classifyFiles(direct);
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
    // Every process's timeline from the dump heads first, while the readers parse.
    const bytesTotal = direct.reduce((a, f) => a + f.size, 0);
    // set by the heads' read (a callback: typed wide so the narrowing to null does not stick)
    let preview = null as JobPreview | null;
    const previewed = previewJob(direct, { inflate: webInflater(), signal: ctrl.signal, classified }).then(
      (got) => {
        preview = got;
        if (!ctrl.signal.aborted)
          post({
            id,
            progress: {
              phase: 'parse',
              filesDone: 0,
              filesTotal: preview.dumps,
              bytesDone: 0,
              bytesTotal,
              file: '',
              preview: got,
            },
          });
      },
      () => undefined,
    );
    // The heads go first (the readers would otherwise take the disk and cores from them), for a bounded time.
    await Promise.race([previewed, new Promise((r) => setTimeout(r, PREVIEW_HEAD_START_MS))]);
    let lastProgress: LoadProgress = {
      phase: 'parse',
      filesDone: 0,
      filesTotal: preview?.dumps ?? 0,
      bytesDone: 0,
      bytesTotal,
      file: '',
    };
    partial = partialPoster(
      id,
      ctrl.signal,
      () => preview,
      () => lastProgress,
    );
    const j = await loadJob(timed, {
      // told once above (over `direct`, whose index is each timed copy's): no file's first bytes read again
      classified: reclassify(classified, (f) => timed[index.get(f) as number]),
      ...(readers ? { runDump: readers.run, parallelism: 2 * readers.size, recycle: readers.recycle } : {}),
      memoryBudget: APP_MEMORY_BUDGET,
      signal: ctrl.signal,
      onProcess: partial.onProcess,
      onDump: provisionalPoster(id, ctrl.signal, () => lastProgress),
      onProgress: (pr: LoadProgress) => {
        lastProgress = {
          phase: pr.phase,
          filesDone: pr.filesDone,
          filesTotal: pr.filesTotal,
          bytesDone: pr.bytesDone,
          bytesTotal: pr.bytesTotal,
          file: pr.file,
        };
        // every dump is read (what is left is merging): the readers' heaps go now, before the job is put
        // together and ranked (the peak of a load); a next load starts fresh readers
        if (pr.filesDone === pr.filesTotal && pr.filesTotal > 0) closeDumpPool();
        const now = performance.now();
        if (now - lastPost > PROGRESS_INTERVAL_MS || pr.filesDone === pr.filesTotal) {
          lastPost = now;
          post({ id, progress: lastProgress });
        }
      },
    });
    partial.stop();
    if (ctrl.signal.aborted) throw new DOMException('cancelled', 'AbortError');
    closeDumpPool();
    try {
      await symbolizeAll(j, direct, (req.symbolFiles ?? []).map(toInputFile), ctrl.signal, (pr) =>
        post({ id, progress: pr }),
      );
    } catch (e) {
      if (ctrl.signal.aborted) throw e;
      j.warnings.push({
        file: '',
        message: `symbolization unavailable: ${e instanceof Error ? e.message : String(e)}; frames show module+offset`,
      });
    }
    const summary = w.session.finishLoad(j, {
      loadMs: performance.now() - t0,
      bytesTotal,
      waitMs: waited,
      readers: readers?.size ?? 0,
    });
    return { type: 'load', summary };
  } catch (e) {
    w.session.abandonLoad();
    throw e;
  } finally {
    partial?.stop();
    w.poolFiles = null;
    w.controllers.delete(id);
  }
}

async function handle(id: number, req: Request): Promise<{ res: Response; transfer?: Transferable[] }> {
  const s = w.session;
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
    case 'summary':
      return { res: { type: 'summary', summary: s.summary } };
    case 'postmortem':
      // a limit typed in the app: the projections again over the same job (a report keeps its own)
      return { res: { type: 'postmortem', postmortem: s.setLimit(req.limit) } };
    case 'stackSeries':
      return { res: { type: 'stackSeries', series: stackSeries(s, req.proc, req.n, req.view) } };
    case 'growth':
      return { res: { type: 'growth', growth: growthTable(s, req) } };
    case 'suspects':
      return { res: { type: 'suspects', suspects: suspectsResult(s, req.limit, req.view) } };
    case 'flame': {
      const { flame, buffers } = flameTree(s, req);
      return { res: { type: 'flame', flame }, transfer: buffers as ArrayBuffer[] };
    }
    case 'stack':
      return { res: { type: 'stack', stack: stackDetail(s, req) } };
    case 'stackTargets':
      return { res: { type: 'stackTargets', targets: stackTargets(s, req.proc, req.stackIds) } };
    case 'resolveStacks':
      return { res: { type: 'resolveStacks', ids: resolveStacks(s, req.targets) } };
    case 'report':
      return { res: { type: 'report', ...(await appReport(s, req, reportApp)) } };
    case 'export': {
      const r = exportSnapshot(s, req.format, req.procs, req.snapshot, req.view);
      return {
        res: { type: 'export', ...r },
        transfer: typeof r.data === 'string' ? [] : [r.data.buffer as ArrayBuffer],
      };
    }
    case 'reopenReport': {
      // the report's job replaces the loaded one: every view then runs on it as on loaded dumps
      const t0 = performance.now();
      const r = req.payload !== undefined ? reopenPayload(fromBase64(req.payload)) : reopenReport(req.html ?? '');
      const summary = s.open(r.job, { loadMs: performance.now() - t0, bytesTotal: 0, waitMs: 0 }, r.postmortem);
      // the process table counts the stacks of the dumps, not only the ones the report kept
      summary.processes.forEach((p, k) => (p.stackCount = r.header.processes[k]?.stackCount ?? p.stackCount));
      return { res: { type: 'reopenReport', session: r.session, summary } };
    }
    case 'missingBinaries':
      return {
        res: {
          type: 'missingBinaries',
          ...missingBinariesAt(s.proc(req.proc), req.snapshot, {
            includeAllocator: !req.view.hideAllocator,
            view: req.view,
          }),
        },
      };
    case 'close':
      s.close();
      return { res: { type: 'close' } };
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
