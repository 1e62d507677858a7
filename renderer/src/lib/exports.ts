// Exports from the app: the HTML report, pprof / folded / speedscope of a dump, growth tables as JSON, the
// flame graph as PNG. The worker builds the files; the host saves them.

import type { Session } from '../../../core/notes/schema.ts';
import type { ExportFormat } from './protocol.ts';
import type { Ui } from './ui.svelte.ts';

const exportProcs = (ui: Ui, all: boolean): number[] =>
  all ? (ui.app.job.summary?.processes.map((p) => p.index) ?? []) : [...ui.app.selection.selected];
/** a plain copy for postMessage (no state proxies) */
const plainSession = (ui: Ui): Session => JSON.parse(JSON.stringify(ui.app.session.toSession())) as Session;
/** the report's session: it opens on the ranking (the answer), whatever tab the sender was on */
const reportSession = (ui: Ui): Session => {
  const s = plainSession(ui);
  return { ...s, view: { ...s.view, tab: 'suspects' } };
};

export async function reportPreview(ui: Ui, sanitize: { paths: boolean; maps: boolean }) {
  const app = ui.app;
  const r = await app.client.request({
    type: 'report',
    procs: exportProcs(ui, false),
    base: app.selection.base,
    target: app.selection.target,
    session: plainSession(ui),
    title: '',
    sanitize: { ...sanitize },
    view: { ...app.selection.view },
    previewOnly: true,
  });
  return r.preview;
}

export async function exportReport(
  ui: Ui,
  title: string,
  sanitize: { paths: boolean; maps: boolean },
  all: boolean,
): Promise<void> {
  const app = ui.app;
  try {
    const r = await app.client.request({
      type: 'report',
      procs: exportProcs(ui, all),
      base: app.selection.base,
      target: app.selection.target,
      session: reportSession(ui),
      title,
      sanitize: { ...sanitize },
      view: { ...app.selection.view },
      previewOnly: false,
    });
    if (r.html === null) return;
    await app.host.save(
      `${(title || 'heaplens-report').replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 80)}.html`,
      r.html,
      'text/html',
    );
    app.status = `Report exported (${(r.bytes / 1024).toFixed(0)} KiB).${r.leftOut ? ` Left out: ${r.leftOut}.` : ''}`;
    ui.showExport = false;
  } catch (e) {
    app.error = `Could not build the report: ${e instanceof Error ? e.message : String(e)}`;
  }
}

export async function exportFormat(ui: Ui, format: ExportFormat): Promise<void> {
  const app = ui.app;
  if (ui.app.selection.procIndex < 0) return;
  try {
    const r = await app.client.request({
      type: 'export',
      format,
      procs: [...app.selection.selected],
      // the focused process at the snapshot shown; the others at their last (the CLI's `--snapshot last`)
      snapshot: 'last',
      focus: {
        proc: app.selection.procIndex,
        snapshot: app.selection.tab === 'flame' ? app.selection.snapshot : app.selection.target,
      },
      view: app.selection.view,
    });
    await app.host.save(r.name, r.data, r.mime);
    app.status = `Exported ${r.name}.`;
  } catch (e) {
    app.error = `Could not export: ${e instanceof Error ? e.message : String(e)}`;
  }
}

export async function exportJson(ui: Ui): Promise<void> {
  const app = ui.app;
  const focused = app.selection.focused;
  if (!app.job.summary || !focused || !app.selection.growth) return;
  const doc = {
    process: { pid: focused.pid, key: focused.key },
    base: focused.snapshots[app.selection.base]?.file,
    target: focused.snapshots[app.selection.target]?.file,
    mode: app.selection.mode,
    hideAllocatorFrames: app.selection.hideAllocator,
    stacks: app.selection.growth.stacks.slice(0, 1000),
    functions: app.selection.growth.functions.slice(0, 1000),
    warnings: app.job.summary.warnings,
  };
  await app.host.save(`heaplens-${focused.pid ?? 'job'}-growth.json`, JSON.stringify(doc, null, 2), 'application/json');
}

export async function exportPng(ui: Ui): Promise<void> {
  const canvas = document.querySelector(
    '[data-testid=flame] canvas, [data-testid=diff-flame] canvas',
  ) as HTMLCanvasElement | null;
  if (!canvas) return;
  const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
  if (blob)
    await ui.app.host.save(
      `heaplens-${ui.app.selection.tab}.png`,
      new Uint8Array(await blob.arrayBuffer()),
      'image/png',
    );
}
