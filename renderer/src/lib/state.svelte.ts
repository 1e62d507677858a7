// Application state (Svelte 5 runes). Large typed-array results are held with $state.raw (no proxies).

import { untrack } from 'svelte';
import type { Theme } from './colors.ts';
import type { Host } from './host.ts';
import { AnalysisClient, CancelledError } from './worker-client.ts';
import type {
  FlameData,
  FrameInfo,
  GrowthResult,
  JobSummary,
  JobPreview,
  LoadProgress,
  ProcessSummary,
  SourceFile,
  StackMode,
  SampleType,
  StackFilterChip,
  StackSeries,
  SuspectsResult,
  ViewOptions,
} from './protocol.ts';

import type { Note, NoteTarget, Session, StackTarget } from '../../../core/notes/schema.ts';
import { createNote } from '../../../core/notes/notes.ts';
import { jobKey } from '../../../core/notes/job-key.ts';
import {
  MAX_SESSION_BYTES,
  parseSession,
  serializeSession,
  SessionVersionError,
} from '../../../core/notes/validate.ts';
import { classifyOpened, fromSession, missingFiles, toSession, type Tab } from './session-map.ts';
import { datasetDir, datasetManifest, datasetNeedsDesktop } from './dataset-open.ts';
import type { JobBatch } from '../../../core/model/job-batches.ts';

export type { Tab };
export const WRITER = 'heaplens 0.1.0 (app)';

/** What the stack panel shows: a stack from the growth table or a node path from a flame graph. */
export interface PanelContent {
  title: string;
  /** leaf first */
  frames: (FrameInfo & { hidden: boolean; fold?: number })[];
  facts: [string, string][];
  series: number[] | null;
  /** the stack shown (growth row, timeline legend): what a stack note points at */
  stackId?: number;
  /** the function shown (a flame-graph node): what a function note points at */
  fn?: { name: string; module: string | null };
}

export class AppState {
  readonly client: AnalysisClient;
  theme = $state<Theme>('light');
  /** the job-wide Suspects view opens first */
  tab = $state<Tab>('suspects');
  summary = $state.raw<JobSummary | null>(null);
  /**
   * which job the worker has: changes when another job is loaded (or the first part of one), not on each update
   * of a job that is loading. Effects that ask the worker about the job follow this (`hasJob`), not `summary`.
   */
  jobEpoch = $state(0);
  /** the summary is the job so far of a load in progress: its processes read so far, the others `pending` */
  partial = $state(false);
  /** what was open before a load showed its first processes: back in place if it is cancelled or fails */
  private beforePartial: {
    summary: JobSummary | null;
    suspects: SuspectsResult | null;
    selected: number[];
    base: number;
    target: number;
    snapshot: number;
    fromReport: boolean;
    notes: Note[];
  } | null = null;
  /** a process was picked by hand while the job was loading: the full job keeps the choice */
  private pickedWhileLoading = false;
  loading = $state<{ id: number; progress: LoadProgress | null; files: number } | null>(null);
  /** while loading: every process's timeline from the dump heads (shown until the full job is in) */
  preview = $state.raw<JobPreview | null>(null);
  error = $state<string | null>(null);
  /** selected processes (indices); the first is the focused one */
  selected = $state<number[]>([]);
  base = $state(0);
  target = $state(0);
  /** snapshot shown by the single-snapshot flame graph */
  snapshot = $state(0);
  mode = $state<StackMode>('python-first');
  hideAllocator = $state(true);
  /** what values count (pprof's sample types; alloc_* need prof_accum) */
  sample = $state<SampleType>('inuse_space');
  /** focus/ignore/hide/show chips (pprof's slicing) */
  filters = $state<StackFilterChip[]>([]);
  /** python-first: interpreter frames shown instead of their markers */
  unfold = $state(false);
  growth = $state.raw<GrowthResult | null>(null);
  /** the job-wide ranking (Suspects view, process table badges) */
  suspects = $state.raw<SuspectsResult | null>(null);
  series = $state.raw<StackSeries | null>(null);
  flame = $state.raw<FlameData | null>(null);
  diffFlame = $state.raw<FlameData | null>(null);
  panel = $state.raw<PanelContent | null>(null);
  selectedStack = $state<number | null>(null);
  search = $state('');
  busy = $state(0);
  /** cancel pressed while files were still being handed to the worker */
  private cancelPending = false;
  showWarnings = $state(true);
  diffMode = $state<'absolute' | 'share'>('absolute');
  widthBy = $state<'target' | 'delta'>('target');

