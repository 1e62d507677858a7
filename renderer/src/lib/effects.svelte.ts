// The window-wide reactions: theme, the data every view shares (growth ranking, timeline stacks), stack notes
// resolved to the loaded stacks, and autosave. Called once from App.svelte's setup (effects need a component).
// A view's own data (a flame graph, …) is requested by the view itself.

import { untrack } from 'svelte';
import type { StackTarget } from '../../../core/notes/schema.ts';
import { debounce } from './session-map.ts';
import type { Ui } from './ui.svelte.ts';
import type { GrowthResult, StackMode } from './protocol.ts';

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
    if (p < 0 || !app.hasJob) return;
    const seq = ++seriesSeq;
    void app.client.request({ type: 'stackSeries', proc: p, n: 8, view }).then((r) => {
      if (seq === seriesSeq) {
        app.series = r.series;
        requestAnimationFrame(() => performance.mark('heaplens:timeline-stacks'));
      }
    });
  });

  /** the steadiest grower of the focused process, else its largest growth */
  const focusTopGrowth = (rows: GrowthResult['stacks']): void => {
    app.focusTopSuspect = false;
    const top =
      rows.reduce<(typeof rows)[number] | null>((b, x) => (x.steadiness > 0 && (!b || x.steadiness > b.steadiness) ? x : b), null) ??
      rows.find((x) => x.deltaBytes > 0);
    if (top) ui.selectStack(top.stackId);
  };

  let growthSeq = 0;
  $effect(() => {
    const p = ui.procIndex;
    const base = app.base;
    const target = app.target;
    const view = app.view;
    if (p < 0 || !app.hasJob) return;
    const seq = ++growthSeq;
    untrack(() => app.busy++);
    app.client
      // every stack of a process, and the functions that changed most (a symbolized job has a few thousand; an
      // unsymbolized one a row per address, whose decoding blocked the page for ~50 ms and more)
      .request({ type: 'growth', proc: p, base, target, view, limit: 20000, functionLimit: 5000 })
      .then((r) => {
        if (seq !== growthSeq) return;
        app.growth = r.growth;
        // no job-wide ranking to open on (nothing scores): the focused process's top growth
        if (app.focusTopSuspect && app.suspects && app.suspects.rows.length === 0) focusTopGrowth(r.growth.stacks);
      })
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => app.busy--);
  });

  // One suspects request at a time: while a job loads, each update asks again, and answers the window no longer
  // wants would still cost the page their decoding; the latest wish waits for the one in flight. An answer is
  // shown while it is of the same job and view (an earlier update's ranking is better than none).
  type SuspectsAsk = { view: { mode: StackMode; hideAllocator: boolean }; limit: number; key: string };
  let suspectsBusy = false;
  let suspectsNext: SuspectsAsk | null = null;
  let suspectsKey = '';
  const askSuspects = (ask: SuspectsAsk): void => {
    suspectsKey = ask.key;
    if (suspectsBusy) {
      suspectsNext = ask;
      return;
    }
    suspectsBusy = true;
    void app.client
      .request({ type: 'suspects', view: ask.view, limit: ask.limit })
      .then((r) => {
        if (ask.key !== suspectsKey) return;
        app.suspects = r.suspects;
        // a report opens on the job's top suspect: its process focused, its stack in the panel
        const top = r.suspects.rows[0]?.members[0];
        if (app.focusTopSuspect && top) {
          app.focusTopSuspect = false;
          if (ui.procIndex !== top.proc) app.focus(top.proc, false);
          ui.selectStack(top.stackId);
        } else if (app.focusTopSuspect && app.growth) focusTopGrowth(app.growth.stacks);
      })
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => {
        suspectsBusy = false;
        const next = suspectsNext;
        suspectsNext = null;
        if (next) askSuspects(next);
      });
  };
  $effect(() => {
    const view = { mode: app.mode, hideAllocator: app.hideAllocator };
    // reports too: the analysis runs in their page over the embedded job; while a job loads, again on each
    // update (the ranking of the processes read so far, its top rows only)
    if (!app.summary) return;
    const limit = app.partial ? 16 : 200;
    const key = `${app.jobEpoch}|${view.mode}|${view.hideAllocator}|${limit}`;
    untrack(() => askSuspects({ view, limit, key }));
  });

  // -- the stack panel follows base/target and the view: a stack is shown again for the new pair; a flame
  //    node's path (of the old tree) is cleared
  let panelKey = '';
  $effect(() => {
    const key = `${app.jobEpoch}|${ui.procIndex}|${app.base}|${app.target}|${app.mode}|${app.hideAllocator}`;
    if (key === panelKey) return;
    const first = panelKey === '';
    panelKey = key;
    if (first) return;
    untrack(() => {
      const id = app.selectedStack;
      if (id !== null && app.panel?.stackId === id) ui.selectStack(id);
      else if (app.panel && app.panel.stackId === undefined) app.panel = null;
    });
  });

  // -- stack notes resolved to stacks of what is loaded ---------------------------------------------
  let resolveSeq = 0;
  $effect(() => {
    const notes = app.notes;
    const hasJob = app.hasJob;
    const targets = notes
      .filter((n) => n.target.kind === 'stack')
      .map((n) => ({ id: n.id, t: n.target as StackTarget }));
    const pending = app.pendingSelectedStack;
    if (!hasJob) return;
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
    if (all.length > 0)
      void untrack(() => app.client.request({ type: 'resolveStacks', targets: all })).then(({ ids }) => done(ids));
    else done([]);
  });

  // -- sessions: autosave (debounced) on any change of what a session holds ------------------------
  const autosaver = debounce(() => void app.autosave(), 1500);
  $effect(() => {
    void [
      app.notes,
      app.base,
      app.target,
      app.snapshot,
      app.tab,
      app.mode,
      app.hideAllocator,
      app.sample,
      app.filters,
      app.unfold,
      app.search,
      app.diffMode,
      app.widthBy,
      app.selectedStack,
      ui.procIndex,
    ];
    // a job still loading is not saved (its files are not all read)
    if (!app.summary || app.readOnly || app.partial) return;
    untrack(() => autosaver.call());
  });
  $effect(() => {
    if (app.summary) return;
    void app.lastAutosave().then((s) => (ui.autosaved = s && (s.notes.length > 0 || s.selection.process) ? s : null));
  });
  return { flush: () => autosaver.flush(), cancel: () => autosaver.cancel() };
}
