// A flame-graph tab's data: the worker's tree of one dump (flame) or of base → target (diff).
// Latest request wins. Called from the view's setup.

import { untrack } from 'svelte';
import type { Ui } from './ui.svelte.ts';
import { latestWins } from './latest-wins.ts';

export function requestFlame(ui: Ui, kind: 'flame' | 'diff'): void {
  const app = ui.app;
  const latest = latestWins();
  $effect(() => {
    const p = ui.app.selection.procIndex;
    const snapshot = app.selection.snapshot;
    const base = app.selection.base;
    const target = app.selection.target;
    const view = app.selection.view;
    const shape = app.selection.flameShape;
    if (p < 0 || !app.job.hasJob) return;
    untrack(() => app.busy++);
    latest
      .ask(
        app.client.request({
          type: 'flame',
          proc: p,
          snapshot: kind === 'flame' ? snapshot : target,
          base: kind === 'diff' ? base : null,
          view,
          shape,
        }),
        (r) => {
          if (kind === 'flame') app.selection.flame = r.flame;
          else app.selection.diffFlame = r.flame;
        },
      )
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => app.busy--);
  });
}
