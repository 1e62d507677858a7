// The kill and the limit as every chart draws them (timeline, memory chart): one label for who killed the
// process and when, one place on the time axis for it, and one rule for whether the limit line is on the chart's
// scale — so both charts say the same thing at the same x.

import type { KillMark } from '../../../core/query/postmortem-view.ts';
import type { KillBy } from '../../../core/stats/kill-evidence.ts';
import type { Selection } from 'd3';
import { formatBytes } from '../lib/format.ts';
import { formatUtc, type TimeAxis } from './time-axis.ts';

/** who killed it, as the marker names it */
export const KILLED_BY: Record<KillBy, string> = {
  kernel: 'the kernel (OOM killer)',
  cgroup: 'the cgroup (memory.max)',
  ray: 'Ray (memory monitor)',
  kubernetes: 'Kubernetes (OOMKilled)',
  slurm: 'SLURM (oom_kill event)',
  watchdog: "the job's memory watchdog",
  inferred: 'inferred (no final dump)',
};

/** short form beside the marker */
const SHORT: Record<KillBy, string> = {
  kernel: 'kernel',
  cgroup: 'cgroup',
  ray: 'Ray',
  kubernetes: 'Kubernetes',
  slurm: 'SLURM',
  watchdog: 'watchdog',
  inferred: 'inferred',
};

/** The marker's own text ("killed: kernel 14:03:11"), and its tooltip (who, when, how the time was placed). */
export function killLabel(k: KillMark): { text: string; title: string } {
  const time = k.atMs !== null ? formatUtc(k.atMs) : null;
  return {
    text: `killed: ${SHORT[k.by]}${time ? ` ${time.slice(11, 19)}` : ''}`,
    title: [
      `pid ${k.pid ?? '?'} killed by ${KILLED_BY[k.by]}${time ? ` at ${time}` : ' (no time given)'}`,
      k.timeFrom ? `time: ${k.timeFrom}` : '',
      k.evidence
        ? `${k.evidence.file}${k.evidence.line !== null ? `:${k.evidence.line}` : ''}: ${k.evidence.text}`
        : '',
    ]
      .filter((t) => t !== '')
      .join('\n'),
  };
}

/** wall-clock moments the axes must reach: the kill */
export function killMoments(k: KillMark | null | undefined): number[] {
  return k && k.atMs !== null ? [k.atMs] : [];
}

/**
 * The kill's x: its time on a wall-clock axis; else (sequence axis, or no time) just after the killed process's
 * last dump, where its series stops. Null when neither is known.
 */
export function killX(
  axis: TimeAxis,
  k: KillMark,
  lastDump: { index: number; seq: number | null; timeMs: number | null } | null,
): number | null {
  if (axis.kind === 'wall' && k.atMs !== null) return axis.at(k.atMs);
  return lastDump ? axis.x(lastDump) : null;
}

/**
 * A limit far above what the chart shows would flatten every line to the floor: it is on the scale only when it
 * is at most this many times the chart's largest value; above that the chart says where it is instead.
 */
export const LIMIT_ON_SCALE = 4;

export function limitOnScale(limit: number | null, peak: number): boolean {
  return limit !== null && limit > 0 && limit <= LIMIT_ON_SCALE * Math.max(1, peak);
}

/** The one colour of the limit and the kill in every chart (the theme's danger colour, light and dark). */
export const LIMIT_KILL_COLOR = 'var(--danger)';

