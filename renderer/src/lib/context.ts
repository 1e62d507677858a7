// The window's Ui (lib/ui.svelte.ts), handed to every view through Svelte context.

import { getContext, setContext } from 'svelte';
import type { Ui } from './ui.svelte.ts';

const KEY = Symbol('heaplens.ui');

export function provideUi(ui: Ui): void {
  setContext(KEY, ui);
}

export function useUi(): Ui {
  const ui = getContext<Ui | undefined>(KEY);
  if (!ui) throw new Error('useUi() outside App.svelte');
  return ui;
}
