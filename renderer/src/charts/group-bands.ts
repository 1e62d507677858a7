// The timeline of a job of many processes (issue 49 item 4): each group of processes (host → role/command,
// core/query/process-groups.ts) as a band — the area from its median to its 90th percentile and a dashed line at
// its maximum, at each point of its time (core/query/group-bands.ts) — under the lines of the processes that
// matter. Drawn by the timeline (components/Timeline.svelte) in its own layer.

import { area, line, type Selection } from 'd3';
import type { ProcessGroup } from '../../../core/query/process-groups.ts';
import { groupBand, type BandPoint } from '../../../core/query/group-bands.ts';
import type { ProcessSummary } from '../lib/protocol.ts';
import type { Frame } from './plot-frame.ts';
import { dumpHeight } from './bytes-axis.ts';

export interface GroupBand {
  key: string;
  label: string;
  count: number;
  points: BandPoint[];
}

/** Muted colours, one per group in turn: bands are the background, the lines of the processes that matter the figure. */
const BAND_COLORS = ['#4e79a7', '#59a14f', '#9c755f', '#76b7b2', '#b07aa1', '#edc948', '#bab0ac', '#86bcb6'];

/** Bands in px along x (each process's dumps at their x on the timeline), bytes up. */
export function groupBands(
  groups: readonly ProcessGroup[],
  processes: readonly ProcessSummary[],
  xOf: (p: ProcessSummary, snapshot: number) => number,
  steps: number,
): GroupBand[] {
  return groups.map((g) => {
    const members = g.processIndexes
      .map((i) => processes[i])
      .filter((p): p is ProcessSummary => p !== undefined)
      .map((p) => {
        // the series only: an exit dump after teardown is not the process's memory
        const snaps = p.snapshots.filter((s) => !s.afterTeardown);
        return { xs: snaps.map((s) => xOf(p, s.index)), ys: snaps.map(dumpHeight) };
      });
    const label = `${g.host ?? 'no host'} · ${g.role === 'process' ? g.command : `${g.role}s: ${g.command}`}`;
    return { key: g.key, label, count: g.processIndexes.length, points: groupBand(members, steps) };
  });
}

type G = Selection<SVGGElement, unknown, null, undefined>;

/** Draws the bands into `g` (behind the lines): median–p90 filled, median a line, max dashed; each titled. */
export function drawGroupBands(g: G, bands: readonly GroupBand[], y: (v: number) => number, frame: Frame): void {
  g.attr('class', 'group-bands');
  bands.forEach((b, k) => {
    if (b.points.length === 0) return;
    const color = BAND_COLORS[k % BAND_COLORS.length];
    const one = g
      .append('g')
      .attr('class', 'group-band')
      .attr('data-testid', 'timeline-band')
      .attr('data-key', b.key)
      .attr('data-count', String(b.count));
    one
      .append('title')
      .text(`${b.label}: ${b.count} processes — band from median to 90th percentile, dashed: the largest`);
    one
      .append('path')
      .attr('class', 'band-area')
      .attr(
        'd',
        area<BandPoint>()
          .x((p) => p.x)
          .y0((p) => y(p.median))
          .y1((p) => y(p.p90))(b.points) ?? '',
      )
      .attr('fill', color)
      .attr('fill-opacity', 0.22)
      .attr('stroke', 'none');
    const at = (v: (p: BandPoint) => number) =>
      line<BandPoint>()
        .x((p) => p.x)
        .y((p) => y(v(p)))(b.points) ?? '';
    one
      .append('path')
      .attr('class', 'band-median')
      .attr(
        'd',
        at((p) => p.median),
      )
      .attr('fill', 'none')
      .attr('stroke', color)
      .attr('stroke-width', 1.4)
      .attr('stroke-opacity', 0.85);
    one
      .append('path')
      .attr('class', 'band-max')
      .attr(
        'd',
        at((p) => p.max),
      )
      .attr('fill', 'none')
      .attr('stroke', color)
      .attr('stroke-opacity', 0.55)
      .attr('stroke-dasharray', '3 3');
  });
  // what the chart shows, in the plot's top-left corner
  g.append('text')
    .attr('class', 'band-note')
    .attr('x', frame.left + 4)
    .attr('y', frame.top + 10)
    .attr('font-size', 10)
    .attr('fill', 'var(--muted)')
    .text(
      `${bands.length} group${bands.length === 1 ? '' : 's'} as bands (median–p90, max dashed); lines: selected, killed, top holders, outliers`,
    );
}
