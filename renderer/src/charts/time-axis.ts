// The one time axis of every chart (timeline, memory chart): wall clock when every shown process has a time for
// every dump (capture clock, else plausible mtimes: core/model/snapshot-time.ts), else the dumps' sequence
// numbers — labelled `#seq` as snapshots are everywhere (lib/format.ts snapLabel), never by list position. Wall
// clock is shown in UTC, on ticks, tooltips and the caption alike: dumps come from another machine (a cluster
// node), and UTC is the zone its logs and the kernel's lines can be matched in. A valgrind massif series has no wall
// clock but its own time (instructions, ms since start, or bytes allocated and freed): its axis when every shown
// process has it in one unit.

import { format, scaleLinear, scaleUtc, utcFormat, type ScaleLinear } from 'd3';
import type { SnapshotTimeSource } from '../../../core/model/snapshot-time.ts';

export interface AxisSnapshot {
  index: number;
  seq: number | null;
  timeMs: number | null;
  /** massif's own time, in the process's massifUnit */
  massifTime?: number;
}

export interface AxisProcess {
  time: { axis: 'wall' | 'seq'; source: SnapshotTimeSource; mtimeProblem: string | null; massifUnit?: string };
  snapshots: readonly AxisSnapshot[];
}

export type TimeKind = 'wall' | 'seq' | 'massif';

/** massif's time units as its --time-unit names them */
const MASSIF_UNITS: Record<string, { name: string; suffix: string }> = {
  i: { name: 'instructions executed', suffix: 'i' },
  ms: { name: 'ms since the program started', suffix: 'ms' },
  B: { name: 'bytes allocated and freed', suffix: 'B' },
};
export const TIME_ZONE = 'UTC';

/** Wall clock only when every shown process has a time for every dump; else sequence numbers. */
export function timeKind(procs: readonly AxisProcess[]): TimeKind {
  if (procs.length > 0 && procs.every((p) => p.time.axis === 'wall' && p.snapshots.every((s) => s.timeMs !== null)))
    return 'wall';
  const unit = procs[0]?.time.massifUnit;
  if (
    unit !== undefined &&
    procs.every((p) => p.time.massifUnit === unit && p.snapshots.every((s) => s.massifTime !== undefined))
  )
    return 'massif';
  return 'seq';
}

/** A snapshot's place on the axis: ms since the epoch, massif's time, or its sequence number (else its position). */
export function xValue(kind: TimeKind, s: AxisSnapshot): number {
  return kind === 'wall' ? (s.timeMs ?? 0) : kind === 'massif' ? (s.massifTime ?? 0) : (s.seq ?? s.index);
}

/** One format for a whole axis, by its span: milliseconds for a burst of dumps, dates across days (UTC). */
export function wallFormat(spanMs: number): (ms: number) => string {
  const f = utcFormat(spanMs < 10_000 ? '%H:%M:%S.%L' : spanMs < 86_400_000 ? '%H:%M:%S' : '%m-%d %H:%M');
  return (ms) => f(new Date(ms));
}

/** A dump's time as tooltips print it: date and time in UTC, with the zone named. */
export function formatUtc(ms: number): string {
  return `${utcFormat('%Y-%m-%d %H:%M:%S')(new Date(ms))} ${TIME_ZONE}`;
}

export interface Tick {
  value: number;
  label: string;
}

export interface TimeAxis {
  kind: TimeKind;
  /** axis value (ms since the epoch, or seq) → px */
  scale: ScaleLinear<number, number>;
  /** px of an axis value */
  at(v: number): number;
  /** px of a snapshot */
  x(s: AxisSnapshot): number;
  ticks: Tick[];
  /** what the axis is, for the chart's caption (`data-axis` = kind), and why when it is not wall clock */
  caption: { text: string; title: string };
}

/** at least this many px per tick label, so labels never overlap */
const TICK_PX: Record<TimeKind, number> = { wall: 96, seq: 44, massif: 72 };

/**
 * The axis over the shown processes' dumps, drawn between `range[0]` and `range[1]` px. `alsoMs`: wall-clock
 * moments the axis must reach too (the kill, seconds after the victim's last dump); every chart passes the same.
 * `zoom`: the part of the axis shown instead (axis values, a brush on the timeline: charts/brush-zoom.ts).
 */
