// The window: its state (`app`, state/app.svelte.ts: job, selection, session, notes), the open dialogs, opening
// files, and the flame graphs' zoom reset. One instance per window, given to every view by context
// (lib/context.ts), so a view file needs no props from App.svelte.

import type { Session } from '../../../core/notes/schema.ts';
import { AppState } from '../state/app.svelte.ts';
import type { Host } from './host.ts';
import type { SourceFile } from './protocol.ts';

export class Ui {
  readonly app: AppState;
  showExport = $state(false);
  showKeys = $state(false);
  /** the last autosaved session, offered on the open screen */
  autosaved = $state.raw<Session | null>(null);
  /** the filter/search box of the tab bar (focused by `/` and the Find menu) */
  searchInput = $state<HTMLInputElement | undefined>();
  sessionInput = $state<HTMLInputElement | undefined>();
  private zoomResets = new Set<() => void>();

  constructor(host: Host) {
    this.app = new AppState(host);
  }

  // -- flame graphs register their zoom reset (menu "Reset zoom") --------------------------------
  onZoomReset(fn: () => void): () => void {
    this.zoomResets.add(fn);
    return () => this.zoomResets.delete(fn);
  }
  resetZoom(): void {
    for (const f of this.zoomResets) f();
  }

  // -- opening ----------------------------------------------------------------------------------
  openFiles(files: SourceFile[]): void {
    void this.app.job.openAny(files);
  }

  async openSample(): Promise<void> {
    try {
      // fixtures/oom-job (vite.config.ts): opens on the process that holds the leak, as a user's job would
      void this.app.job.load(await this.app.host.sampleFiles());
    } catch (e) {
      this.app.error = e instanceof Error ? e.message : String(e);
    }
  }

  async dialog(kind: 'files' | 'folder'): Promise<void> {
    const native = this.app.host.openDialog(kind);
    if (native) {
      const f = await native;
      if (f) this.openFiles(f);
    } else {
      this.app.job.close();
      await Promise.resolve();
      (
        document.querySelector(
          kind === 'files' ? '[data-testid=file-input]' : '[data-testid=folder-input]',
        ) as HTMLInputElement | null
      )?.click();
    }
  }

  async openSessionDialog(): Promise<void> {
    const native = this.app.host.openDialog('files');
    if (native) {
      const f = await native;
      if (f) this.openFiles(f);
    } else this.sessionInput?.click();
  }
}
