// The one bytes axis of every chart: from 0 (heap sizes are compared with their zero, never zoomed in on a band),
// a little headroom over the largest value so a line's peak is not on the frame, ticks at binary steps in the
// app's binary units (KiB, MiB, GiB as core/model/units.ts prints them); a chart of counts has its count axis. A dump's height is its total with the cut-dump rule of
// core/model/snapshot-status.ts (a dump cut mid-write is drawn at its header's total, not its partial records).

import { format, scaleLinear, type ScaleLinear } from 'd3';
import { totalOfDump } from '../../../core/model/snapshot-status.ts';
import type { ValueUnit } from '../lib/format.ts';
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
 * 0 … max × headroom (at least 1 B) onto `range` = [bottom px, top px], with at most `count` steps — fewer when the
 * range is too short for them to stand MIN_TICK_GAP apart. Steps are binary (a power of two bytes: 32 MiB, 512 MiB),
 * as the units are: decimal steps in binary units read 47.7, 95.4, 143 MiB. The axis ends on a tick.
 */
export function bytesAxis(maxBytes: number, range: readonly [number, number], count = 4): BytesAxis {
  const span = Math.abs(range[0] - range[1]);
  const fit = Math.max(1, Math.min(count, Math.floor(span / MIN_TICK_GAP)));
  const values = binaryTicks(Math.max(1, maxBytes) * HEADROOM, fit);
  const y = scaleLinear()
    .domain([0, values[values.length - 1]])
    .range([range[0], range[1]]);
  const label = tickLabels(values);
  return { y, ticks: values.map((v, k) => ({ value: v, label: label[k] })) };
}

/**
 * Ticks from 0 up to the first tick at or above `top`, at the smallest power-of-two step (≥ 1 B) that needs at
 * most `steps` steps: 105 MiB in 4 → 0, 32, 64, 96, 128 MiB; 1.26 GiB in 4 → 0, 0.5, 1, 1.5 GiB.
 */
export function binaryTicks(top: number, steps: number): number[] {
  const want = top / Math.max(1, steps);
  let step = 1;
  while (step < want) step *= 2;
  const n = Math.max(1, Math.ceil(top / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, k) => k * step);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * One unit for a whole axis, the largest its top tick reaches while the step stays at least a quarter of it
 * (0.25/0.5/0.75/1 GiB, not 0.125 GiB steps), and as few decimals as the step needs: "32 MiB", "1.5 GiB"; 0 is "0 B".
 */
export function tickLabels(values: readonly number[]): string[] {
  const top = values[values.length - 1] ?? 0;
  const step = values.length > 1 ? values[1] - values[0] : top;
  let u = 0;
  while (u < UNITS.length - 1 && top >= 1024 ** (u + 1) && step / 1024 ** (u + 1) >= 0.25) u++;
  const unit = 1024 ** u;
  const decimals = step / unit >= 1 ? 0 : Math.ceil(-Math.log2(step / unit) - 1e-9);
  return values.map((v) => (v === 0 ? '0 B' : `${Number((v / unit).toFixed(decimals))} ${UNITS[u]}`));
}

/**
 * The axis of a chart of counts (objects: a sample type counted, not weighed), from 0 with the same headroom and
 * gap rule: decimal steps, labelled as counts ("1.5k"), never as bytes.
 */
export function countAxis(maxCount: number, range: readonly [number, number], count = 4): BytesAxis {
  const span = Math.abs(range[0] - range[1]);
  const fit = Math.max(1, Math.min(count, Math.floor(span / MIN_TICK_GAP)));
  const values = decimalTicks(Math.max(1, maxCount) * HEADROOM, fit);
  const y = scaleLinear()
    .domain([0, values[values.length - 1]])
    .range([range[0], range[1]]);
  const si = format('~s');
  return { y, ticks: values.map((v) => ({ value: v, label: si(v) })) };
}

/** As binaryTicks, at the smallest 1, 2 or 5 × 10ⁿ step (≥ 1: a count is whole) that needs at most `steps`. */
export function decimalTicks(top: number, steps: number): number[] {
  const want = top / Math.max(1, steps);
  let step = 1;
  for (let p = 1; step < want; p *= 10) step = [1, 2, 5, 10].map((m) => m * p).find((c) => c >= want) ?? 10 * p;
  const n = Math.max(1, Math.ceil(top / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, k) => k * step);
}

/** The value axis of a chart of a sample type's values: bytes on binary steps, counts as counts. */
export function valueAxis(unit: ValueUnit, max: number, range: readonly [number, number], count = 4): BytesAxis {
  return unit === 'bytes' ? bytesAxis(max, range, count) : countAxis(max, range, count);
}
