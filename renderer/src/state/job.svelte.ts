// The job's load lifecycle: opening anything (dumps, a dataset, a session, a report), loading with progress and
// cancel, the job shown process by process while it loads (`partial`), and closing. A load that showed its first
// processes and is then cancelled or fails puts back what was open before, by one rule (core/query/rollback.ts
// Rollback) on both sides of the worker channel: the worker's QuerySession puts back the job, its summary and
// caches; here `beforePartial` puts back the view state (summary, suspects, selection, notes).

import { untrack } from 'svelte';
import { CancelledError } from '../lib/worker-client.ts';
import type {
  JobSummary,
  JobPreview,
  LoadEnd,
  LoadProgress,
  ProcessSummary,
  ProvisionalRanking,
  SourceFile,
  SuspectsResult,
} from '../lib/protocol.ts';
import type { Note, Session } from '../../../core/notes/schema.ts';
import { MAX_SESSION_BYTES, parseSession, SessionVersionError } from '../../../core/notes/validate.ts';
import { classifyOpened, missingFiles } from '../lib/session-map.ts';
import {
  datasetDir,
  datasetDirs,
  datasetManifest,
  datasetNeedsDesktop,
  datasetsNeedEngine,
  enginePaths,
} from '../lib/dataset-open.ts';
import type { JobBatch } from '../../../core/model/job-batches.ts';
import type { JobFacts, Shell } from './shell.svelte.ts';
import type { Selection } from './selection.svelte.ts';
import type { Notes } from './notes.svelte.ts';
import type { Sessions } from './session.svelte.ts';
import { openingProcess } from './opening.ts';
import { Rollback } from '../../../core/query/rollback.ts';
import { applyJobSoFar } from '../../../core/engine/job-so-far.ts';
import { parseLimit } from '../../../core/stats/postmortem.ts';
import { jobPage, type JobPage } from '../lib/job-page.ts';
import { BANDS_ABOVE } from '../../../core/query/group-bands.ts';

export class Job implements JobFacts {
  summary = $state.raw<JobSummary | null>(null);
  /**
   * which job the worker has: changes when another job is loaded (or the first part of one), not on each update
   * of a job that is loading. Effects that ask the worker about the job follow this (`hasJob`), not `summary`.
   */
  jobEpoch = $state(0);
  /** the summary is the job so far of a load in progress: its processes read so far, the others `pending` */
  partial = $state(false);
  loading = $state<{ id: number; progress: LoadProgress | null; files: number } | null>(null);
  /** when the load in progress started (performance.now()): with its progress, how long it has left */
  private loadStartedAt = 0;
  /** while loading: every process's timeline from the dump heads (shown until the full job is in) */
  preview = $state.raw<JobPreview | null>(null);
  /** the job-wide ranking (Suspects view, process table badges) */
  suspects = $state.raw<SuspectsResult | null>(null);
  /**
   * while loading: how many processes (read whole, the first of the job so far) the ranking shown was made of; it is
   * asked again only as the job grows enough (lib/ranking-pace.ts), so it may be of fewer than are shown. Null: of
   * the whole job.
   */
  rankedRead = $state<number | null>(null);
  /**
   * while loading, until the job so far has its own ranking: the worker's ranking of the dumps read before the
   * first process was read whole (core/query/provisional.ts), shown as provisional
   */
  provisional = $state.raw<ProvisionalRanking | null>(null);
  /**
   * a finished job of many processes (above BANDS_ABOVE): its processes grouped, their fates and the processes that
   * matter (lib/job-page.ts), for the process list and the timeline's bands alike (each made its own: 9 ms sampled
   * for the two on each summary or ranking at 1,000 processes)
   */
  readonly page: JobPage | null = $derived(
    this.summary && !this.partial && this.summary.processes.length > BANDS_ABOVE
      ? jobPage(this.summary, this.suspects ?? null)
      : null,
  );
  /** the files of the loaded job, as the session names them (paths in Electron, relative names in the browser) */
  openedPaths = $state.raw<string[]>([]);
  /** the loaded job is a report's (read-only: base/target fixed, no notes written, nothing saved) */
  fromReport = $state(false);
  /** select the job's top suspect once the growth ranking arrives (a report opens on it) */
  focusTopSuspect = false;
  /**
   * the job opened on a process of its own choosing: move to suspect #1's once the full ranking is in (state: the
   * process views wait for that choice, lib/effects.svelte.ts)
   */
  autoOpen = $state(false);
  /** what was open before a load showed its first processes: back in place if it is cancelled or fails */
  private readonly beforePartial = new Rollback<{
    summary: JobSummary | null;
    suspects: SuspectsResult | null;
    selected: number[];
    base: number;
    target: number;
    snapshot: number;
    fromReport: boolean;
    notes: Note[];
  }>();
  /** cancel pressed while files were still being handed to the worker */
  private cancelPending = false;
  /**
   * the `seq` of the job so far shown (core/engine/job-so-far.ts): a delta applies only to the one before it; 'whole':
   * it came whole (a Node engine's load joined under way), and the engine's next delta follows it; null: none, or
   * one did not apply (the rest of the load's deltas then apply to nothing, and its end is asked whole)
   */
  private soFarSeq: number | 'whole' | null = null;
  /** a memory limit the user typed (its text; '' = the limit the evidence gives), and why it was refused */
  limitText = $state('');
  /** what a typed limit bounds: the job's sum (a cgroup's memory.max), or each process alone */
  limitScope = $state<'job' | 'process'>('job');
  limitError = $state<string | null>(null);

