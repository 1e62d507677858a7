// The tabs of the centre column: id (what a session stores), label and shortcut key. Pure (no components), so
// session-map.ts and its unit tests can use it. Add a view: one line here, one in registry.ts, one component.

export const TAB_LIST = [
  { id: 'suspects', label: 'Suspects', key: 's' },
  { id: 'growth', label: 'Growth', key: 'g' },
  { id: 'flame', label: 'Flame graph', key: 'f' },
  { id: 'diff', label: 'Diff flame graph', key: 'd' },
  { id: 'sandwich', label: 'Callers/callees', key: 'c' },
] as const satisfies readonly { id: string; label: string; key: string }[];

export type Tab = (typeof TAB_LIST)[number]['id'];
export const TABS: readonly Tab[] = TAB_LIST.map((t) => t.id);
