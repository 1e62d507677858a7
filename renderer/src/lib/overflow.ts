// Which items of a one-line toolbar go into its "⋯" menu (components/OverflowBar.svelte). Pure, unit-tested.

export interface OverflowItem {
  id: string;
  /** higher stays longer (default 0) */
  priority?: number;
  /** never goes into the menu */
  keep?: boolean;
}

/**
 * The ids that go into the menu: the bar holds the items' widths plus `gap` between each, and the menu button
 * (`menuWidth` and a gap) when anything leaves. Items leave from the lowest priority up, among equals the last
 * first, until the rest fit; `keep` items never leave (when they alone do not fit, everything else has left).
 */
export function overflowed(
  items: readonly OverflowItem[],
  widths: Readonly<Record<string, number>>,
  room: number,
  gap: number,
  menuWidth: number,
): Set<string> {
  const total = (ids: readonly string[]): number =>
    ids.reduce((s, id) => s + (widths[id] ?? 0), 0) + gap * Math.max(0, ids.length - 1);
  const shown = items.map((it) => it.id);
  const out = new Set<string>();
  if (total(shown) <= room) return out;
  const order = items
    .map((it, k) => ({ it, k }))
    .filter(({ it }) => !it.keep)
    .sort((a, b) => (a.it.priority ?? 0) - (b.it.priority ?? 0) || b.k - a.k);
  for (const { it } of order) {
    out.add(it.id);
    const left = shown.filter((id) => !out.has(id));
    if (total(left) + gap + menuWidth <= room) break;
  }
  return out;
}
