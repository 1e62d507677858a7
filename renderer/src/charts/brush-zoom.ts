// Brush-zoom on a time axis (the timeline): a drag across the plot zooms the time axis to what it covered, a
// double-click on the plot's background resets it. Kept apart from the chart that uses it: the pure part
// (`brushDomain`) is unit-tested, the d3 part (`attachBrush`) only wires the mouse and draws the band, and the
// chart holds the zoom (the axis values it passes to charts/time-axis.ts timeAxis as `zoom`).

import type { Selection } from 'd3';

/** a drag shorter than this (px) is a click, not a brush */
export const MIN_BRUSH_PX = 5;

interface Span {
  left: number;
  right: number;
}
type Svg = Selection<SVGSVGElement, unknown, null, undefined>;

/**
 * The axis values a brush from px `a` to px `b` covers (either direction, clamped to the plot), widened about its
 * middle to at least `minSpan` (one dump apart on a seq axis, half a second of wall clock); null for a click.
 */
export function brushDomain(
  invert: (px: number) => number,
  a: number,
  b: number,
  plot: Span,
  minSpan: number,
): [number, number] | null {
  const x0 = Math.max(plot.left, Math.min(a, b));
  const x1 = Math.min(plot.right, Math.max(a, b));
  if (x1 - x0 < MIN_BRUSH_PX) return null;
  let lo = invert(x0);
  let hi = invert(x1);
  if (hi - lo < minSpan) {
    const mid = (lo + hi) / 2;
    [lo, hi] = [mid - minSpan / 2, mid + minSpan / 2];
  }
  return [lo, hi];
}

export interface BrushOptions {
  /** px → axis value (the axis drawn now, zoomed or not) */
  invert: (px: number) => number;
  minSpan: number;
  onzoom: (domain: [number, number]) => void;
  onreset: () => void;
  /** a drag that starts this way is not a brush (shift: a span note) */
  skip?: (ev: MouseEvent) => boolean;
}

/**
 * Wires a brush onto a chart's svg over the plot `frame`: press, drag, release zooms (a band shows the span
 * meanwhile); a double-click on the background resets (marks that take a double-click of their own stop it).
 */
export function attachBrush(svg: Svg, frame: Span & { top: number; bottom: number }, o: BrushOptions): void {
  let from: number | null = null;
  const band = svg
    .append('rect')
    .attr('class', 'brush-band')
    .attr('data-testid', 'timeline-brush')
    .attr('y', frame.top)
    .attr('height', Math.max(0, frame.bottom - frame.top))
    .attr('width', 0)
    .attr('fill', 'var(--accent)')
    .attr('fill-opacity', 0.12)
    .attr('stroke', 'var(--accent)')
    .attr('stroke-opacity', 0.5)
    .style('pointer-events', 'none');
  const end = (): void => {
    from = null;
    band.attr('width', 0);
  };
  svg
    .on('mousedown.brush', (ev: MouseEvent) => {
      if (ev.button !== 0 || o.skip?.(ev)) return;
      from = ev.offsetX;
    })
    .on('mousemove.brush', (ev: MouseEvent) => {
      if (from === null) return;
      const x0 = Math.max(frame.left, Math.min(from, ev.offsetX));
      const x1 = Math.min(frame.right, Math.max(from, ev.offsetX));
      band.attr('x', x0).attr('width', Math.max(0, x1 - x0));
    })
    .on('mouseup.brush', (ev: MouseEvent) => {
      if (from === null) return;
      const d = brushDomain(o.invert, from, ev.offsetX, frame, o.minSpan);
      end();
      if (d) o.onzoom(d);
    })
    .on('mouseleave.brush', end)
    .on('dblclick.brush', () => o.onreset());
}

/** While zoomed, the marks of a chart stay inside its plot (the axes and their labels outside it are kept). */
export function clipToPlot(svg: Svg, frame: Span, height: number, id: string, pad = 6): void {
  svg
    .append('defs')
    .append('clipPath')
    .attr('id', id)
    .append('rect')
    .attr('x', frame.left - pad)
    .attr('y', 0)
    .attr('width', Math.max(0, frame.right - frame.left + 2 * pad))
    .attr('height', height);
  const clip = svg.append('g').attr('clip-path', `url(#${id})`);
  const node = clip.node();
  if (!node) return;
  for (const c of [...svg.node()!.children])
    if (c !== node && c.tagName !== 'defs' && !c.classList.contains('axis')) node.appendChild(c);
}
