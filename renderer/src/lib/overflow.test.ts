import { describe, expect, it } from 'vitest';
import { overflowed } from './overflow.ts';

// the tab bar at 1024×640 as measured in Chromium (e2e/layout.e2e.ts): 522 px of room, 4 px gaps, a 26 px menu
const TABS = [
  { id: 'suspects', priority: 5, keep: true },
  { id: 'growth', priority: 5 },
  { id: 'flame', priority: 5 },
  { id: 'diff', priority: 5 },
  { id: 'inverted', priority: 5 },
  { id: 'sandwich', priority: 5 },
  { id: 'search', priority: 9 },
];
const W = { suspects: 77, growth: 65, flame: 101, diff: 126, inverted: 84, sandwich: 114, search: 100 };

describe('overflowed', () => {
  it('keeps everything when it fits, gaps included', () => {
    const all = Object.values(W).reduce((a, b) => a + b, 0) + 6 * 4;
    expect(overflowed(TABS, W, all, 4, 26).size).toBe(0);
    expect(overflowed(TABS, W, all - 1, 4, 26).size).toBeGreaterThan(0);
  });

  it('drops the last of the lowest priority first, until the rest and the menu button fit', () => {
    // 77+65+101+126+100 + 4 gaps = 485, + gap + menu = 515 ≤ 522: the two last tabs leave, the search stays
    expect([...overflowed(TABS, W, 522, 4, 26)].sort()).toEqual(['inverted', 'sandwich']);
    // narrower: the flame-graph tabs go before the search box (priority 9)
    expect(overflowed(TABS, W, 400, 4, 26).has('search')).toBe(false);
  });

  it('never drops a kept item, even when nothing else is left', () => {
    const out = overflowed(TABS, W, 50, 4, 26);
    expect(out.has('suspects')).toBe(false);
    expect(out.size).toBe(TABS.length - 1);
  });

  it('an item not measured yet counts as 0 px (it is measured once it is drawn in the bar)', () => {
    expect(overflowed([{ id: 'a' }, { id: 'b' }], { a: 100 }, 104, 4, 26).size).toBe(0);
  });
});
