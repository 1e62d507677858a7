// Menu commands (Electron menu, app/host-api.ts) and keyboard shortcuts. Tab keys come from views/tabs.ts.

import type { MenuCommand } from '../../../app/host-api.ts';
import { TAB_LIST } from '../views/tabs.ts';
import { exportFormat, exportJson, exportPng } from './exports.ts';
import type { Ui } from './ui.svelte.ts';

export function runCommand(ui: Ui, c: MenuCommand): void {
  const app = ui.app;
  switch (c) {
    case 'open-files':
      void ui.dialog('files');
      break;
    case 'open-folder':
      void ui.dialog('folder');
      break;
    case 'open-sample':
      void ui.openSample();
      break;
    case 'export-json':
      void exportJson(ui);
      break;
    case 'export-png':
      void exportPng(ui);
      break;
    case 'close-job':
      app.job.close();
      break;
    case 'toggle-theme':
      app.toggleTheme();
      break;
    case 'find':
      ui.searchInput?.focus();
      break;
    case 'view-processes':
      (document.querySelector('[data-testid=processes]') as HTMLElement | null)?.focus();
      break;
    case 'view-timeline':
      (document.querySelector('[data-testid=timeline] svg') as HTMLElement | null)?.focus();
      break;
    case 'view-growth':
      app.selection.tab = 'growth';
      break;
    case 'view-flame':
      app.selection.tab = 'flame';
      break;
    case 'view-diff':
      app.selection.tab = 'diff';
      break;
    case 'zoom-reset':
      ui.resetZoom();
      break;
    case 'save-session':
      void app.session.save(false);
      break;
    case 'save-session-as':
      void app.session.save(true);
      break;
    case 'open-session':
      void ui.openSessionDialog();
      break;
    case 'export-report':
      if (app.job.summary && !app.job.readOnly && !app.job.partial) ui.showExport = true;
      break;
    case 'export-pprof':
      void exportFormat(ui, 'pprof');
      break;
    case 'export-folded':
      void exportFormat(ui, 'folded');
      break;
    case 'export-speedscope':
      void exportFormat(ui, 'speedscope');
      break;
    case 'notes':
      (document.querySelector('[data-testid=notes-panel]') as HTMLElement | null)?.scrollIntoView();
      break;
  }
}

/** True when keys typed go to a text field (shortcuts must not fire). */
export function isTyping(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return (
    !!el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable)
  );
}

export function handleKey(ui: Ui, ev: KeyboardEvent): void {
  const app = ui.app;
  // a dialog (note editor, export) is open: its own keys only
  if (app.notes.editing || ui.showExport) {
    if (ev.key === 'Escape') {
      app.notes.editing = null;
      ui.showExport = false;
    }
    return;
  }
  if (isTyping(ev.target)) {
    if (ev.key === 'Escape') (ev.target as HTMLElement).blur();
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) {
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 's' && app.host.kind === 'browser') {
      ev.preventDefault();
      void app.session.save(ev.shiftKey);
      return;
    }
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'o' && app.host.kind === 'browser') {
      ev.preventDefault();
      void ui.dialog(ev.shiftKey ? 'folder' : 'files');
    }
    return;
  }
  const n = app.selection.focused?.snapshots.length ?? 0;
  const keys: Record<string, () => void> = {
    // the search box of the flame tabs, else the tab's own filter (growth)
    '/': () =>
      (ui.searchInput ?? (document.querySelector('.tabbody input[type=search]') as HTMLInputElement | null))?.focus(),
    t: () => app.toggleTheme(),
    a: () => (app.selection.hideAllocator = !app.selection.hideAllocator),
    m: () =>
      (app.selection.mode =
        app.selection.mode === 'python-first'
          ? 'merged'
          : app.selection.mode === 'merged'
            ? 'python'
            : app.selection.mode === 'python'
              ? 'native'
              : 'python-first'),
    '[': () => (app.selection.snapshot = Math.max(0, app.selection.snapshot - 1)),
    ']': () => (app.selection.snapshot = Math.min(n - 1, app.selection.snapshot + 1)),
    b: () => {
      if (!app.job.readOnly) app.selection.base = app.selection.snapshot;
    },
    n: () => {
      if (!app.job.readOnly) app.selection.target = app.selection.snapshot;
    },
    '?': () => (ui.showKeys = !ui.showKeys),
  };
  for (const t of TAB_LIST) keys[t.key] = () => (app.selection.tab = t.id);
  const fn = keys[ev.key];
  if (fn && app.job.summary) {
    ev.preventDefault();
    fn();
  }
}
