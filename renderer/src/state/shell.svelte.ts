// The window's shared means (the host, the worker client) and its chrome (theme, error, status, busy), with what
// every part of the state reads of the loaded job (`JobFacts`, implemented by job.svelte.ts). The four parts —
// job.svelte.ts (load lifecycle), selection.svelte.ts, session.svelte.ts, notes.svelte.ts — each take the
// shell; app.svelte.ts puts them together. Imports run one way (shell ← selection ← notes ← session ← job ←
// app), so no two state files import each other.

import type { Theme } from '../lib/colors.ts';
import type { Host } from '../lib/host.ts';
import { AnalysisClient } from '../lib/worker-client.ts';
import type { JobSummary } from '../lib/protocol.ts';

/** What the other parts read of the loaded job (job.svelte.ts owns and writes it). */
export interface JobFacts {
  readonly summary: JobSummary | null;
  /** the summary is the job so far of a load in progress */
  readonly partial: boolean;
  /** a report's job: base/target fixed, no notes written, nothing saved */
  readonly readOnly: boolean;
  /** the files of the loaded job, as the session names them */
  readonly openedPaths: readonly string[];
  /** a job is loaded; re-runs effects when another one is */
  readonly hasJob: boolean;
}

export abstract class Shell {
  /** the engine's client; replaced by the in-page engine's when a Node engine goes away */
  client: AnalysisClient;
  /** which engine answers, for the header (engineInfo's label) */
  engineLabel = $state('in this page');
  theme = $state<Theme>('light');
  error = $state<string | null>(null);
  status = $state<string | null>(null);
  busy = $state(0);
  showWarnings = $state(true);
  abstract readonly job: JobFacts;

  constructor(readonly host: Host) {
    this.client = new AnalysisClient(host.readChunk, host.spawnWorker());
    if (host.engine === 'node' && host.inPageWorker) {
      this.engineLabel = host.kind === 'electron' ? "the desktop app's engine (Node)" : 'heaplens open (Node)';
      this.client.onFailure = (message) => this.engineLost(message);
    }
    const saved = typeof localStorage !== 'undefined' ? localStorage.getItem('heaplens.theme') : null;
    if (saved === 'dark' || saved === 'light') this.theme = saved;
    else if (typeof matchMedia !== 'undefined' && matchMedia('(prefers-color-scheme: dark)').matches)
      this.theme = 'dark';
  }

  /**
   * The Node engine went away (`heaplens open` stopped): its job goes with it. The window falls back to the engine
   * in the page, so files dropped or opened from here on are still read, and says what happened.
   */
  private engineLost(message: string): void {
    this.client.terminate();
    this.client = new AnalysisClient(null, this.host.inPageWorker?.() ?? this.host.spawnWorker());
    this.engineLabel = 'in this page';
    this.onEngineLost();
    this.error = `${message}. Its job is closed; drop files here to read them in this page, or run heaplens open again.`;
  }

  /** What the window drops when its engine goes away (the job it held). */
  protected abstract onEngineLost(): void;

  toggleTheme(): void {
    this.theme = this.theme === 'light' ? 'dark' : 'light';
    try {
      localStorage.setItem('heaplens.theme', this.theme);
    } catch {
      /* storage unavailable */
    }
  }
}