  // -- notes and sessions
  notes = $state.raw<Note[]>([]);
  /** the files of the loaded job, as the session names them (paths in Electron, relative names in the browser) */
  openedPaths = $state.raw<string[]>([]);
  /** a session waiting for its dumps (opened without them) */
  pendingSession = $state.raw<Session | null>(null);
  /** the session last opened or saved (keeps what the app does not edit, e.g. symbol settings) */
  session = $state.raw<Session | null>(null);
  /** stack notes resolved to stacks of the loaded job: note id → process index and stack id */
  noteStacks = $state.raw<Map<string, { proc: number; stackId: number }>>(new Map());
  /** the loaded job is a report's (read-only: base/target fixed, no notes written, nothing saved) */
  fromReport = $state(false);
  /** select the job's top suspect once the growth ranking arrives (a report opens on it) */
  focusTopSuspect = false;
  /** the note editor: a target being annotated, or a note being edited */
  editing = $state.raw<{ target: NoteTarget; note: Note | null } | null>(null);
  savedAt = $state<string | null>(null);
  status = $state<string | null>(null);

  constructor(readonly host: Host) {
    this.client = new AnalysisClient(host.readChunk, host.spawnWorker());
    const saved = typeof localStorage !== 'undefined' ? localStorage.getItem('heaplens.theme') : null;
    if (saved === 'dark' || saved === 'light') this.theme = saved;
    else if (typeof matchMedia !== 'undefined' && matchMedia('(prefers-color-scheme: dark)').matches)
      this.theme = 'dark';
  }

  get focused(): ProcessSummary | null {
    const s = this.summary;
    const i = this.selected[0];
    return s && i !== undefined ? (s.processes[i] ?? null) : null;
  }

  /** For effects that ask the worker about the job: a job is loaded; re-runs when another one is (`jobEpoch`). */
  get hasJob(): boolean {
    void this.jobEpoch;
    return untrack(() => this.summary !== null && this.summary.processes.length > 0);
  }

  get view(): ViewOptions {
    return {
      mode: this.mode,
      hideAllocator: this.hideAllocator,
      sample: this.sample,
      filters: this.filters.map((f) => ({ ...f })),
      unfold: this.unfold,
    };
  }

  toggleTheme(): void {
    this.theme = this.theme === 'light' ? 'dark' : 'light';
    try {
      localStorage.setItem('heaplens.theme', this.theme);
    } catch {
      /* storage unavailable */
    }
  }

