// Application state (Svelte 5 runes). Large typed-array results are held with $state.raw (no proxies).

import type { Theme } from './colors.ts';
import type { Host } from './host.ts';
import { AnalysisClient, CancelledError } from './worker-client.ts';
import type {
  FlameData,
  FrameInfo,
  GrowthResult,
  JobSummary,
  LoadProgress,
  ProcessSummary,
  SourceFile,
  StackMode,
  StackSeries,
  ViewOptions,
} from './protocol.ts';

export type Tab = 'growth' | 'flame' | 'diff';

/** What the stack panel shows: a stack from the growth table or a node path from a flame graph. */
export interface PanelContent {
  title: string;
  /** leaf first */
  frames: (FrameInfo & { hidden: boolean })[];
  facts: [string, string][];
  series: number[] | null;
}

export class AppState {
  readonly client: AnalysisClient;
  theme = $state<Theme>('light');
  tab = $state<Tab>('growth');
  summary = $state.raw<JobSummary | null>(null);
  loading = $state<{ id: number; progress: LoadProgress | null; files: number } | null>(null);
  error = $state<string | null>(null);
  /** selected processes (indices); the first is the focused one */
  selected = $state<number[]>([]);
  base = $state(0);
  target = $state(0);
  /** snapshot shown by the single-snapshot flame graph */
  snapshot = $state(0);
  mode = $state<StackMode>('merged');
  hideAllocator = $state(true);
  growth = $state.raw<GrowthResult | null>(null);
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

  constructor(readonly host: Host) {
    this.client = new AnalysisClient(host.readChunk);
    const saved = typeof localStorage !== 'undefined' ? localStorage.getItem('heaplens.theme') : null;
    if (saved === 'dark' || saved === 'light') this.theme = saved;
    else if (typeof matchMedia !== 'undefined' && matchMedia('(prefers-color-scheme: dark)').matches) this.theme = 'dark';
  }

  get focused(): ProcessSummary | null {
    const s = this.summary;
    const i = this.selected[0];
    return s && i !== undefined ? (s.processes[i] ?? null) : null;
  }

  get view(): ViewOptions {
    return { mode: this.mode, hideAllocator: this.hideAllocator };
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
  async load(files: SourceFile[], preferPrefix?: string): Promise<void> {
    if (files.length === 0) {
      this.error = 'No files were given.';
      return;
    }
    if (this.loading && this.loading.id >= 0) this.client.cancel(this.loading.id);
    performance.mark('heaplens:load-start');
    this.error = null;
    this.cancelPending = false;
    this.loading = { id: -1, progress: null, files: files.length };
    const staging = (n: number): void => {
      if (this.loading && this.loading.id === -1) this.loading = { ...this.loading, progress: { phase: 'handing files to the worker', filesDone: n, filesTotal: files.length, bytesDone: 0, bytesTotal: 0, file: '' } };
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
        if (this.loading && this.loading.id === id) this.loading = { ...this.loading, progress: p };
      },
      staging,
    );
    performance.mark('heaplens:load-posted');
    this.loading = { id, progress: null, files: files.length };
    if (this.cancelPending) {
      this.cancelPending = false;
      this.client.cancel(id);
    }
    try {
      const res = await done;
      this.summary = res.summary;
      this.growth = null;
      this.flame = null;
      this.diffFlame = null;
      this.panel = null;
      this.selectedStack = null;
      const procs = res.summary.processes;
      if (procs.length === 0) this.error = 'No heap dumps were found in what you opened.';
      // focus the process that grew the most
      let best = 0;
      for (const p of procs) if (p.lastLiveBytes - p.firstLiveBytes > procs[best].lastLiveBytes - procs[best].firstLiveBytes) best = p.index;
      const preferred = preferPrefix ? procs.find((p) => p.prefix === preferPrefix) : undefined;
      if (preferred) best = preferred.index;
      this.selected = procs.length > 0 ? [best] : [];
      this.resetBaseTarget();
      performance.mark('heaplens:load-done');
    } catch (e) {
      if (!(e instanceof CancelledError)) this.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (this.loading?.id === id) this.loading = null;
    }
  }

  cancelLoad(): void {
    if (!this.loading) return;
    if (this.loading.id >= 0) this.client.cancel(this.loading.id);
    else this.cancelPending = true;
  }

  close(): void {
    void this.client.request({ type: 'close' });
    this.summary = null;
    this.selected = [];
    this.growth = null;
    this.flame = null;
    this.diffFlame = null;
    this.panel = null;
    this.series = null;
  }

  resetBaseTarget(): void {
    const p = this.focused;
    const n = p ? p.snapshots.length : 0;
    this.base = 0;
    this.target = Math.max(0, n - 1);
    this.snapshot = Math.max(0, n - 1);
  }

  focus(index: number, additive: boolean): void {
    const before = this.selected[0];
    if (additive) {
      this.selected = this.selected.includes(index) ? this.selected.filter((i) => i !== index) : [...this.selected, index];
      if (this.selected.length === 0) this.selected = [index];
    } else this.selected = [index];
    if (this.selected[0] === before) return;
    this.flame = null;
    this.diffFlame = null;
    this.growth = null;
    this.series = null;
    this.panel = null;
    this.selectedStack = null;
    this.resetBaseTarget();
  }
}