export function timeAxis(
  procs: readonly AxisProcess[],
  range: readonly [number, number],
  alsoMs: readonly number[] = [],
  zoom: readonly [number, number] | null = null,
): TimeAxis {
  const kind = timeKind(procs);
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of procs)
    for (const s of p.snapshots) {
      const v = xValue(kind, s);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  // only within a day of the dumps: a moment off the dumps' clock must not squash them to a point
  if (kind === 'wall' && Number.isFinite(lo))
    for (const t of alsoMs)
      if (Number.isFinite(t) && t > lo - 86_400_000 && t < hi + 86_400_000) {
        lo = Math.min(lo, t);
        hi = Math.max(hi, t);
      }
  if (!Number.isFinite(lo)) [lo, hi] = [0, 1];
  if (zoom && zoom[1] > zoom[0]) [lo, hi] = [zoom[0], zoom[1]];
  if (hi <= lo) hi = lo + (kind === 'wall' ? 1000 : 1);
  const n = Math.max(2, Math.floor(Math.abs(range[1] - range[0]) / TICK_PX[kind]));
  const scale = scaleLinear().domain([lo, hi]).range([range[0], range[1]]);
  let ticks: Tick[];
  if (kind === 'wall') {
    // d3's calendar ticks (whole seconds, minutes, hours … in UTC), placed on the same linear scale
    const fmt = wallFormat(hi - lo);
    ticks = scaleUtc()
      .domain([new Date(lo), new Date(hi)])
      .ticks(n)
      .map((d) => ({ value: d.getTime(), label: fmt(d.getTime()) }));
  } else if (kind === 'massif') {
    // massif's figures as ms_print prints them: the unit after a short number (1.5M i, 120 ms, 3.2M B)
    const suffix = MASSIF_UNITS[procs[0].time.massifUnit ?? '']?.suffix ?? procs[0].time.massifUnit ?? '';
    const fmt = format('~s');
    ticks = scale.ticks(n).map((v) => ({ value: v, label: `${fmt(v)} ${suffix}` }));
  } else {
    const bySeq = procs.every((p) => p.snapshots.every((s) => s.seq !== null));
    ticks = scale
      .ticks(Math.min(n, Math.ceil(hi - lo) + 1))
      .filter(Number.isInteger)
      .map((v) => ({ value: v, label: bySeq ? `#${v}` : `dump ${v + 1}` }));
  }
  const at = (v: number): number => scale(v);
  return { kind, scale, at, x: (s) => at(xValue(kind, s)), ticks, caption: caption(kind, procs) };
}

function caption(kind: TimeKind, procs: readonly AxisProcess[]): { text: string; title: string } {
  if (kind === 'wall') {
    // what the times came from, in the order of their weight (capture clocks, a log's times, file times)
    const names: Record<SnapshotTimeSource, string> = {
      capture: 'capture times',
      log: "a log's times",
      mtime: 'file modification times',
      seq: '',
    };
    const src = (['capture', 'log', 'mtime'] as const)
      .filter((k) => procs.some((p) => p.time.source === k))
      .map((k) => names[k])
      .join(' and ');
    return {
      text: `x: wall clock, ${TIME_ZONE} (${src})`,
      title: `each dump at the time it was written, in ${TIME_ZONE}`,
    };
  }
  if (kind === 'massif') {
    const unit = procs[0].time.massifUnit ?? '';
    const name = MASSIF_UNITS[unit]?.name ?? unit;
    return {
      text: `x: massif time (${name})`,
      title: `x: each snapshot at the time valgrind massif gave it, in ${name}`,
    };
  }
  const why = procs.map((p) => p.time.mtimeProblem).find((m) => m) ?? 'no capture times';
  return { text: 'x: dump seq (no times)', title: `x: the dumps' sequence numbers; no usable times: ${why}` };
}

/** Whether two axes put every value at the same px, with the same ticks and caption. */
export function sameAxis(a: TimeAxis, b: TimeAxis): boolean {
  const same = (x: readonly number[], y: readonly number[]): boolean =>
    x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    a.kind === b.kind &&
    same(a.scale.domain(), b.scale.domain()) &&
    same(a.scale.range(), b.scale.range()) &&
    a.ticks.length === b.ticks.length &&
    a.ticks.every((t, i) => t.value === b.ticks[i].value && t.label === b.ticks[i].label) &&
    a.caption.text === b.caption.text &&
    a.caption.title === b.caption.title
  );
}

/**
 * The axis made last, while each new one is the same (sameAxis): a chart's effects follow the axis object, and each
 * update of a loading job made a new one that moved nothing (the processes read since keep their dumps' times), so
 * the charts of the focused process alone (its stacks' areas, its memory) were drawn again at every update.
 */
export function axisKeeper(): (x: TimeAxis) => TimeAxis {
  let last: TimeAxis | null = null;
  return (x) => (last !== null && sameAxis(last, x) ? last : (last = x));
}