  constructor(
    private readonly shell: Shell,
    private readonly sel: Selection,
    private readonly notes: Notes,
    private readonly sessions: Sessions,
  ) {}

  /** For effects that ask the worker about the job: a job is loaded; re-runs when another one is (`jobEpoch`). */
  get hasJob(): boolean {
    void this.jobEpoch;
    return untrack(() => this.summary !== null && this.summary.processes.length > 0);
  }

  /**
   * A finished job shows the process it opened on only until the ranking names suspect #1's: the focused process's
   * views wait for that choice (on the deep-stack job the first process's stack series and growth table took ~0.5 s
   * of the worker, ahead of the views then shown). Not when the user has picked a process meanwhile.
   */
  get openingPending(): boolean {
    return this.autoOpen && !this.partial && this.sel.opened !== null;
  }

  get readOnly(): boolean {
    return this.fromReport;
  }

  /**
   * A limit typed in the app (8G, 7.5GB, 8589934592, "max"; core/stats/postmortem.ts parseLimit) and what it
   * bounds (the job's sum, or each process): the worker projects the time to it again. Empty text goes back to
   * the limit the evidence gives.
   */
  async setLimit(text: string, scope: 'job' | 'process' = this.limitScope): Promise<void> {
    const t = text.trim();
    let limit: { bytes: number | null; source: string; scope: 'job' | 'process' } | null = null;
    this.limitScope = scope;
    if (t !== '') {
      const r = parseLimit(t);
      if (!r.ok) {
        this.limitError = r.message;
        return;
      }
      limit = { bytes: r.bytes, source: 'typed in the app', scope };
    }
    this.limitError = null;
    this.limitText = t;
    if (!this.summary) return;
    const { postmortem } = await this.shell.client.request({ type: 'postmortem', limit });
    if (this.summary) this.summary = { ...this.summary, postmortem, verdict: postmortem?.verdict ?? null };
  }

  /** Loads files; focuses the process whose prefix is `preferPrefix` if any, else the one that grew most. */
  async load(files: SourceFile[], preferPrefix?: string, session: Session | null = null): Promise<void> {
    const { client, host } = this.shell;
    if (files.length === 0) {
      this.shell.error = 'No files were given.';
      return;
    }
    if (this.loading && this.loading.id >= 0) client.cancel(this.loading.id);
    performance.mark('heaplens:load-start');
    this.loadStartedAt = performance.now();
    this.shell.error = null;
    // the worker forgets a typed limit with the job it was typed for
    this.limitText = '';
    this.limitError = null;
    this.cancelPending = false;
    this.loading = { id: -1, progress: null, files: files.length };
    this.preview = null;
    this.provisional = null;
    const staging = (n: number): void => {
      if (this.loading && this.loading.id === -1)
        this.loading = {
          ...this.loading,
          progress: {
            phase: 'handing files to the worker',
            filesDone: n,
            filesTotal: files.length,
            bytesDone: 0,
            bytesTotal: 0,
            file: '',
          },
        };
    };
    let symbolFiles: SourceFile[] = [];
    try {
      symbolFiles = await host.symbolFiles();
    } catch {
      symbolFiles = [];
    }
    let loadId = -2;
    const onProgress = (p: LoadProgress): void => this.onProgress(loadId, p);
    // a Node engine (the desktop app's) opens the paths itself (dataset folders whole); the page's engine is handed
    // the files
    const paths = host.engine === 'node' ? enginePaths(files) : null;
    const { id, done } = paths
      ? client.start({ type: 'openPaths', paths, symbolDirs: (await host.symbolPaths?.list()) ?? [] }, onProgress)
      : await client.startLoad(files, symbolFiles, onProgress, staging);
    loadId = id;
    performance.mark('heaplens:load-posted');
    await this.finishLoad(
      id,
      done,
      paths ?? files.map((f) => f.hostPath ?? f.path),
      files.length,
      preferPrefix,
      session,
    );
  }

