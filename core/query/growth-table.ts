// The Growth tab (the worker's `growth` answer): the change between two snapshots of one process as rows of stacks
// (core/query/rows.ts: same visible frames, one row, σ summed), each labelled and with its steady growth over the
// series, and the per-function rows (core/query/functions.ts).

import type { DeltaStatus } from '../stats/diff.js';
import type { FrameGroup, ViewOptions } from '../model/vocab.js';
import { diffRows } from './rows.js';
import { catalogParts, sameFramesKey } from './row-key.js';
import { functionRows, type FunctionRow } from './functions.js';
import { stackName } from './labels.js';
import type { QuerySession } from './session.js';

export interface StackRow {
  /** the representative stack (largest |Δ|) of the rows merged here */
  stackId: number;
  /** every stack shown as this row: stacks whose visible frames are the same in this view (allocator frames
   *  hidden, Python-only or native-only) are one row */
  members: number[];
  label: string;
  /** caller chain of the label, short */
  context: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** `file:line` of the naming frame (core/frames/stack-labels.ts callSite); absent in old reports */
  site?: string | null;
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  deltaPct: number;
  baseObjects: number;
  targetObjects: number;
  status: DeltaStatus;
  /** steadiness of growth over the whole series (core/stats/growth.ts), summed over the members */
  steadiness: number;
  slope: number;
  growingFraction: number;
  /** 1σ of deltaBytes from the sampling model (Var_base + Var_target) */
  sigmaDeltaBytes: number;
  /** |Δ| < 2σ: sampling alone can explain it (greyed) */
  withinNoise: boolean;
}

export interface GrowthResult {
  /** the request it answers */
  proc: number;
  pid: number | null;
  base: number;
  target: number;
  stacks: StackRow[];
  stackCount: number;
  functions: FunctionRow[];
  /** functions before the cut to the request's functionLimit (absent: none were cut) */
  functionCount?: number;
  baseTotal: number;
  targetTotal: number;
}

export interface GrowthRequest {
  proc: number;
  base: number;
  target: number;
  view: ViewOptions;
  /** rows of the stack table */
  limit: number;
  /** rows of the by-function table (by Δ total), `limit` when absent */
  functionLimit?: number;
}

export function growthTable(s: QuerySession, req: GrowthRequest): GrowthResult {
  const { proc: i, base, target, view } = req;
  const p = s.values(i, view);
  const table = s.catalog(i);
  const g = s.steadiness(i, view);
  // σ of jemalloc's sampling is of live bytes: other sample types get none (no row is greyed as noise)
  const liveSample = (view.sample ?? 'inuse_space') === 'inuse_space';
  // one row per visible stack: stacks that differ only in hidden frames (allocator paths, native frames in the
  // Python view, Python frames in the native view) are summed
  const { rows: dataRows, deltas } = diffRows(p, base, target, {
    key: sameFramesKey(catalogParts(table, view)),
    sigma: liveSample,
    order: 'magnitude',
  });
  const rows: StackRow[] = dataRows.map((r) => {
    const l = stackName(table, table.stackKeys(r.stackId, view), view.mode);
    let steadiness = 0;
    let slope = 0;
    let growingFraction = 0;
    for (const id of r.members) {
      const gi = g.get(id);
      steadiness += gi?.steadiness ?? 0;
      slope += gi?.slope ?? 0;
      growingFraction = Math.max(growingFraction, gi?.growingFraction ?? 0);
    }
    const deltaPct = r.baseBytes > 0 ? (100 * r.deltaBytes) / r.baseBytes : r.targetBytes > 0 ? Infinity : 0;
    return {
      stackId: r.stackId,
      members: r.members,
      label: l.label,
      context: l.context,
      frameGroup: l.group,
      site: l.site,
      baseBytes: r.baseBytes,
      targetBytes: r.targetBytes,
      deltaBytes: r.deltaBytes,
      deltaPct,
      baseObjects: r.baseObjects,
      targetObjects: r.targetObjects,
      status: r.status,
      steadiness,
      slope,
      growingFraction,
      sigmaDeltaBytes: r.sigmaDeltaBytes,
      withinNoise: r.withinNoise,
    };
  });
  const fn = functionRows(table, deltas, view);
  return {
    proc: i,
    pid: p.pid,
    base,
    target,
    stacks: rows.slice(0, req.limit),
    stackCount: rows.length,
    functions: fn.rows.slice(0, req.functionLimit ?? req.limit),
    functionCount: fn.rows.length,
    baseTotal: fn.baseTotal,
    targetTotal: fn.targetTotal,
  };
}
