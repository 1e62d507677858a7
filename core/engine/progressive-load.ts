// A load as every engine runs it, whatever reads the bytes: the dump heads' preview first (every process's timeline
// in seconds), a provisional ranking while no process is read whole, the job shown process by process, then
// symbolization and the full job. The transports give the files and the readers (the browser's Web Workers over
// dropped Files; Node's worker threads over paths) and where progress goes; the rest is here, once.

import { loadJob, reclassify, type ClassifiedFiles, type DumpRunner } from '../load/load-job.js';
import { previewJob, type JobPreview } from '../load/job-preview.js';
import type { Inflater } from '../formats/inflate.js';
import type { InputFile } from '../formats/input-file.js';
import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import type { JobSummary } from '../query/job-summary.js';
import { provisionalRanking } from '../query/provisional.js';
import type { QuerySession } from '../query/session.js';
import type { LoadProgress } from './api.js';
import { jobSoFarDeltas, type JobSoFarDelta } from './job-so-far.js';

// How long the parse waits for the dump heads' preview before starting anyway: the first picture in
// seconds matters more than the same delay on a load of minutes.
const PREVIEW_HEAD_START_MS = 2000;

// While a job loads, the job so far goes to the window at most this often (each update re-renders its views).
const PARTIAL_INTERVAL_MS = 500;
/** ... and no sooner than this many times the last update's own cost after it, with the answers the window asked
 * of it (they run on the thread that merges the dumps) */
const PARTIAL_SHARE = 4;
/**
 * ... nor before another 1/PARTIAL_UPDATES of the dumps is read since the last: each update summarizes, sends and
 * re-renders every process read so far (a cost that grows with the job), and at 1,000 processes the 57 updates of
 * a load took 4.4 s of the merging thread and as much of the page's, on the same two cores. A small job is still
 * shown process by process.
 */
const PARTIAL_UPDATES = 20;
/**
 * Progress (files and bytes read) posted at most this often: each post is a frame of the page (its progress line and
 * the pending processes' counts laid out, the page repainted). At 20 a second that was a quarter of the page's CPU
 * during a load on two cores; at 5 a second, on the 1,000-process job, ~250 frames of ~9 ms of the page's main thread
 * each (and as many of its compositor, rasterizer and GPU process): about a third of the browser's CPU to the whole
 * job. Once a second the bar still moves by ~2 % of a minute's load.
 */
export const PROGRESS_INTERVAL_MS = 1000;

// The provisional ranking (before the first process is read whole): from this many dumps on, then no sooner than
// PROVISIONAL_INTERVAL_MS, nor than PROVISIONAL_SHARE × its last ranking's time, after the last (it is ranked in
// the merging thread, between two dumps' merges: the readers wait meanwhile).
const PROVISIONAL_MIN_DUMPS = 4;
const PROVISIONAL_INTERVAL_MS = 1000;
const PROVISIONAL_SHARE = 3;
// Rows of a provisional ranking: a screenful at 1280×800 over the preview (each row draws a sparkline per holder)
const PROVISIONAL_ROWS = 10;

/** The dump readers a transport runs (core/load/dump-pool.ts on Web Workers or worker threads). */
export interface Readers {
  run: DumpRunner;
  size: number;
}

export interface ProgressiveLoad {
  session: QuerySession;
  /** the files the heads are read from (and classified over) */
  files: InputFile[];
  classified: ClassifiedFiles;
  /** the same files as loadJob reads them (a transport's read-ahead, timing); `files` when absent */
  reading?: { files: InputFile[]; of: (f: InputFile) => InputFile };
  readers: Readers | null;
  inflate: Inflater | null;
  memoryBudget: number;
  signal: AbortSignal;
  /** where progress goes (the UI), throttled here */
  post: (p: LoadProgress) => void;
  /** every dump is read: the readers' heaps can go before the job is put together and ranked (a load's peak) */
  onAllRead?: () => void;
  /** symbolizes the job read (its problems as warnings); progress through `post` */
  symbolize: (job: Job, signal: AbortSignal, post: (p: LoadProgress) => void) => Promise<void>;
  /** ms the load waited for bytes (a transport's read-ahead), for the summary's load figures */
  waitedMs?: () => number;
}