  /** A load's progress as it comes (load id `id`): the preview, the job so far, the provisional ranking. */
  private onProgress(id: number, p: LoadProgress): void {
    if (!this.loading || this.loading.id !== id) return;
    if (p.preview) {
      this.preview = p.preview;
      performance.mark('heaplens:preview');
    }
    if (p.partial) {
      this.showPartial(p.partial);
      this.soFarSeq = 'whole';
    }
    const d = p.partialDelta;
    if (d) {
      // what changed since the last update, put together with the job so far shown (a first update: with nothing)
      const s = this.follows(d.seq) ? applyJobSoFar(this.partial ? this.summary : null, d) : null;
      if (s) this.showPartial(s);
      this.soFarSeq = s ? d.seq : null;
    }
    if (p.provisional) this.provisional = p.provisional;
    this.loading = {
      ...this.loading,
      progress:
        p.preview || p.partial || p.partialDelta || p.provisional
          ? { ...p, preview: undefined, partial: undefined, partialDelta: undefined, provisional: undefined }
          : p,
    };
  }

  /**
   * The job a Node engine was started on (`heaplens open <paths…>`): it reads the dumps itself, so the page only
   * asks for the job and receives its progress (timelines from the dump heads, the job process by process) and
   * answers, never the dumps.
   */
  async openServed(paths: readonly string[]): Promise<void> {
    const client = this.shell.client;
    performance.mark('heaplens:load-start');
    this.loadStartedAt = performance.now();
    this.shell.error = null;
    this.preview = null;
    this.provisional = null;
    let loadId = -2;
    const { id, done } = client.start({ type: 'open' }, (p) => this.onProgress(loadId, p));
    loadId = id;
    this.loading = { id, progress: null, files: paths.length };
    performance.mark('heaplens:load-posted');
    await this.finishLoad(id, done, [...paths], paths.length, undefined, null);
  }