  /** Loads files; focuses the process whose prefix is `preferPrefix` if any, else the one that grew most. */
  async load(files: SourceFile[], preferPrefix?: string, session: Session | null = null): Promise<void> {
    if (files.length === 0) {
      this.error = 'No files were given.';
      return;
    }
    if (this.loading && this.loading.id >= 0) this.client.cancel(this.loading.id);
    performance.mark('heaplens:load-start');
    this.error = null;
    this.cancelPending = false;
    this.loading = { id: -1, progress: null, files: files.length };
    this.preview = null;
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
      symbolFiles = await this.host.symbolFiles();
    } catch {
      symbolFiles = [];
    }
    const { id, done } = await this.client.startLoad(
      files,
      symbolFiles,
      (p) => {
        if (!this.loading || this.loading.id !== id) return;
        if (p.preview) {
          this.preview = p.preview;
          performance.mark('heaplens:preview');
        }
        if (p.partial) this.showPartial(p.partial);
        this.loading = {
          ...this.loading,
          progress: p.preview || p.partial ? { ...p, preview: undefined, partial: undefined } : p,
        };
      },
      staging,
    );
    performance.mark('heaplens:load-posted');
    await this.finishLoad(
      id,
      done,
      files.map((f) => f.hostPath ?? f.path),
      files.length,
      preferPrefix,
      session,
    );
  }

  /**
   * A dataset folder (heaplens ingest): the desktop app's main process reads it and hands the job over in
   * batches; a host that cannot (the web page) says to use the desktop app or the command line.
   */
  async loadDataset(manifest: SourceFile): Promise<void> {
    const dir = datasetDir(manifest);
    const ds = this.host.dataset;
    if (!ds || !dir) {
      this.error = datasetNeedsDesktop(manifest);
      return;
    }
    if (this.loading && this.loading.id >= 0) this.client.cancel(this.loading.id);
    this.error = null;
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
        this.client.sendJobBatch(b as JobBatch);
        this.loading = { id: -1, progress: progress(++n), files: 1 };
      }
    } catch (e) {
      this.loading = null;
      this.error = `Could not open the dataset ${dir}: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    const { id, done } = this.client.start({ type: 'loadBatches' });
    await this.finishLoad(id, done, [dir], 1, undefined, null);
  }

  /** The job so far of the load in progress (processes read so far, the others pending), as it comes in. */
  private showPartial(s: JobSummary): void {
    if (this.partial) {
      this.summary = s;
      return;
    }
    performance.mark('heaplens:partial');
    this.beforePartial = {
      summary: this.summary,
      suspects: this.suspects,
      selected: this.selected,
      base: this.base,
      target: this.target,
      snapshot: this.snapshot,
      fromReport: this.fromReport,
      notes: this.notes,
    };
    this.partial = true;
    this.pickedWhileLoading = false;
    this.fromReport = false;
    this.summary = s;
    this.jobEpoch++;
    this.suspects = null;
    this.dropProcessViews();
    this.notes = [];
    const read = s.processes.filter((p) => !p.pending);
    this.selected = read.length > 0 ? [bestProcess(read, undefined)] : [];
    this.resetBaseTarget();
  }

  /** A load that showed its first processes was cancelled or failed: what was open before comes back. */
  private undoPartial(): void {
    const b = this.beforePartial;
    this.beforePartial = null;
    if (!this.partial || !b) return;
    this.partial = false;
    this.summary = b.summary;
    this.jobEpoch++;
    this.suspects = b.suspects;
    this.selected = b.selected;
    this.base = b.base;
    this.target = b.target;
    this.snapshot = b.snapshot;
    this.fromReport = b.fromReport;
    this.notes = b.notes;
    this.dropProcessViews();
  }

  private async finishLoad(
    id: number,
    done: Promise<{ summary: JobSummary }>,
    opened: string[],
    fileCount: number,
    preferPrefix: string | undefined,
    session: Session | null,
  ): Promise<void> {
    this.loading = { id, progress: null, files: fileCount };
    if (this.cancelPending) {
      this.cancelPending = false;
      this.client.cancel(id);
    }
    try {
      const res = await done;
      // shown process by process while it loaded: what the user picked meanwhile stays (the indices of the
      // processes read then are the same in the full job), and the views keep their data until the new arrives
      const kept = this.partial && this.pickedWhileLoading;
      const wasPartial = this.partial;
      this.partial = false;
      this.beforePartial = null;
      this.fromReport = false;
      this.summary = res.summary;
      this.jobEpoch++;
      this.openedPaths = opened;
      // a new job without a session: autosaves go to the autosave file, not to a session file opened before
      if (!(session ?? this.pendingSession)) this.host.session.reset();
      if (!wasPartial) {
        this.growth = null;
        this.flame = null;
        this.diffFlame = null;
        this.panel = null;
        this.selectedStack = null;
      }
      const procs = res.summary.processes;
      if (procs.length === 0) this.error = 'No heap dumps were found in what you opened.';
      if (!kept || this.selected.some((i) => i >= procs.length)) {
        // focus the process that grew the most
        if (procs.length === 0) this.selected = [];
        else {
          this.focus(bestProcess(procs, preferPrefix), false);
          this.resetBaseTarget();
        }
      }
      const s = session ?? this.pendingSession;
      if (s) this.applySession(s);
      else {
        this.notes = [];
        this.session = null;
      }
      performance.mark('heaplens:load-done');
    } catch (e) {
      this.undoPartial();
      if (!(e instanceof CancelledError)) this.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (this.loading?.id === id) {
        this.loading = null;
        this.preview = null;
      }
    }
  }

  cancelLoad(): void {
    if (!this.loading) return;
    if (this.loading.id >= 0) this.client.cancel(this.loading.id);
    else this.cancelPending = true;
  }

  close(): void {
    void this.client.request({ type: 'close' });
    this.jobEpoch++;
    this.fromReport = false;
    this.notes = [];
    this.session = null;
    this.noteStacks = new Map();
    this.openedPaths = [];
    this.summary = null;
    this.selected = [];
    this.growth = null;
    this.suspects = null;
    this.flame = null;
    this.diffFlame = null;
    this.panel = null;
    this.series = null;
  }

  resetBaseTarget(): void {
    const p = this.focused;
    const n = p ? p.snapshots.length : 0;
    // the last complete dump: a cut one would show frees that never happened
    let last = n - 1;
    while (last > 0 && p && !p.snapshots[last].complete) last--;
    this.base = 0;
    this.target = Math.max(0, last);
    this.snapshot = Math.max(0, last);
  }

  focus(index: number, additive: boolean): void {
    // a process still being read has no stacks to show yet
    if (this.summary?.processes[index]?.pending) return;
    if (this.partial) this.pickedWhileLoading = true;
    const before = this.selected[0];
    if (additive) {
      this.selected = this.selected.includes(index)
        ? this.selected.filter((i) => i !== index)
        : [...this.selected, index];
      if (this.selected.length === 0) this.selected = [index];
    } else this.selected = [index];
    if (this.selected[0] === before) return;
    this.dropProcessViews();
    this.resetBaseTarget();
  }

  // -- opening anything: dumps, session files, reports -------------------------------------------

  get readOnly(): boolean {
    return this.fromReport;
  }

  /** Dropped or picked files: a report opens read-only; a session restores its views (after its dumps). */
  async openAny(files: SourceFile[]): Promise<void> {
    const manifest = datasetManifest(files);
    if (manifest) {
      await this.loadDataset(manifest);
      return;
    }
    const { sessions, reports, dumps } = classifyOpened(files);
    this.error = null;
    try {
      if (reports.length > 0 && dumps.length === 0 && sessions.length === 0) {
        await this.openReport({ html: await this.host.readText(reports[0]) });
        return;
      }
      let session: Session | null = null;
      if (sessions.length > 0) {
        session = parseSession(await this.host.readText(sessions[0], MAX_SESSION_BYTES));
        if (session.readOnly) session = { ...session, readOnly: false, source: null };
        this.host.session.opened(sessions[0]);
      }
      if (dumps.length > 0) {
        await this.load(dumps, undefined, session);
        if (session) this.pendingSession = null;
        return;
      }
      if (session) {
        // no dumps with it: the browser cannot reopen paths, so ask for them
        this.pendingSession = session;
        if (this.summary && !this.fromReport && missingFiles(session, this.openedPaths).length === 0) {
          this.applySession(session);
          this.pendingSession = null;
        }
      }
    } catch (e) {
      this.error =
        e instanceof SessionVersionError
          ? e.message
          : `Could not open ${files.map((f) => f.path.split('/').pop()).join(', ')}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Electron: reopen the files a pending session names (main asks the user first). */
  async reopenSessionFiles(): Promise<void> {
    const s = this.pendingSession;
    const open = this.host.session.openPaths;
    if (!s || !open || s.files.length === 0) return;
    try {
      const files = await open(s.files);
      if (files.length > 0) await this.load(files, undefined, s);
    } catch (e) {
      this.error = `Could not reopen the session's files: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Restores a session's selection, view and notes on the loaded job. */
  applySession(s: Session): void {
    const procs = this.summary?.processes ?? [];
    const v = fromSession(s, procs);
    if (v.process !== null && v.process !== this.selected[0]) this.focus(v.process, false);
    if (v.base !== null) this.base = v.base;
    if (v.target !== null) this.target = v.target;
    if (v.snapshot !== null) this.snapshot = v.snapshot;
    this.tab = v.tab;
    this.mode = v.mode;
    this.hideAllocator = v.hideAllocator;
    this.search = v.search;
    this.diffMode = v.diffMode;
    this.widthBy = v.widthBy;
    this.sample = v.sample;
    this.filters = v.filters;
    this.unfold = v.unfold;
    this.notes = s.notes;
    this.session = s;
    this.pendingSession = null;
    if (v.selectedStack) this.pendingSelectedStack = v.selectedStack;
  }

  /** a stack a restored session had selected, resolved once the worker answers */
  pendingSelectedStack: StackTarget | null = null;

  /** Forgets what was shown of the selected process (growth, series, flame graphs, stack panel): it is fetched again. */
  private dropProcessViews(): void {
    this.growth = null;
    this.series = null;
    this.flame = null;
    this.diffFlame = null;
    this.panel = null;
    this.selectedStack = null;
  }

  /** A report (a file's text, or in a report's own page its embedded payload) becomes the job, read-only. */
  async openReport(from: { html: string } | { payload: string }): Promise<void> {
    const { session, summary } = await this.client.request({ type: 'reopenReport', ...from });
    this.fromReport = true;
    this.summary = summary;
    this.jobEpoch++;
    this.suspects = null;
    this.dropProcessViews();
    this.openedPaths = [];
    this.pendingSession = null;
    const procs = summary.processes;
    let best = 0;
    for (const p of procs)
      if (p.lastLiveBytes - p.firstLiveBytes > procs[best].lastLiveBytes - procs[best].firstLiveBytes) best = p.index;
    this.selected = procs.length > 0 ? [best] : [];
    this.resetBaseTarget();
    this.applySession(session);
    // the tab the report was made on, else the job-wide Suspects view
    if (!session.view.tab) this.tab = 'suspects';
    this.search = '';
    this.focusTopSuspect = !session.view.selectedStack;
  }

  /** The app's state as a session (what Save writes). */
  toSession(): Session {
    const p = this.focused;
    let selected: StackTarget | null = null;
    if (this.selectedStack !== null) selected = this.selectedStackTarget;
    return toSession(
      {
        files: this.openedPaths,
        symbolDirs: this.session?.symbols.dirs ?? [],
        process: p,
        base: this.base,
        target: this.target,
        snapshot: this.snapshot,
        tab: this.tab,
        mode: this.mode,
        hideAllocator: this.hideAllocator,
        search: this.search,
        selectedStack: selected,
        diffMode: this.diffMode,
        widthBy: this.widthBy,
        sample: this.sample,
        filters: this.filters,
        unfold: this.unfold,
        notes: this.notes,
        readOnly: this.readOnly,
        source: this.readOnly ? (this.session?.source ?? null) : null,
      },
      WRITER,
      this.session,
    );
  }

  /** the selected stack as a note target (set when a stack is selected; the worker computes it) */
  selectedStackTarget: StackTarget | null = null;

  sessionText(): string {
    return serializeSession(this.toSession());
  }

  suggestedName(): string {
    const p = this.focused;
    return `heaplens-${p?.pid ?? p?.prefix ?? 'job'}.heaplens.json`;
  }

  async saveSession(saveAs = false): Promise<void> {
    if (this.readOnly) {
      this.status = 'This session was opened from a report: it is read-only and is not saved.';
      return;
    }
    if (!this.summary) return;
    if (this.partial) {
      this.status = 'The job is still loading: save the session once every dump is read.';
      return;
    }
    try {
      const where = await this.host.session.save(this.sessionText(), saveAs, this.suggestedName());
      if (where) {
        this.savedAt = new Date().toISOString();
        this.status = `Session saved${this.host.kind === 'electron' ? ` to ${where}` : ` (downloaded ${where})`}.`;
      }
    } catch (e) {
      this.error = `Could not save the session: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  async autosave(): Promise<void> {
    if (this.readOnly || this.partial || !this.summary || this.summary.processes.length === 0) return;
    try {
      await this.host.session.autosave(this.sessionText(), jobKey(this.openedPaths));
      this.savedAt = new Date().toISOString();
    } catch (e) {
      this.status = `Autosave failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** The last autosaved session, if any (offered on the open screen). */
  async lastAutosave(): Promise<Session | null> {
    const t = await this.host.session.readAutosave().catch(() => null);
    if (!t) return null;
    try {
      return parseSession(t);
    } catch {
      return null;
    }
  }

  // -- notes -------------------------------------------------------------------------------------

  startNote(target: NoteTarget): void {
    if (this.readOnly) {
      this.status = 'Read-only: notes cannot be added to a report.';
      return;
    }
    this.editing = { target, note: null };
  }

  editExisting(note: Note): void {
    this.editing = { target: note.target, note };
  }

  commitNote(text: string, color: string): void {
    const e = this.editing;
    this.editing = null;
    if (!e || this.readOnly) return;
    if (e.note) {
      const id = e.note.id;
      const now = new Date().toISOString();
      this.notes = this.notes.map((n) => (n.id === id ? { ...n, text, color, updatedAt: now } : n));
    } else this.notes = [...this.notes, createNote(e.target, text, color)];
  }

  deleteNote(id: string): void {
    if (this.readOnly) return;
    this.notes = this.notes.filter((n) => n.id !== id);
    if (this.editing?.note?.id === id) this.editing = null;
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
