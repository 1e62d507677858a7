// The specs' one reading of a flame graph as drawn: the test hook FlameGraph.svelte sets on `window` (nodes by
// label with their rectangles, a forced frame, the view) and a pixel of its canvas. The page knows no ELF, so
// the specs find nodes by label and judge colours by pixel.
import type { Page } from '@playwright/test';

export interface FlameRect {
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface FlameHit {
  node: number;
  label: string;
  rect: FlameRect | null;
}
export interface FlameView {
  zoom: number;
  scrollY: number;
  width: number;
  height: number;
}
export interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** The shape of the hook as FlameGraph.svelte's onMount writes it, one entry per graph's test id. */
interface FlameHookApi {
  find: (text: string) => FlameHit[];
  drawNow: () => number;
  size: () => number;
  highlighted: () => FlameHit | null;
  view: () => FlameView;
}
type HookWindow = { __heaplensFlame?: Record<string, FlameHookApi> };

/** The nodes of graph `graph` whose label contains `text` ('' for all), after a frame drawn now. */
export function flameNodes(page: Page, graph: string, text = ''): Promise<FlameHit[]> {
  return page.evaluate(
    ([g, t]) => {
      const api = (window as unknown as HookWindow).__heaplensFlame?.[g];
      api?.drawNow();
      return api ? api.find(t) : [];
    },
    [graph, text] as const,
  );
}

/** How many nodes graph `graph` holds (0 before it is mounted). */
export function flameSize(page: Page, graph: string): Promise<number> {
  return page.evaluate((g) => (window as unknown as HookWindow).__heaplensFlame?.[g]?.size() ?? 0, graph);
}

/** Waits until graph `graph` has a tree to draw (more than its root). */
export async function waitForFlame(page: Page, graph: string): Promise<void> {
  await page.waitForFunction((g) => ((window as unknown as HookWindow).__heaplensFlame?.[g]?.size() ?? 0) > 1, graph);
}

/**
 * Waits for graph `graph`'s frame at its container's current size: after a resize the component learns the new size
 * from a ResizeObserver and redraws on the next animation frame, then says so in `data-drawn` (width×height, CSS px,
 * at least 100 each as the component clamps them). A reading before that frame gets the old geometry.
 */
export async function waitForRedraw(page: Page, graph: string): Promise<void> {
  await page.waitForFunction((g) => {
    const el = document.querySelector(`[data-testid=${g}]`) as HTMLElement | null;
    if (!el) return false;
    const want = `${Math.max(100, el.clientWidth)}x${Math.max(100, el.clientHeight)}`;
    return el.dataset.drawn === want;
  }, graph);
}

/** The selected stack's node in graph `graph` (null: none, or off the tree). */
export function flameHighlighted(page: Page, graph: string): Promise<FlameHit | null> {
  return page.evaluate((g) => (window as unknown as HookWindow).__heaplensFlame?.[g]?.highlighted() ?? null, graph);
}

/** Graph `graph`'s zoom, scroll and size. */
export function flameView(page: Page, graph: string): Promise<FlameView | null> {
  return page.evaluate((g) => (window as unknown as HookWindow).__heaplensFlame?.[g]?.view() ?? null, graph);
}

/**
 * The canvas pixel of graph `graph` at `dx`, `dy` CSS pixels inside `rect` (a node's rectangle), after a frame
 * drawn now: inside the node's fill, clear of its outline and label.
 */
export function flamePixel(page: Page, graph: string, rect: { x: number; y: number }, dx = 1.5, dy = 2): Promise<Rgb> {
  return page.evaluate(
    ({ g, x, y }) => {
      (window as unknown as HookWindow).__heaplensFlame?.[g]?.drawNow();
      const canvas = document.querySelector(`[data-testid=${g}] canvas`) as HTMLCanvasElement;
      const dpr = window.devicePixelRatio || 1;
      const d = (canvas.getContext('2d') as CanvasRenderingContext2D).getImageData(
        Math.round(x * dpr),
        Math.round(y * dpr),
        1,
        1,
      ).data;
      return { r: d[0], g: d[1], b: d[2] };
    },
    { g: graph, x: rect.x + dx, y: rect.y + dy },
  );
}
