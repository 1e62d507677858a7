// A process's stacks over its series: the timeline's top stacks as lines (the worker's `stackSeries`: stacks with the
// same visible frames are one line, the top N by peak, the rest as "other stacks") and one stack's panel (`stack`:
// its frames, its series summed over the row's members, and its verdict in the job-wide ranking).

import type { ProcessSeries } from '../model/model.js';
import { teardownIndex } from '../model/series-end.js';
import type { ViewOptions } from '../model/vocab.js';
import type { FrameInfo } from '../frames/catalog.js';
import { legendLabel, stackName } from './labels.js';
import { stackVerdict, type StackVerdict } from './suspects.js';
import type { QuerySession } from './session.js';

export interface StackSeries {
  stackIds: number[];
  labels: string[];
  /** values[k][snapshot] for stack k; the last row is "other" */
  values: number[][];
}

export interface StackDetail {
  stackId: number;
  /** leaf first, after mode filtering; allocator frames included and flagged; `fold`: the index of the run of
   *  folded frames (interpreter, import machinery) the frame belongs to in the python-first view */
  frames: (FrameInfo & { hidden: boolean; fold?: number })[];
  series: number[];
  /** index of the exit dump after teardown in `series` (a marked point, not the series' end), −1 when none */
  exitDump?: number;
  baseBytes: number;
  targetBytes: number;
  /** the stack's verdict in the job-wide ranking (core/stats/patterns.ts), absent in reports */
  verdict?: StackVerdict;
}

/** The top `n` rows of stacks by their peak over the series, each as a line, and the rest summed as the last line. */
export function stackSeries(s: QuerySession, i: number, n: number, view: ViewOptions): StackSeries {
  const p = s.values(i, view);
  const table = s.catalog(i);
  if (p.snapshots.length === 0) return { stackIds: [], labels: [], values: [] };
  // stacks with the same visible frames in this view are one series
  const groupOf = new Int32Array(p.stacks.count).fill(-1);
  const groupKey = new Map<string, number>();
  const rep: number[] = [];
  const group = (id: number): number => {
    let g = groupOf[id];
    if (g < 0) {
      const k = table.stackKeys(id, view).join(',');
      g = groupKey.get(k) ?? -1;
      if (g < 0) {
        g = rep.length;
        rep.push(id);
        groupKey.set(k, g);
      }
      groupOf[id] = g;
    }
    return g;
  };
  // top-N groups by peak bytes over the series
  let sums: Float64Array<ArrayBuffer> = new Float64Array(64);
  let peak: Float64Array<ArrayBuffer> = new Float64Array(64);
  for (const snap of p.snapshots) {
    sums.fill(0);
    for (let j = 0; j < snap.stackIds.length; j++) {
      if (table.dropped(snap.stackIds[j], view)) continue;
      const g = group(snap.stackIds[j]);
      if (g >= sums.length) {
        const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
          const b = new Float64Array(Math.max(g + 1, a.length * 2));
          b.set(a);
          return b;
        };
        sums = grow(sums);
        peak = grow(peak);
      }
      sums[g] += snap.liveBytes[j];
    }
    for (let g = 0; g < rep.length; g++) if (sums[g] > peak[g]) peak[g] = sums[g];
  }
  const top = Array.from({ length: rep.length }, (_, g) => g)
    .sort((x, y) => peak[y] - peak[x])
    .slice(0, n);
  const slot = new Map<number, number>();
  top.forEach((g, k) => slot.set(g, k));
  const values: number[][] = Array.from({ length: top.length + 1 }, () =>
    new Array<number>(p.snapshots.length).fill(0),
  );
  p.snapshots.forEach((snap, si) => {
    for (let j = 0; j < snap.stackIds.length; j++) {
      if (groupOf[snap.stackIds[j]] < 0) continue; // filtered out
      const k = slot.get(groupOf[snap.stackIds[j]]);
      values[k === undefined ? top.length : k][si] += snap.liveBytes[j];
    }
  });
  const labels = top.map((g) => legendLabel(stackName(table, table.stackKeys(rep[g], view), view.mode)));
  labels.push('other stacks');
  return { stackIds: top.map((g) => rep[g]), labels, values };
}

function valueIn(p: ProcessSeries, snapshot: number, stackId: number): number {
  const snap = p.snapshots[snapshot];
  if (!snap) return 0;
  const ids = snap.stackIds;
  for (let j = 0; j < ids.length; j++) if (ids[j] === stackId) return snap.liveBytes[j];
  return 0;
}

export interface StackRequest {
  proc: number;
  stackId: number;
  /** the row's stacks (the series sums them); the stack alone when empty or absent */
  members?: number[];
  base: number;
  target: number;
  view: ViewOptions;
}

/** One stack's panel: its frames in the view's mode, its row's series, and its verdict. */
export function stackDetail(s: QuerySession, req: StackRequest): StackDetail {
  const { proc: i, stackId, base, target, view } = req;
  const p = s.values(i, view);
  const frames = s.catalog(i).stackDetail(stackId, view.mode);
  const ids = req.members && req.members.length > 0 ? req.members : [stackId];
  const series = p.snapshots.map((_, si) => ids.reduce((sum, id) => sum + valueIn(p, si, id), 0));
  const verdict = stackVerdict(s, i, stackId);
  return {
    stackId,
    frames,
    series,
    exitDump: teardownIndex(s.proc(i)),
    baseBytes: series[base] ?? 0,
    targetBytes: series[target] ?? 0,
    ...(verdict ? { verdict } : {}),
  };
}
