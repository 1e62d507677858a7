// Tab id → the view component shown in the centre column (each view fetches its own data and reads the
// window's Ui from context). `search`: the tab bar shows the search box; `controls`: extra tab-bar controls.

import type { Component } from 'svelte';
import type { Tab } from './tabs.ts';
import GrowthView from './GrowthView.svelte';
import SuspectsView from './SuspectsView.svelte';
import FlameView from './FlameView.svelte';
import DiffView from './DiffView.svelte';
import DiffControls from './DiffControls.svelte';
import FlameControls from './FlameControls.svelte';
import SandwichView from './SandwichView.svelte';

export interface ViewEntry {
  component: Component;
  search?: boolean;
  controls?: Component;
}

export const VIEWS: Record<Tab, ViewEntry> = {
  suspects: { component: SuspectsView, search: true },
  growth: { component: GrowthView },
  flame: { component: FlameView, search: true, controls: FlameControls },
  diff: { component: DiffView, search: true, controls: DiffControls },
  sandwich: { component: SandwichView, search: true },
};