/** The plot area the marks span. */
interface PlotBox {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

type Layer = Selection<SVGGElement, unknown, null, undefined>;

/** Label text over lines and dots: the danger colour with a halo of the panel's, readable over any line. */
function label(layer: Layer, x: number, y: number, anchor: 'start' | 'end', text: string): void {
  layer
    .append('text')
    .attr('x', x)
    .attr('y', y)
    .attr('text-anchor', anchor)
    .attr('fill', LIMIT_KILL_COLOR)
    .attr('font-size', 10)
    .attr('paint-order', 'stroke')
    .attr('stroke', 'var(--panel)')
    .attr('stroke-width', 3)
    .text(text);
}

/**
 * The limit as both charts draw it, into `layer` (which carries the chart's test id): a dashed line across the
 * plot at `y`, or, when the limit is above the chart's scale (`y` null), a label at the top saying so.
 */
export function drawLimit(layer: Layer, box: PlotBox, bytes: number, y: number | null, source: string): void {
  layer.attr('data-bytes', String(bytes)).attr('data-on-scale', String(y !== null));
  layer.append('title').text(`memory limit ${formatBytes(bytes)}, from ${source}`);
  if (y !== null)
    layer
      .append('line')
      .attr('x1', box.left)
      .attr('x2', box.right)
      .attr('y1', y)
      .attr('y2', y)
      .attr('stroke', LIMIT_KILL_COLOR)
      .attr('stroke-dasharray', '6 3')
      .attr('stroke-width', 1.5);
  const ly = y ?? box.top;
  label(
    layer,
    box.left + 4,
    y !== null ? ly - 3 : ly + 9,
    'start',
    `limit ${formatBytes(bytes)}${y !== null ? '' : ' ↑ (above this scale)'}`,
  );
}

/**
 * The kill as both charts draw it, into `layer` (which carries the chart's test id): a line across the plot at
 * `x` with the killer and time (killLabel), and on the timeline a cross where the killed process's line stops
 * (`crossY`). The label goes at the top or the bottom of the plot (clear of what else each chart labels there),
 * on the side of the line with room.
 */
export function drawKill(
  layer: Layer,
  box: PlotBox,
  k: KillMark,
  x: number,
  opts: { labelAt: 'top' | 'bottom'; crossY: number | null; withPid: boolean; limitY?: number | null },
): void {
  const { text, title } = killLabel(k);
  layer.attr('data-pid', String(k.pid ?? '')).attr('data-by', k.by);
  layer.append('title').text(title);
  momentLine(layer, box, x);
  if (opts.crossY !== null) {
    const cy = opts.crossY;
    layer
      .append('path')
      .attr('d', `M${x - 5},${cy - 5} L${x + 5},${cy + 5} M${x + 5},${cy - 5} L${x - 5},${cy + 5}`)
      .attr('stroke', LIMIT_KILL_COLOR)
      .attr('stroke-width', 2.4);
  }
  // room for the label's ~110 px
  momentLabel(
    layer,
    box,
    x,
    killLabelY(box, opts.labelAt, opts.limitY ?? null),
    opts.withPid ? `${text} · pid ${k.pid ?? '?'}` : text,
    120,
  );
}

/** A moment the charts mark (a kill, a GPU's out-of-memory): a line across the plot at `x`. */
export function momentLine(layer: Layer, box: PlotBox, x: number): void {
  layer
    .append('line')
    .attr('x1', x)
    .attr('x2', x)
    .attr('y1', box.top)
    .attr('y2', box.bottom)
    .attr('stroke', LIMIT_KILL_COLOR)
    .attr('stroke-width', 1.5);
}

/** A moment's label at baseline `y`: to the right of its line unless its `room` px would run off the plot. */
export function momentLabel(layer: Layer, box: PlotBox, x: number, y: number, text: string, room: number): void {
  const left = x > box.right - room;
  label(layer, left ? x - 4 : x + 4, y, left ? 'end' : 'start', text);
}

/** the kill label's height above its baseline, and below it (px, 10 px text) */
const ASCENT = 9;
const DESCENT = 3;

/**
 * The kill label's baseline: at the top (or bottom) of the plot, moved off the limit line (`limitY`) when the line
 * runs through it — below the line at the top, above it at the bottom — so the label is never drawn across it.
 */
export function killLabelY(box: PlotBox, at: 'top' | 'bottom', limitY: number | null): number {
  const base = at === 'top' ? box.top + ASCENT : box.bottom - 4;
  if (limitY === null || limitY < base - ASCENT - 1 || limitY > base + DESCENT + 1) return base;
  return at === 'top'
    ? Math.min(box.bottom - 2, limitY + ASCENT + 3)
    : Math.max(box.top + ASCENT, limitY - DESCENT - 3);
}
