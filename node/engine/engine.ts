// The engine in Node: one QuerySession over a job read by the CLI's own readers (worker threads, node:zlib, the
// dataset engine), answering the same messages as the browser worker (core/engine/api.ts) to any number of
// clients: the pages of `heaplens open` over WebSockets (node/engine/server.ts), the desktop app's renderer over a
// MessagePort (app/engine-process.ts). The page receives answers, never the dumps.

import { readFileSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import type {
  FromEngine,
  EngineInfo,
  LoadEnd,
  LoadProgress,
  Request,
  Response,
  ToEngine,
} from '../../core/engine/api.js';
import { answer, isQuery, type AnswerDeps } from '../../core/engine/answer.js';
import { abortError, loadProgressively, type LoadResult } from '../../core/engine/progressive-load.js';
import { applyJobSoFar, jobSoFarDeltas } from '../../core/engine/job-so-far.js';
import { classifyFiles } from '../../core/load/load-job.js';
import { JobTooLargeError } from '../../core/load/memory-budget.js';
import type { JobSummary } from '../../core/query/job-summary.js';
import { QuerySession } from '../../core/query/session.js';
import { nodeInflater } from '../io/gunzip.js';
import { memoryBudget, openJob } from './open-job.js';
import { symbolizeOnDisk, type SymbolOptions } from './symbolize.js';

export interface EngineOptions {
  /** the job to serve (`heaplens open <paths…>`): loaded at once, before any page asks */
  paths: readonly string[] | null;
  /**
   * the client may name paths to open (the desktop app: the user's own drops, each under a root its main process
   * granted, `grant`); a served page may not
   */
  allowPaths: boolean;
  symbols: SymbolOptions | null;
  info: Omit<EngineInfo, 'served'>;
  /** the report page's code (dist/report-app), for the 'report' request; null: reports are refused, saying why */
  reportApp: () => AnswerDeps['reportApp'] | null;
  /** dump reader threads (the machine's cores by default) */
  readers?: number;
}

/** Where a client's messages go back to (one per WebSocket or port). */
export type Reply = (msg: FromEngine) => void;

/** What a load has posted so far: a client that attaches later gets the latest picture first. */
interface LoadState {
  done: Promise<LoadResult>;
  preview: LoadProgress['preview'];
  provisional: LoadProgress['provisional'];
  partial: LoadProgress['partial'];
  /** the `seq` of the last job so far posted (`partial` is it whole), null before any */
  partialSeq: number | null;
  /** the load has ended (done settled): a client attaching now gets the full job's summary alone */
  ended: boolean;
  last: LoadProgress | null;
  listeners: Set<(p: LoadProgress) => void>;
  ctrl: AbortController;
}

export class NodeEngine {
  readonly session = new QuerySession();
  private load: LoadState | null = null;
  /** roots the desktop app's main process granted (files and folders the user picked or dropped), real paths */
  private readonly roots = new Set<string>();
  /** the served job's load (`open`), started with the engine */
  private served: LoadState | null = null;

  constructor(private readonly o: EngineOptions) {
    if (o.paths) this.served = this.startLoad(o.paths);
  }

  get info(): EngineInfo {
    return { ...this.o.info, served: this.o.paths ? [...this.o.paths] : null };
  }

  /** Resolves once the served job is in (benches, tests); rejects as its load did. */
  servedJob(): Promise<JobSummary> | null {
    return this.served?.done.then((r) => r.summary) ?? null;
  }

  /** One message from a client; answers go to `reply`. */
  receive(msg: ToEngine, reply: Reply): void {
    if (!msg || typeof msg !== 'object') return;
    if ('cancel' in msg) {
      // only a load the client started itself is cancelled; the served job is everyone's
      if (this.load && this.load !== this.served) this.load.ctrl.abort();
      return;
    }
    if (!('id' in msg) || !('req' in msg)) {
      reply({
        id: -1,
        ok: false,
        error: 'this engine takes requests only (files are read by the engine)',
        cancelled: false,
      });
      return;
    }
    const { id, req } = msg;
    const t0 = performance.now();
    this.handle(id, req, reply).then(
      (res) => {
        // HEAPLENS_ENGINE_TRACE=1: each answer's type, when it ended (ms since the engine started) and its time
        if (TRACE)
          process.stderr.write(
            `engine: ${req.type} ended at ${Math.round(performance.now())} ms, took ${Math.round(performance.now() - t0)} ms\n`,
          );
        reply({ id, ok: true, res, ms: performance.now() - t0 });
      },
      (e: unknown) => {
        const err = e instanceof Error ? e : new Error(String(e));
        reply({ id, ok: false, error: err.message, cancelled: err.name === 'AbortError' });
      },
    );
  }

  /** A file or folder the user opened (the main process's grant): `openPaths` may name what is under it. */
  grant(realPath: string): void {
    this.roots.add(realPath);
  }

  /** Stops a load in progress and frees the job. */
  close(): void {
    this.load?.ctrl.abort();
    this.session.close();
  }

  private async handle(id: number, req: Request, reply: Reply): Promise<Response> {
    if (isQuery(req)) {
      const deps = req.type === 'report' ? this.reportDeps() : NO_REPORT;
      return (await answer(this.session, req, deps)).res;
    }
    switch (req.type) {
      case 'engineInfo':
        return { type: 'engineInfo', info: this.info };
      case 'open': {
        if (!this.served) throw new Error('this engine was started on no job: open one with heaplens open <paths…>');
        return { type: 'open', ...(await this.attach(this.served, id, reply)) };
      }
      case 'openPaths': {
        if (!this.o.allowPaths) throw new Error('this engine opens only the paths it was started on');
        if (!Array.isArray(req.paths) || !req.paths.every((p) => typeof p === 'string') || req.paths.length === 0)
          throw new Error('openPaths needs a list of paths');
        const dirs = Array.isArray(req.symbolDirs) ? req.symbolDirs.filter((d) => typeof d === 'string') : [];
        for (const p of [...req.paths, ...dirs]) await this.checkGranted(p);
        this.load?.ctrl.abort();
        const state = this.startLoad(req.paths, dirs);
        return { type: 'openPaths', ...(await this.attach(state, id, reply)) };
      }
      case 'load':
      case 'loadBatches':
        throw new Error(`this engine reads files itself: "${req.type}" is the browser's (open paths instead)`);
    }
  }

  /** A path under a granted root (symlinks resolved), else an error naming it. */
  private async checkGranted(p: string): Promise<void> {
    let real: string;
    try {
      real = await realpath(p);
    } catch {
      throw new Error(`not found: ${p}`);
    }
    for (const root of this.roots) if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) return;
    throw new Error(`not opened by the user: ${p}`);
  }

  private reportDeps(): AnswerDeps {
    const app = this.o.reportApp();
    if (!app) throw new Error('the report page is not built (dist/report-app/report.js): run `npm run build`');
    return { reportApp: app };
  }

  /**
   * The client gets the load's latest picture, then its progress as it comes, and the full job's summary: as what
   * changed since the job so far it has (LoadEnd), whole to a client that attached after the load.
   */
  private async attach(state: LoadState, id: number, reply: Reply): Promise<LoadEnd> {
    // the `seq` of the job so far this client has, null: none
    let has: number | null = null;
    const send = (progress: LoadProgress): void => {
      if (progress.partialDelta) has = progress.partialDelta.seq;
      reply({ id, progress });
    };
    if (state.last && !state.ended) {
      send({
        ...state.last,
        ...(state.preview ? { preview: state.preview } : {}),
        ...(state.partial ? { partial: state.partial } : state.provisional ? { provisional: state.provisional } : {}),
      });
      if (state.partial) has = state.partialSeq;
    }
    state.listeners.add(send);
    try {
      const end = await state.done;
      return has !== null && end.delta.seq === has + 1 ? { delta: end.delta } : { summary: end.summary };
    } finally {
      state.listeners.delete(send);
    }
  }

  private startLoad(paths: readonly string[], symbolDirs: readonly string[] = []): LoadState {
    const ctrl = new AbortController();
    const state: LoadState = {
      done: Promise.resolve(null as unknown as LoadResult),
      preview: undefined,
      provisional: undefined,
      partial: undefined,
      partialSeq: null,
      ended: false,
      last: null,
      listeners: new Set(),
      ctrl,
    };
    let phase = '';
    const post = (p: LoadProgress): void => {
      // HEAPLENS_ENGINE_TRACE=1: each phase's start, and when every file was read
      if (TRACE) {
        const allRead = p.phase === 'parse' && p.filesDone === p.filesTotal && state.last?.filesDone !== p.filesDone;
        if (p.phase !== phase || allRead)
          process.stderr.write(
            `engine: ${p.phase} at ${Math.round(performance.now())} ms, files ${p.filesDone}/${p.filesTotal}\n`,
          );
        phase = p.phase;
      }
      if (p.preview) state.preview = p.preview;
      if (p.partial) state.partial = p.partial;
      // the whole job so far, for a client that attaches later (the others get what changed)
      if (p.partialDelta) {
        state.partial = applyJobSoFar(state.partial ?? null, p.partialDelta) ?? undefined;
        state.partialSeq = state.partial ? p.partialDelta.seq : null;
      }
      if (p.provisional) state.provisional = p.provisional;
      state.last = { ...p, preview: undefined, partial: undefined, partialDelta: undefined, provisional: undefined };
      for (const l of state.listeners) l(p);
    };
    state.done = this.read(paths, symbolDirs, ctrl.signal, post);
    if (TRACE)
      void state.done.then(() => process.stderr.write(`engine: loaded at ${Math.round(performance.now())} ms\n`));
    // a failure reaches whoever attaches; none attached is not an unhandled rejection
    const ended = (): void => {
      state.ended = true;
    };
    state.done.then(ended, ended);
    this.load = state;
    return state;
  }

  private async read(
    paths: readonly string[],
    symbolDirs: readonly string[],
    signal: AbortSignal,
    post: (p: LoadProgress) => void,
  ): Promise<LoadResult> {
    const t0 = performance.now();
    let loaded: LoadResult | null = null;
    // the user's symbol folders (the desktop app's) beside those the engine was started with, and the folders opened:
    // binaries copied beside the dumps are found there, as the page finds binaries dropped with the dumps
    const opened = await Promise.all(
      paths.map((p) =>
        stat(p).then(
          (st) => (st.isDirectory() ? [p] : []),
          () => [],
        ),
      ),
    );
    const symbols = this.o.symbols && {
      ...this.o.symbols,
      dirs: [...this.o.symbols.dirs, ...symbolDirs, ...opened.flat()],
    };
    const read = await openJob(paths, {
      symbols,
      symbolizeHere: false,
      signal,
      loadDumps: async (files, problems) => {
        if (files.length === 0) return null;
        post({ phase: 'scan', filesDone: 0, filesTotal: files.length, bytesDone: 0, bytesTotal: 0, file: '' });
        const classified = await classifyFiles(files, signal, nodeInflater);
        const { createDumpPool } = await import('../io/dump-pool.js');
        const pool = createDumpPool(this.o.readers !== undefined ? { size: this.o.readers } : {});
        pool.warm();
        let closed = false;
        const closePool = (): void => {
          if (!closed) pool.close();
          closed = true;
        };
        try {
          loaded = await loadProgressively({
            session: this.session,
            files,
            classified,
            readers: pool,
            inflate: nodeInflater,
            memoryBudget: memoryBudget(),
            signal,
            post,
            onAllRead: closePool,
            symbolize: async (j, sig, progress) => {
              for (const p of problems) j.warnings.unshift({ file: p.path, message: p.message });
              if (!symbols) return;
              const found = await symbolizeOnDisk(j, symbols, files, { signal: sig, onProgress: progress });
              for (const pr of found)
                if (pr.kind !== 'missing') j.warnings.push({ file: pr.file, message: pr.message });
            },
          });
        } catch (e) {
          if (e instanceof JobTooLargeError) throw new Error(e.message, { cause: e });
          throw e;
        } finally {
          closePool();
        }
        return this.session.job;
      },
    });
    if (signal.aborted) throw abortError();
    const job = read.job;
    if (!job) throw new Error(`no heap profile could be read from ${paths.join(', ')}`);
    for (const pr of read.symbolProblems)
      if (pr.kind !== 'missing') job.warnings.push({ file: pr.file, message: pr.message });
    if (loaded) return loaded;
    // a dataset is read whole (DuckDB), then opened as the job: sent whole (no job so far was)
    const summary = this.session.open(job, { loadMs: performance.now() - t0, bytesTotal: 0, waitMs: 0 });
    return { summary, delta: jobSoFarDeltas()(summary, job.processes) };
  }
}

const TRACE = process.env.HEAPLENS_ENGINE_TRACE === '1';

const NO_REPORT: AnswerDeps = { reportApp: { js: '', css: '' } };

/** The report page's code beside the built CLI or in dist/ of a checkout, read once when first asked. */
export function reportAppFrom(candidates: readonly URL[]): () => AnswerDeps['reportApp'] | null {
  let app: AnswerDeps['reportApp'] | null | undefined;
  return () => {
    if (app !== undefined) return app;
    app = null;
    for (const dir of candidates) {
      try {
        app = {
          js: readFileSync(new URL('report.js', dir), 'utf8'),
          css: readFileSync(new URL('report.css', dir), 'utf8'),
        };
        break;
      } catch {
        // not here: the next candidate
      }
    }
    return app;
  };
}