/** A load's end: the full job's summary, and what changed since the job so far the load last sent (job-so-far.ts). */
export interface LoadResult {
  summary: JobSummary;
  /** applied to the last `partialDelta` posted (or to nothing, when none was), the full job's summary */
  delta: JobSoFarDelta;
}

/**
 * Loads the files into the session and returns the full job's summary. The job open before stays until this one
 * is in; a load cancelled or failed after showing its first processes puts it back (QuerySession.abandonLoad).
 */
export async function loadProgressively(o: ProgressiveLoad): Promise<LoadResult> {
  const t0 = performance.now();
  const { signal, session } = o;
  const progressDue = progressThrottle(PROGRESS_INTERVAL_MS);
  let partial: ReturnType<typeof partialPoster> | null = null;
  try {
    const bytesTotal = o.files.reduce((a, f) => a + f.size, 0);
    // set by the heads' read (a callback: typed wide so the narrowing to null does not stick)
    let preview = null as JobPreview | null;
    const previewed = previewJob(o.files, { inflate: o.inflate ?? undefined, signal, classified: o.classified }).then(
      (got) => {
        preview = got;
        if (!signal.aborted)
          o.post({
            phase: 'parse',
            filesDone: 0,
            filesTotal: got.dumps,
            bytesDone: 0,
            bytesTotal,
            file: '',
            preview: got,
          });
      },
      () => undefined,
    );
    // The heads go first (the readers would otherwise take the disk and cores from them), for a bounded time.
    let headTimer: ReturnType<typeof setTimeout> | null = null;
    await Promise.race([previewed, new Promise((r) => (headTimer = setTimeout(r, PREVIEW_HEAD_START_MS)))]);
    if (headTimer !== null) clearTimeout(headTimer);
    let lastProgress: LoadProgress = {
      phase: 'parse',
      filesDone: 0,
      filesTotal: preview?.dumps ?? 0,
      bytesDone: 0,
      bytesTotal,
      file: '',
    };
    partial = partialPoster(
      session,
      signal,
      () => preview,
      () => lastProgress,
      o.post,
    );
    const reading = o.reading;
    const j = await loadJob(reading ? reading.files : o.files, {
      // told once above: no file's first bytes read again
      classified: reading ? reclassify(o.classified, reading.of) : o.classified,
      ...(o.readers ? { runDump: o.readers.run, readers: o.readers.size } : {}),
      memoryBudget: o.memoryBudget,
      inflate: o.inflate,
      signal,
      onProcess: partial.onProcess,
      onDump: provisionalPoster(signal, () => lastProgress, o.post),
      onProgress: (pr) => {
        lastProgress = {
          phase: pr.phase,
          filesDone: pr.filesDone,
          filesTotal: pr.filesTotal,
          bytesDone: pr.bytesDone,
          bytesTotal: pr.bytesTotal,
          file: pr.file,
        };
        if (pr.filesDone === pr.filesTotal && pr.filesTotal > 0) o.onAllRead?.();
        if (progressDue(pr.filesDone === pr.filesTotal)) o.post(lastProgress);
      },
    });
    partial.stop();
    if (signal.aborted) throw abortError();
    o.onAllRead?.();
    try {
      // one post a process was a thousand at 1,000 processes, each re-laying out the page's progress line
      const symbolDue = progressThrottle(PROGRESS_INTERVAL_MS);
      await o.symbolize(j, signal, (p) => {
        if (symbolDue(false)) o.post(p);
      });
    } catch (e) {
      if (signal.aborted) throw e;
      j.warnings.push({
        file: '',
        message: `symbolization unavailable: ${e instanceof Error ? e.message : String(e)}; frames show module+offset`,
      });
    }
    const summary = session.finishLoad(j, {
      loadMs: performance.now() - t0,
      bytesTotal,
      waitMs: o.waitedMs?.() ?? 0,
      readers: o.readers?.size ?? 0,
    });
    return { summary, delta: partial.delta(summary, j.processes) };
  } catch (e) {
    session.abandonLoad();
    throw e;
  } finally {
    partial?.stop();
  }
}

