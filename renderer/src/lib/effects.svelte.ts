// The window-wide reactions: theme, the data every view shares (growth ranking, timeline stacks), stack notes
// resolved to the loaded stacks, and autosave. Called once from App.svelte's setup (effects need a component).
// A view's own data (a flame graph, …) is requested by the view itself.

import { untrack } from 'svelte';
import type { StackTarget } from '../../../session/schema.ts';
import { debounce } from './session-map.ts';
import { reportGrowth, reportSeries, resolveReportStack } from './report-view.ts';
import type { Ui } from './ui.svelte.ts';

/** Sets up the effects; returns the autosaver (flushed on pagehide, cancelled on unmount). */
export function startEffects(ui: Ui): { flush(): void; cancel(): void } {
  const app = ui.app;
  $effect(() => {
    document.documentElement.dataset.theme = app.theme;
  });

  // -- data requests (latest wins) --------------------------------------------------------------
  let seriesSeq = 0;
  $effect(() => {
    const p = ui.procIndex;
    const view = app.view;
    if (p < 0 || !app.summary) return;
    const seq = ++seriesSeq;
    if (app.report) {
      app.series = reportSeries(app.report, p, 8);
      return;
    }
    void app.client.request({ type: 'stackSeries', proc: p, n: 8, view }).then((r) => {
      if (seq === seriesSeq) {
        app.series = r.series;
        requestAnimationFrame(() => performance.mark('heaplens:timeline-stacks'));
      }
    });
  });

  let growthSeq = 0;
  $effect(() => {
    const p = ui.procIndex;
    const base = app.base;
    const target = app.target;
    const view = app.view;
    if (p < 0 || !app.summary) return;
    const seq = ++growthSeq;
    if (app.report) {
      app.growth = reportGrowth(app.report, p);
      return;
    }
    untrack(() => app.busy++);
    app.client
      .request({ type: 'growth', proc: p, base, target, view, limit: 20000 })
      .then((r) => {
        if (seq === growthSeq) app.growth = r.growth;
      })
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => app.busy--);
  });

  let suspectsSeq = 0;
  $effect(() => {
    const view = { mode: app.mode, hideAllocator: app.hideAllocator };
    if (!app.summary || app.report) return;
    const seq = ++suspectsSeq;
    void app.client
      .request({ type: 'suspects', view, limit: 200 })
      .then((r) => {
        if (seq === suspectsSeq) app.suspects = r.suspects;
      })
      .catch((e: unknown) => (app.error = String(e)));
  });

  // -- stack notes resolved to stacks of what is loaded (worker, or the report's stacks) -----------
  let resolveSeq = 0;
  $effect(() => {
    const notes = app.notes;
    const summary = app.summary;
    const report = app.report;
    const targets = notes.filter((n) => n.target.kind === 'stack').map((n) => ({ id: n.id, t: n.target as StackTarget }));
    const pending = app.pendingSelectedStack;
    if (!summary) return;
    const seq = ++resolveSeq;
    const all = pending ? [...targets.map((x) => x.t), pending] : targets.map((x) => x.t);
    const done = (ids: ({ proc: number; stackId: number } | null)[]): void => {
      if (seq !== resolveSeq) return;
      const m = new Map<string, { proc: number; stackId: number }>();
      targets.forEach((x, i) => {
        const r = ids[i];
        if (r) m.set(x.id, r);
      });
      app.noteStacks = m;
      if (pending) {
        app.pendingSelectedStack = null;
        const r = ids[targets.length];
        if (r && r.proc === ui.procIndex) ui.selectStack(r.stackId);
      }
    };
    if (report) done(all.map((t) => resolveReportStack(report, t)));
    else if (all.length > 0) void untrack(() => app.client.request({ type: 'resolveStacks', targets: all })).then(({ ids }) => done(ids));
    else done([]);
  });

  // -- sessions: autosave (debounced) on any change of what a session holds ------------------------
  const autosaver = debounce(() => void app.autosave(), 1500);
  $effect(() => {
    void [app.notes, app.base, app.target, app.snapshot, app.tab, app.mode, app.hideAllocator, app.sample, app.filters, app.unfold, app.search, app.diffMode, app.widthBy, app.selectedStack, ui.procIndex];
    if (!app.summary || app.readOnly) return;
    untrack(() => autosaver.call());
  });
  $effect(() => {
    if (app.summary) return;
    void app.lastAutosave().then((s) => (ui.autosaved = s && (s.notes.length > 0 || s.selection.process) ? s : null));
  });
  return { flush: () => autosaver.flush(), cancel: () => autosaver.cancel() };
}
