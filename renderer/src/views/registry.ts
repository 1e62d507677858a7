// Tab id → the view component shown in the centre column (each view fetches its own data and reads the
// window's Ui from context). `search`: the tab bar shows the search box; `controls`: extra tab-bar controls.

import type { Component } from 'svelte';
import type { Tab } from './tabs.ts';
import GrowthView from './GrowthView.svelte';
import SuspectsView from './SuspectsView.svelte';
import FlameView from './FlameView.svelte';
import DiffView from './DiffView.svelte';
import DiffControls from './DiffControls.svelte';
import InvertedView from './InvertedView.svelte';
import SandwichView from './SandwichView.svelte';

export interface ViewEntry {
  component: Component;
  search?: boolean;
  controls?: Component;
}

export const VIEWS: Record<Tab, ViewEntry> = {
  suspects: { component: SuspectsView, search: true },
  growth: { component: GrowthView },
  flame: { component: FlameView, search: true },
  diff: { component: DiffView, search: true, controls: DiffControls },
  inverted: { component: InvertedView, search: true },
  sandwich: { component: SandwichView, search: true },
};