/**
 * Whether a progress post is due: the first at once, then one per `intervalMs` at most; a `last` one (every file
 * read) always.
 */
export function progressThrottle(
  intervalMs: number,
  now: () => number = () => performance.now(),
): (last: boolean) => boolean {
  let lastPost = -Infinity;
  return (last) => {
    const t = now();
    if (!last && t - lastPost < intervalMs) return false;
    lastPost = t;
    return true;
  };
}

/** A cancelled load's error, named as every transport reports cancellation (`AbortError`). */
export function abortError(): Error {
  const e = new Error('cancelled');
  e.name = 'AbortError';
  return e;
}

/**
 * The job process by process while it loads (loadJob's onProcess): the first complete process at once, then at
 * most one update per PARTIAL_INTERVAL_MS (the last one waits on a timer). Each update makes the processes read
 * so far the session's job (QuerySession.showPartial), so the window's queries (suspects, growth, flame graphs)
 * answer on them, and posts its summary with the other processes from their dump heads, as what changed since the
 * last update (job-so-far.ts).
 */
function partialPoster(
  session: QuerySession,
  signal: AbortSignal,
  preview: () => JobPreview | null,
  progress: () => LoadProgress,
  post: (p: LoadProgress) => void,
): {
  onProcess: (processes: readonly ProcessSeries[], warnings: readonly LoadWarning[]) => void;
  stop: () => void;
  /** the next delta: after stop(), the full job's */
  delta: (summary: JobSummary, processes: readonly ProcessSeries[]) => JobSoFarDelta;
} {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = -Infinity;
  let filesAtLast = -Infinity;
  let latest: { processes: readonly ProcessSeries[]; warnings: readonly LoadWarning[] } | null = null;
  let stopped = false;
  let ranked = 0;
  let askedBefore = session.partialWorkMs;
  // each update's own cost spaces the next (PARTIAL_SHARE × it): the job so far is summarized on the thread that
  // merges the dumps, and at 1,000 processes one update took seconds, which held the load back
  let gap = PARTIAL_INTERVAL_MS;
  // what changed since the last update, not the whole job so far (the window's longest task was its decoding)
  const delta = jobSoFarDeltas();
  const send = (): void => {
    timer = null;
    if (stopped || !latest || signal.aborted) return;
    const { processes, warnings } = latest;
    latest = null;
    filesAtLast = progress().filesDone;
    const t = performance.now();
    const partial = session.showPartial(processes, warnings, preview(), progress().bytesTotal);
    post({ ...progress(), partialDelta: delta(partial, processes) });
    last = performance.now();
    // the window's questions on the previous update (suspects, growth, flame graphs) ran on this thread too
    const asked = session.partialWorkMs - askedBefore;
    askedBefore = session.partialWorkMs;
    gap = Math.max(PARTIAL_INTERVAL_MS, PARTIAL_SHARE * (last - t + asked));
  };
  return {
    onProcess(processes, warnings) {
      // each process read whole is classified now, whether or not the window asks: the merging thread mostly waits
      // for the readers, and the job's ranking at the load's end is then only the merge across processes
      if (!signal.aborted) for (let i = ranked; i < processes.length; i++) session.rankAhead(processes[i]);
      ranked = processes.length;
      latest = { processes, warnings };
      // not yet: the next process that comes after enough of the job is read sends it (the load's end sends all)
      const { filesDone, filesTotal } = progress();
      if (filesDone - filesAtLast < filesTotal / PARTIAL_UPDATES) return;
      const wait = last + gap - performance.now();
      if (wait <= 0) send();
      else timer ??= setTimeout(send, wait);
    },
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
    delta,
  };
}

/** loadJob's onDump: the ranking of the dumps read so far, posted while no process is read whole. */
function provisionalPoster(
  signal: AbortSignal,
  progress: () => LoadProgress,
  post: (p: LoadProgress) => void,
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
    post({ ...pr, provisional });
  };
}
