// Sessions: the selection, view and notes of a job as a session file (core/notes/schema.ts), saved, autosaved per
// job and restored onto a loaded job. Opening a session file and loading its dumps is the job's
// (job.svelte.ts openAny); the mapping of indices to what survives a reload is lib/session-map.ts.

import type { Session, StackTarget } from '../../../core/notes/schema.ts';
import { jobKey } from '../../../core/notes/job-key.ts';
import { parseSession, serializeSession } from '../../../core/notes/validate.ts';
import { fromSession, toSession } from '../lib/session-map.ts';
import type { Shell } from './shell.svelte.ts';
import type { Selection } from './selection.svelte.ts';
import type { Notes } from './notes.svelte.ts';

export const WRITER = 'heaplens 0.1.0 (app)';

export class Sessions {
  /** a session waiting for its dumps (opened without them) */
  pending = $state.raw<Session | null>(null);
  /** the session last opened or saved (keeps what the app does not edit, e.g. symbol settings) */
  current = $state.raw<Session | null>(null);
  savedAt = $state<string | null>(null);

  constructor(
    private readonly shell: Shell,
    private readonly sel: Selection,
    private readonly notes: Notes,
  ) {}

  /** Restores a session's selection, view and notes on the loaded job. */
  apply(s: Session): void {
    const sel = this.sel;
    const procs = this.shell.job.summary?.processes ?? [];
    const v = fromSession(s, procs);
    if (v.process !== null && v.process !== sel.selected[0]) sel.focus(v.process, false);
    if (v.base !== null) sel.base = v.base;
    if (v.target !== null) sel.target = v.target;
    if (v.snapshot !== null) sel.snapshot = v.snapshot;
    sel.tab = v.tab;
    sel.mode = v.mode;
    sel.hideAllocator = v.hideAllocator;
    sel.search = v.search;
    sel.diffMode = v.diffMode;
    sel.widthBy = v.widthBy;
    sel.sample = v.sample;
    sel.filters = v.filters;
    sel.unfold = v.unfold;
    sel.flameLayout = v.flame;
    this.notes.list = s.notes;
    this.current = s;
    this.pending = null;
    if (v.selectedStack) sel.pendingSelectedStack = v.selectedStack;
  }

  /** The app's state as a session (what Save writes). */
  toSession(): Session {
    const sel = this.sel;
    const readOnly = this.shell.job.readOnly;
    let selected: StackTarget | null = null;
    if (sel.selectedStack !== null) selected = sel.selectedStackTarget;
    return toSession(
      {
        files: [...this.shell.job.openedPaths],
        symbolDirs: this.current?.symbols.dirs ?? [],
        process: sel.focused,
        base: sel.base,
        target: sel.target,
        snapshot: sel.snapshot,
        tab: sel.tab,
        mode: sel.mode,
        hideAllocator: sel.hideAllocator,
        search: sel.search,
        selectedStack: selected,
        diffMode: sel.diffMode,
        widthBy: sel.widthBy,
        sample: sel.sample,
        filters: sel.filters,
        unfold: sel.unfold,
        flame: sel.flameLayout,
        notes: this.notes.list,
        readOnly,
        source: readOnly ? (this.current?.source ?? null) : null,
      },
      WRITER,
      this.current,
    );
  }

  text(): string {
    return serializeSession(this.toSession());
  }

  suggestedName(): string {
    const p = this.sel.focused;
    return `heaplens-${p?.pid ?? p?.prefix ?? 'job'}.heaplens.json`;
  }

  async save(saveAs = false): Promise<void> {
    const { host, job } = this.shell;
    if (job.readOnly) {
      this.shell.status = 'This session was opened from a report: it is read-only and is not saved.';
      return;
    }
    if (!job.summary) return;
    if (job.partial) {
      this.shell.status = 'The job is still loading: save the session once every dump is read.';
      return;
    }
    try {
      const where = await host.session.save(this.text(), saveAs, this.suggestedName());
      if (where) {
        this.savedAt = new Date().toISOString();
        this.shell.status = `Session saved${host.kind === 'electron' ? ` to ${where}` : ` (downloaded ${where})`}.`;
      }
    } catch (e) {
      this.shell.error = `Could not save the session: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  async autosave(): Promise<void> {
    const job = this.shell.job;
    if (job.readOnly || job.partial || !job.summary || job.summary.processes.length === 0) return;
    try {
      await this.shell.host.session.autosave(this.text(), jobKey(job.openedPaths));
      this.savedAt = new Date().toISOString();
    } catch (e) {
      this.shell.status = `Autosave failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** The last autosaved session, if any (offered on the open screen). */
  async lastAutosave(): Promise<Session | null> {
    const t = await this.shell.host.session.readAutosave().catch(() => null);
    if (!t) return null;
    try {
      return parseSession(t);
    } catch {
      return null;
    }
  }
}
