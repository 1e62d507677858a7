// One plot frame for every chart: the same left margin (room for a byte label such as "1023.9 MiB") and right
// margin, so the timeline, its stacked areas and the memory chart beneath them share their x range and line up;
// and one way to draw their axes (d3's axis at the ticks time-axis.ts and bytes-axis.ts chose).

import { axisBottom, axisLeft, type ScaleLinear, type Selection } from 'd3';
import type { Tick } from './time-axis.ts';

export const MARGIN = { l: 62, r: 14, b: 22 } as const;

export interface Frame {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The plot area of a chart `width` × `height` px with `top` px above it (a band for labels). */
export function plotFrame(width: number, height: number, top: number): Frame {
  return { left: MARGIN.l, right: Math.max(MARGIN.l + 1, width - MARGIN.r), top, bottom: height - MARGIN.b };
}

type G = Selection<SVGGElement, unknown, null, undefined>;

function labelled(ticks: readonly Tick[]): (d: unknown) => string {
  const m = new Map(ticks.map((t) => [t.value, t.label]));
  return (d) => m.get(Number(d)) ?? '';
}

/** An x axis along the frame's bottom. */
export function drawXAxis(g: G, frame: Frame, scale: ScaleLinear<number, number>, ticks: readonly Tick[]): void {
  g.attr('class', 'axis')
    .attr('transform', `translate(0,${frame.bottom})`)
    .call(
      axisBottom(scale)
        .tickValues(ticks.map((t) => t.value))
        .tickFormat(labelled(ticks)),
    );
}

/** A y axis along the frame's left. */
export function drawYAxis(g: G, frame: Frame, scale: ScaleLinear<number, number>, ticks: readonly Tick[]): void {
  g.attr('class', 'axis')
    .attr('transform', `translate(${frame.left},0)`)
    .call(
      axisLeft(scale)
        .tickValues(ticks.map((t) => t.value))
        .tickFormat(labelled(ticks)),
    );
}
