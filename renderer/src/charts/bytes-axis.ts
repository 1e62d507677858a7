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

/** the least distance between two y labels (px): a label is 10 px high, so a shrunk chart never stacks them */
export const MIN_TICK_GAP = 16;

/**
 * 0 … max × headroom (at least 1 B) onto `range` = [bottom px, top px], with `count` ticks about — fewer when the
 * range is too short for them to stand MIN_TICK_GAP apart (d3's ticks may also give more than asked: every
 * other one is dropped until they do).
 */
export function bytesAxis(maxBytes: number, range: readonly [number, number], count = 4): BytesAxis {
  const span = Math.abs(range[0] - range[1]);
  const fit = Math.max(1, Math.min(count, Math.floor(span / MIN_TICK_GAP)));
  const y = scaleLinear()
    .domain([0, Math.max(1, maxBytes) * HEADROOM])
    .range([range[0], range[1]])
    .nice(fit);
  let values = y.ticks(fit);
  const apart = (vs: number[]): boolean => vs.every((v, k) => k === 0 || Math.abs(y(v) - y(vs[k - 1])) >= MIN_TICK_GAP);
  while (values.length > 2 && !apart(values)) values = values.filter((_, k) => k % 2 === 0);
  return { y, ticks: values.map((v) => ({ value: v, label: formatBytes(v) })) };
}
