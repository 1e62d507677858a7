// The window-wide reactions: theme, the data every view shares (growth ranking, timeline stacks), stack notes
// resolved to the loaded stacks, and autosave. Called once from App.svelte's setup (effects need a component).
// A view's own data (a flame graph, …) is requested by the view itself.

import { latestWins } from './latest-wins.ts';
import { untrack } from 'svelte';
import type { StackTarget } from '../../../core/notes/schema.ts';
import { debounce } from './session-map.ts';
import type { Ui } from './ui.svelte.ts';
import type { GrowthResult, StackFilterChip, StackMode, SuspectsResult } from './protocol.ts';
import { LatestAsk } from './latest-ask.ts';
import { rankingDue, readCount } from './ranking-pace.ts';
import { defaultStack, openingProcess } from '../state/opening.ts';
import type { Tab } from '../views/tabs.ts';

/** Sets up the effects; returns the autosaver (flushed on pagehide, cancelled on unmount). */
export function startEffects(ui: Ui): { flush(): void; cancel(): void } {
  const app = ui.app;
  $effect(() => {
    document.documentElement.dataset.theme = app.theme;
  });

  // -- data requests (latest wins) --------------------------------------------------------------
  /** the steadiest grower of the focused process, else its largest growth */
  const focusTopGrowth = (rows: GrowthResult['stacks']): void => {
    app.job.focusTopSuspect = false;
    const top =
      rows.reduce<(typeof rows)[number] | null>(
        (b, x) => (x.steadiness > 0 && (!b || x.steadiness > b.steadiness) ? x : b),
        null,
      ) ?? rows.find((x) => x.deltaBytes > 0);
    if (top) ui.app.selection.selectStack(top.stackId);
  };

  // The suspects first: the worker answers in order, and while a job loads the first screen waits on its row
  // more than on the timeline's stacks or the growth table (each of those took about a second on the first
  // process of a deep-stack job, ahead of it). One request at a time, the latest wish next, an update of the
  // loading job's ranking no sooner than RANK_SHARE × the last ranking's time after it (lib/latest-ask.ts; at 3×,
  // 2–3 updates still took ~1 s of the deep job's worker, which also merges the dumps, and the page's longest
  // tasks while loading, redrawing the rows); an answer is shown while it is of the same job and view (an earlier
  // update's ranking is better than none).
  type SuspectsAsk = {
    view: { mode: StackMode; hideAllocator: boolean; filters: StackFilterChip[] };
    limit: number;
    key: string;
    /** while loading: the processes read whole in the job so far asked of (null: the whole job) */
    read: number | null;
  };
  const RANK_SHARE = 8;
  const suspectsAsker = new LatestAsk<SuspectsAsk, SuspectsResult>({
    send: (ask) => app.client.request({ type: 'suspects', view: ask.view, limit: ask.limit }).then((r) => r.suspects),
    throttled: () => app.job.partial,
    share: RANK_SHARE,
    // near a load's end an update only delays it: the deep 4 × 50 job's last update (0.4 s of the worker) ended
    // after the full job was in
    soonWhole: (ms) => {
      const left = app.job.loadLeftMs();
      return left !== null && left < ms;
    },
    fail: (e) => {
      app.error = String(e);
      // no ranking to choose by: the views of the process shown are asked after all
      app.job.autoOpen = false;
    },
    apply: (suspects, ask) => {
      app.job.suspects = suspects;
      app.job.rankedRead = ask.read;
      // a job opens on the process that holds suspect #1 (else the killed one), once the full ranking is in,
      // unless the user has picked another meanwhile
      const sel = app.selection;
      if (app.job.autoOpen && !app.job.partial) {
        app.job.autoOpen = false;
        const o = sel.opened && openingProcess(app.job.summary?.processes ?? [], suspects);
        if (o) sel.openOn(o);
      }
      // a report opens on the job's top suspect: its process focused, its stack in the panel
      const top = suspects.rows[0]?.members[0];
      if (app.job.focusTopSuspect && top) {
        app.job.focusTopSuspect = false;
        if (ui.app.selection.procIndex !== top.proc) app.selection.focus(top.proc, false);
        ui.app.selection.selectStack(top.stackId);
      } else if (app.job.focusTopSuspect && app.selection.growth) focusTopGrowth(app.selection.growth.stacks);
    },
  });
  // the last ranking asked: its key and, while loading, the processes read whole it was asked of
  let rankedKey = '';
  let rankedRead: number | null = null;
  let rankedAt = 0;
  $effect(() => {
    // the focus/ignore chips narrow the ranking as they narrow every view
    const view = {
      mode: app.selection.mode,
      hideAllocator: app.selection.hideAllocator,
      filters: app.selection.filters.map((f) => ({ ...f })),
    };
    // reports too: the analysis runs in their page over the embedded job; while a job loads, again on each
    // update (the ranking of the processes read so far, its top rows only)
    const summary = app.job.summary;
    if (!summary) return;
    const partial = app.job.partial;
    const limit = partial ? 16 : 200;
    const key = `${app.job.jobEpoch}|${view.mode}|${view.hideAllocator}|${limit}|${JSON.stringify(view.filters)}`;
    // an update of the loading job's ranking only once enough more of it is read (lib/ranking-pace.ts)
    const read = partial ? readCount(summary.processes) : null;
    const now = performance.now();
    if (read !== null && key === rankedKey && !rankingDue(read, rankedRead, now - rankedAt)) return;
    rankedKey = key;
    rankedRead = read;
    rankedAt = now;
    untrack(() => suspectsAsker.ask({ view, limit, key, read }));
  });

  // -- nothing selected: the stack panel shows the focused process's highest suspect (suspect #1's stack on the
  //    first screen, where the job opens on its holder), never an empty "select a row" column
  $effect(() => {
    const suspects = app.job.suspects;
    const p = ui.app.selection.procIndex;
    const sel = app.selection;
    if (!suspects || app.job.partial || app.job.openingPending || p < 0) return;
    if (sel.panel !== null || sel.selectedStack !== null || sel.pendingSelectedStack !== null) return;
    const m = defaultStack(suspects, p);
    if (m !== null) untrack(() => sel.selectStack(m));
  });

  const seriesLatest = latestWins();
  $effect(() => {
    const p = ui.app.selection.procIndex;
    const view = app.selection.view;
    if (p < 0 || !app.job.hasJob || app.job.openingPending) return;
    void seriesLatest
      .ask(app.client.request({ type: 'stackSeries', proc: p, n: 8, view }), (r) => {
        app.selection.series = r.series;
        requestAnimationFrame(() => performance.mark('heaplens:timeline-stacks'));
      })
      .catch(() => undefined);
  });

  const growthLatest = latestWins();
  const GROWTH_TABS: ReadonlySet<Tab> = new Set<Tab>(['growth', 'sandwich']);
  $effect(() => {
    const p = ui.app.selection.procIndex;
    const base = app.selection.base;
    const target = app.selection.target;
    const view = app.selection.view;
    if (p < 0 || !app.job.hasJob || app.job.openingPending) return;
    // While a job loads, only for a tab that shows it: the first process's table took ~0.35 s of the worker
    // that also merges the dumps (deep-stack job); the stack panel shows its row's figures once the job is in.
    if (app.job.partial && !GROWTH_TABS.has(app.selection.tab)) return;
    untrack(() => app.busy++);
    growthLatest
      // every stack of a process, and the functions that changed most (a symbolized job has a few thousand; an
      // unsymbolized one a row per address, whose decoding blocked the page for ~50 ms and more)
      .ask(
        app.client.request({ type: 'growth', proc: p, base, target, view, limit: 20000, functionLimit: 5000 }),
        (r) => {
          app.selection.growth = r.growth;
          // no job-wide ranking to open on (nothing scores): the focused process's top growth
          if (app.job.focusTopSuspect && app.job.suspects && app.job.suspects.rows.length === 0)
            focusTopGrowth(r.growth.stacks);
        },
      )
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => app.busy--);
  });

  // -- the stack panel follows base/target and the view: a stack is shown again for the new pair; a flame
  //    node's path (of the old tree) is cleared
  let panelKey = '';
  $effect(() => {
    const key = `${app.job.jobEpoch}|${ui.app.selection.procIndex}|${app.selection.base}|${app.selection.target}|${app.selection.mode}|${app.selection.hideAllocator}`;
    if (key === panelKey) return;
    const first = panelKey === '';
    panelKey = key;
    if (first) return;
    untrack(() => {
      const id = app.selection.selectedStack;
      if (id !== null && app.selection.panel?.stackId === id) ui.app.selection.selectStack(id);
      else if (app.selection.panel && app.selection.panel.stackId === undefined) app.selection.panel = null;
    });
  });

  // -- stack notes resolved to stacks of what is loaded ---------------------------------------------
  const resolveLatest = latestWins();
  $effect(() => {
    const notes = app.notes.list;
    const hasJob = app.job.hasJob;
    const targets = notes
      .filter((n) => n.target.kind === 'stack')
      .map((n) => ({ id: n.id, t: n.target as StackTarget }));
    const pending = app.selection.pendingSelectedStack;
    if (!hasJob) return;
    const all = pending ? [...targets.map((x) => x.t), pending] : targets.map((x) => x.t);
    const done = (ids: ({ proc: number; stackId: number } | null)[]): void => {
      const m = new Map<string, { proc: number; stackId: number }>();
      targets.forEach((x, i) => {
        const r = ids[i];
        if (r) m.set(x.id, r);
      });
      app.notes.noteStacks = m;
      if (pending) {
        app.selection.pendingSelectedStack = null;
        const r = ids[targets.length];
        if (r && r.proc === ui.app.selection.procIndex) ui.app.selection.selectStack(r.stackId);
      }
    };
    const answer: Promise<{ ids: ({ proc: number; stackId: number } | null)[] }> =
      all.length > 0
        ? untrack(() => app.client.request({ type: 'resolveStacks', targets: all }))
        : Promise.resolve({ ids: [] });
    void resolveLatest.ask(answer, ({ ids }) => done(ids)).catch(() => undefined);
  });

  // -- sessions: autosave (debounced) on any change of what a session holds ------------------------
  const autosaver = debounce(() => void app.session.autosave(), 1500);
  $effect(() => {
    void [
      app.notes.list,
      app.selection.base,
      app.selection.target,
      app.selection.snapshot,
      app.selection.tab,
      app.selection.mode,
      app.selection.hideAllocator,
      app.selection.sample,
      app.selection.filters,
      app.selection.unfold,
      app.selection.search,
      app.selection.diffMode,
      app.selection.widthBy,
      app.selection.selectedStack,
      ui.app.selection.procIndex,
    ];
    // a job still loading is not saved (its files are not all read)
    if (!app.job.summary || app.job.readOnly || app.job.partial) return;
    untrack(() => autosaver.call());
  });
  $effect(() => {
    if (app.job.summary) return;
    void app.session
      .lastAutosave()
      .then((s) => (ui.autosaved = s && (s.notes.length > 0 || s.selection.process) ? s : null));
  });
  return { flush: () => autosaver.flush(), cancel: () => autosaver.cancel() };
}
