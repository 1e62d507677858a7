// The one bytes axis of every chart: from 0 (heap sizes are compared with their zero, never zoomed in on a band),
// a little headroom over the largest value so a line's peak is not on the frame, ticks in the app's byte units
// (core/model/units.ts via lib/format.ts). A dump's height is its total with the cut-dump rule of
// core/model/snapshot-status.ts (a dump cut mid-write is drawn at its header's total, not its partial records).

import { scaleLinear, type ScaleLinear } from 'd3';
import { totalOfDump } from '../../../core/model/snapshot-status.ts';
import { formatBytes } from '../lib/format.ts';
import type { Tick } from './time-axis.ts';

/** headroom over the largest value */
export const HEADROOM = 1.05;

export interface DumpFigures {
  complete: boolean;
  headerLiveBytes: number | null;
  liveBytes: number;
}

/** The height a dump is drawn at in every chart. */
export function dumpHeight(s: DumpFigures): number {
  return totalOfDump(s.complete, s.headerLiveBytes, s.liveBytes);
}

export interface BytesAxis {
  y: ScaleLinear<number, number>;
  ticks: Tick[];
}

/** 0 … max × headroom (at least 1 B) onto `range` = [bottom px, top px], with `count` ticks about. */
export function bytesAxis(maxBytes: number, range: readonly [number, number], count = 4): BytesAxis {
  const y = scaleLinear()
    .domain([0, Math.max(1, maxBytes) * HEADROOM])
    .range([range[0], range[1]])
    .nice(count);
  return { y, ticks: y.ticks(count).map((v) => ({ value: v, label: formatBytes(v) })) };
}
