// A flame-graph tab's data: the worker's tree of one dump (flame) or of base → target (diff).
// Latest request wins. Called from the view's setup.

import { untrack } from 'svelte';
import type { Ui } from './ui.svelte.ts';

export function requestFlame(ui: Ui, kind: 'flame' | 'diff'): void {
  const app = ui.app;
  let seq = 0;
  $effect(() => {
    const p = ui.procIndex;
    const snapshot = app.snapshot;
    const base = app.base;
    const target = app.target;
    const view = app.view;
    if (p < 0 || !app.hasJob) return;
    const mine = ++seq;
    untrack(() => app.busy++);
    app.client
      .request({
        type: 'flame',
        proc: p,
        snapshot: kind === 'flame' ? snapshot : target,
        base: kind === 'diff' ? base : null,
        view,
      })
      .then((r) => {
        if (mine !== seq) return;
        if (kind === 'flame') app.flame = r.flame;
        else app.diffFlame = r.flame;
      })
      .catch((e: unknown) => (app.error = String(e)))
      .finally(() => app.busy--);
  });
}