  /**
   * A dataset folder (heaplens ingest): the desktop app's main process reads it and hands the job over in
   * batches; a host that cannot (the web page) says to use the desktop app or the command line.
   */
  async loadDataset(manifest: SourceFile): Promise<void> {
    const { client, host } = this.shell;
    const dir = datasetDir(manifest);
    const ds = host.dataset;
    if (!ds || !dir) {
      this.shell.error = datasetNeedsDesktop(manifest);
      return;
    }
    if (this.loading && this.loading.id >= 0) client.cancel(this.loading.id);
    this.shell.error = null;
    this.cancelPending = false;
    const progress = (batches: number) => ({
      phase: `reading the dataset (${batches} batches)`,
      filesDone: 0,
      filesTotal: 1,
      bytesDone: 0,
      bytesTotal: 0,
      file: dir,
    });
    this.loading = { id: -1, progress: progress(0), files: 1 };
    try {
      const handle = await ds.open(dir);
      let n = 0;
      for (let b = await ds.next(handle); b !== null; b = await ds.next(handle)) {
        client.sendJobBatch(b as JobBatch);
        this.loading = { id: -1, progress: progress(++n), files: 1 };
      }
    } catch (e) {
      this.loading = null;
      this.shell.error = `Could not open the dataset ${dir}: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    const { id, done } = client.start({ type: 'loadBatches' });
    await this.finishLoad(id, done, [dir], 1, undefined, null);
  }

  /** The job so far of the load in progress (processes read so far, the others pending), as it comes in. */
  /**
   * The loading job's time left, in ms, at the pace of its bytes read so far; null when there is no load or no
   * pace yet. An estimate (the last process's merge and the ranking come after the bytes).
   */
  loadLeftMs(now: number = performance.now()): number | null {
    const p = this.loading?.progress;
    if (!p || !(p.bytesDone > 0) || !(p.bytesTotal > 0)) return null;
    return ((now - this.loadStartedAt) * Math.max(0, p.bytesTotal - p.bytesDone)) / p.bytesDone;
  }

  private showPartial(s: JobSummary): void {
    const sel = this.sel;
    if (this.partial) {
      this.summary = s;
      return;
    }
    performance.mark('heaplens:partial');
    this.beforePartial.replace(() => ({
      summary: this.summary,
      suspects: this.suspects,
      selected: sel.selected,
      base: sel.base,
      target: sel.target,
      snapshot: sel.snapshot,
      fromReport: this.fromReport,
      notes: this.notes.list,
    }));
    this.partial = true;
    // the preview is shown only until the job so far is (App.svelte): its processes are now the summary's pending
    // ones, so it is not kept beside them for the rest of the load
    this.preview = null;
    sel.pickedByHand = false;
    this.fromReport = false;
    this.summary = s;
    this.jobEpoch++;
    this.suspects = null;
    sel.dropProcessViews();
    this.notes.list = [];
    const read = s.processes.filter((p) => !p.pending);
    sel.selected = read.length > 0 ? [bestProcess(read, undefined)] : [];
    sel.resetBaseTarget();
  }

  /**
   * The full job's summary at a load's end: whole, or put together from the job so far shown and what changed
   * since (a Node engine's: job-so-far.ts), else asked whole (a job so far this page did not get)
   */
  private async loadedSummary(end: LoadEnd): Promise<JobSummary> {
    if (end.summary) return end.summary;
    const s = this.follows(end.delta.seq) ? applyJobSoFar(this.partial ? this.summary : null, end.delta) : null;
    return s ?? (await this.shell.client.request({ type: 'summary' })).summary;
  }

  /** Whether the load's delta `seq` applies to the job so far shown: a load's first, or the one after it. */
  private follows(seq: number): boolean {
    return seq === 0 || this.soFarSeq === 'whole' || this.soFarSeq === seq - 1;
  }

  /** A load that showed its first processes was cancelled or failed: what was open before comes back. */
  private undoPartial(): void {
    this.beforePartial.undo((b) => {
      if (!this.partial) return;
      const sel = this.sel;
      this.partial = false;
      this.summary = b.summary;
      this.jobEpoch++;
      this.suspects = b.suspects;
      sel.selected = b.selected;
      sel.base = b.base;
      sel.target = b.target;
      sel.snapshot = b.snapshot;
      this.fromReport = b.fromReport;
      this.notes.list = b.notes;
      sel.dropProcessViews();
    });
  }

  private async finishLoad(
    id: number,
    done: Promise<LoadEnd>,
    opened: string[],
    fileCount: number,
    preferPrefix: string | undefined,
    session: Session | null,
  ): Promise<void> {
    const sel = this.sel;
    this.loading = { id, progress: null, files: fileCount };
    if (this.cancelPending) {
      this.cancelPending = false;
      this.shell.client.cancel(id);
    }
    try {
      const res = { summary: await this.loadedSummary(await done) };
      // shown process by process while it loaded: what the user picked meanwhile stays (the indices of the
      // processes read then are the same in the full job), and the views keep their data until the new arrives
      const kept = this.partial && sel.pickedByHand;
      const wasPartial = this.partial;
      this.partial = false;
      this.beforePartial.commit();
      this.fromReport = false;
      this.summary = res.summary;
      this.jobEpoch++;
      this.openedPaths = opened;
      // a new job without a session: autosaves go to the autosave file, not to a session file opened before
      if (!(session ?? this.sessions.pending)) this.shell.host.session.reset();
      if (!wasPartial) sel.dropProcessViews();
      const procs = res.summary.processes;
      if (procs.length === 0) this.shell.error = 'No heap dumps were found in what you opened.';
      this.autoOpen = false;
      if (!kept || sel.selected.some((i) => i >= procs.length)) {
        // until the ranking is in, the process that grew the most; then suspect #1's (lib/effects.svelte.ts)
        const o = openingProcess(procs, null);
        if (procs.length === 0 || !o) sel.selected = [];
        else if (preferPrefix) sel.focus(bestProcess(procs, preferPrefix), false);
        else {
          sel.openOn(o);
          this.autoOpen = true;
        }
        sel.resetBaseTarget();
      }
      const s = session ?? this.sessions.pending;
      // a session's process is the user's choice
      // what the profiles ask to be shown first (pprof's default_sample_type), unless a session says
      sel.sample = res.summary.defaultSample ?? 'inuse_space';
      if (s) {
        this.autoOpen = false;
        this.sessions.apply(s);
      } else {
        this.notes.list = [];
        this.sessions.current = null;
      }
      performance.mark('heaplens:load-done');
    } catch (e) {
      this.undoPartial();
      if (!(e instanceof CancelledError)) this.shell.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (this.loading?.id === id) {
        this.loading = null;
        this.preview = null;
        this.provisional = null;
        this.soFarSeq = null;
      }
    }
  }

  cancelLoad(): void {
    if (!this.loading) return;
    if (this.loading.id >= 0) this.shell.client.cancel(this.loading.id);
    else this.cancelPending = true;
  }

  close(): void {
    void this.shell.client.request({ type: 'close' });
    this.forget();
  }

  /** The window's side of closing the job (the engine's is its 'close'; a Node engine that went away has none). */
  forget(): void {
    this.loading = null;
    this.preview = null;
    this.provisional = null;
    this.partial = false;
    this.jobEpoch++;
    this.fromReport = false;
    this.notes.list = [];
    this.notes.noteStacks = new Map();
    this.sessions.current = null;
    this.openedPaths = [];
    this.summary = null;
    this.limitText = '';
    this.limitError = null;
    this.suspects = null;
    this.sel.selected = [];
    this.sel.dropProcessViews();
  }

  // -- opening anything: dumps, session files, reports -------------------------------------------

  /** Dropped or picked files: a report opens read-only; a session restores its views (after its dumps). */
  async openAny(files: SourceFile[]): Promise<void> {
    const host = this.shell.host;
    const manifest = datasetManifest(files);
    // a Node engine reads a dataset itself (DuckDB in its process), as it reads dumps
    if (manifest && host.engine !== 'node') {
      const dirs = datasetDirs(files);
      if (dirs.length > 1) this.shell.error = datasetsNeedEngine(dirs);
      else await this.loadDataset(manifest);
      return;
    }
    const { sessions, reports, dumps } = classifyOpened(files);
    this.shell.error = null;
    try {
      if (reports.length > 0 && dumps.length === 0 && sessions.length === 0) {
        await this.openReport({ html: await host.readText(reports[0]) });
        return;
      }
      let session: Session | null = null;
      if (sessions.length > 0) {
        session = parseSession(await host.readText(sessions[0], MAX_SESSION_BYTES));
        if (session.readOnly) session = { ...session, readOnly: false, source: null };
        host.session.opened(sessions[0]);
      }
      if (dumps.length > 0) {
        await this.load(dumps, undefined, session);
        if (session) this.sessions.pending = null;
        return;
      }
      if (session) {
        // no dumps with it: the browser cannot reopen paths, so ask for them
        this.sessions.pending = session;
        if (this.summary && !this.fromReport && missingFiles(session, this.openedPaths).length === 0) {
          this.sessions.apply(session);
          this.sessions.pending = null;
        }
      }
    } catch (e) {
      this.shell.error =
        e instanceof SessionVersionError
          ? e.message
          : `Could not open ${files.map((f) => f.path.split('/').pop()).join(', ')}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Electron: reopen the files a pending session names (main asks the user first). */
  async reopenSessionFiles(): Promise<void> {
    const s = this.sessions.pending;
    const open = this.shell.host.session.openPaths;
    if (!s || !open || s.files.length === 0) return;
    try {
      const files = await open(s.files);
      if (files.length > 0) await this.load(files, undefined, s);
    } catch (e) {
      this.shell.error = `Could not reopen the session's files: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** A report (a file's text, or in a report's own page its embedded payload) becomes the job, read-only. */
  async openReport(from: { html: string } | { payload: string }): Promise<void> {
    const sel = this.sel;
    const { session, summary } = await this.shell.client.request({ type: 'reopenReport', ...from });
    this.fromReport = true;
    this.summary = summary;
    this.jobEpoch++;
    this.suspects = null;
    sel.dropProcessViews();
    this.openedPaths = [];
    this.sessions.pending = null;
    const procs = summary.processes;
    let best = 0;
    for (const p of procs)
      if (p.lastLiveBytes - p.firstLiveBytes > procs[best].lastLiveBytes - procs[best].firstLiveBytes) best = p.index;
    sel.selected = procs.length > 0 ? [best] : [];
    sel.resetBaseTarget();
    this.sessions.apply(session);
    // the tab the report was made on, else the job-wide Suspects view
    if (!session.view.tab) sel.tab = 'suspects';
    sel.search = '';
    this.focusTopSuspect = !session.view.selectedStack;
  }
}

/** The process that grew the most (the one named by `preferPrefix`, if any): what a job opens on. */
function bestProcess(procs: readonly ProcessSummary[], preferPrefix: string | undefined): number {
  const preferred = preferPrefix ? procs.find((p) => p.prefix === preferPrefix) : undefined;
  if (preferred) return preferred.index;
  let best = procs[0];
  for (const p of procs) if (p.lastLiveBytes - p.firstLiveBytes > best.lastLiveBytes - best.firstLiveBytes) best = p;
  return best.index;
}
