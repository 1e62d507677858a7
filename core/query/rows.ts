// Rows of stacks, answered once for `heaplens top`/`diff` and the app's Growth table (issue 18): stacks whose
// visible frames are the same (they differ only in frames the view hides, folds or does not distinguish) are one
// row, as in py-spy and pprof; a row's σ is the root of its members' summed sampling variances.

import type { ProcessSeries, Snapshot } from '../model/model.js';
import { diffSnapshots, diffTotals, type DeltaStatus, type DiffTotals, type StackDelta } from '../stats/diff.js';
import { denseVariances, withinNoise } from '../model/sampling-error.js';

/**
 * The row a stack belongs to in the view: stacks with equal keys are one row; null when the view drops the stack
 * (a filter, or nothing left to show). The front-end builds it from the view's frames (same visible frames, same key).
 */
export type RowKey = (stackId: number) => string | null;

/** One row of a snapshot's stacks (`heaplens top`). */
export interface SnapshotRow {
  /** the row's first stack (the heaviest by the sample's value) */
  stackId: number;
  /** every stack of the row, heaviest first */
  members: number[];
  /** the members' record indices in the snapshot */
  records: number[];
  /** the sample's value (live bytes for inuse_space) */
  value: number;
  liveBytes: number;
  liveObjects: number;
}

export interface SnapshotRows {
  rows: SnapshotRow[];
  /** the sample's value over every row the view keeps */
  shownTotal: number;
  /** rows left out because the sample's value is 0 in every one of them (the sample type counts nothing here) */
  zeroRows: number;
}

/**
 * A snapshot's stacks as rows, by the sample's value. `live` is the snapshot as read, `values` the same snapshot
 * with the sample's values in its columns (core/model/sample-type.ts; `live` itself for inuse_space).
 */
export function snapshotRows(live: Snapshot, values: Snapshot, key: RowKey): SnapshotRows {
  const order = [...live.stackIds.keys()].sort((a, b) => values.liveBytes[b] - values.liveBytes[a]);
  const byKey = new Map<string, SnapshotRow>();
  const rows: SnapshotRow[] = [];
  let shownTotal = 0;
  for (const r of order) {
    const id = live.stackIds[r];
    const k = key(id);
    if (k === null) continue;
    shownTotal += values.liveBytes[r];
    const row = byKey.get(k);
    if (row) {
      row.members.push(id);
      row.records.push(r);
      row.value += values.liveBytes[r];
      row.liveBytes += live.liveBytes[r];
      row.liveObjects += live.liveObjects[r];
    } else {
      const n: SnapshotRow = {
        stackId: id,
        members: [id],
        records: [r],
        value: values.liveBytes[r],
        liveBytes: live.liveBytes[r],
        liveObjects: live.liveObjects[r],
      };
      byKey.set(k, n);
      rows.push(n);
    }
  }
  // largest first by magnitude, as pprof -top orders a delta profile's negative rows; when the sample counts
  // nothing anywhere (in-use of a profile taken once all was freed), no rows of 0 but their number
  rows.sort((a, b) => Math.abs(b.value) - Math.abs(a.value) || b.value - a.value);
  if (rows.length > 0 && rows.every((r) => r.value === 0)) return { rows: [], shownTotal, zeroRows: rows.length };
  return { rows, shownTotal, zeroRows: 0 };
}

/** One row of the change between two snapshots (`heaplens diff`, the Growth table). */
export interface DiffRow {
  /** the member with the largest |Δ| (the row's representative: its frames label the row) */
  stackId: number;
  /** every stack of the row, in the order of diffSnapshots (largest growth first) */
  members: number[];
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  baseObjects: number;
  targetObjects: number;
  deltaObjects: number;
  status: DeltaStatus;
  /** 1σ of deltaBytes from jemalloc's sampling (√Σ Var_base + Var_target over the members); 0 without σ */
  sigmaDeltaBytes: number;
  /** |Δ| < 2σ: sampling alone can explain it */
  withinNoise: boolean;
}

export interface DiffRowsOptions {
  key: RowKey;
  /**
   * σ of sampling: only for live bytes (the model keeps no variance of the other sample types), so false for
   * them and no row is within noise.
   */
  sigma: boolean;
  /**
   * 'growth': largest growth first, shrinking stacks last (the CLI's "stacks by growth");
   * 'magnitude': largest |Δ| first, then the larger target (the Growth table's default, where a large free matters too)
   */
  order: 'growth' | 'magnitude';
}

export interface DiffRows {
  rows: DiffRow[];
  /** the stacks the view keeps, each once (for the per-function rows and exports) */
  deltas: StackDelta[];
  /** totals over the kept stacks: bytes, and new and gone stacks counted per stack */
  totals: DiffTotals;
}

/** The change from snapshot `base` to `target` of `p` (with the sample's values in its columns) as rows. */
export function diffRows(p: ProcessSeries, base: number, target: number, opts: DiffRowsOptions): DiffRows {
  const keyOf = new Map<number, string>();
  const deltas = diffSnapshots(p, base, target).filter((d) => {
    const k = opts.key(d.stackId);
    if (k === null) return false;
    keyOf.set(d.stackId, k);
    return true;
  });
  const varBase = opts.sigma ? denseVariances(p.stacks.count, p.snapshots[base]) : null;
  const varTarget = opts.sigma ? denseVariances(p.stacks.count, p.snapshots[target]) : null;
  const groups = new Map<string, DiffRow>();
  const repAbs = new Map<DiffRow, number>();
  for (const d of deltas) {
    const k = keyOf.get(d.stackId)!;
    let r = groups.get(k);
    if (!r) {
      r = {
        stackId: d.stackId,
        members: [],
        baseBytes: 0,
        targetBytes: 0,
        deltaBytes: 0,
        baseObjects: 0,
        targetObjects: 0,
        deltaObjects: 0,
        status: 'same',
        sigmaDeltaBytes: 0,
        withinNoise: false,
      };
      groups.set(k, r);
    }
    if (Math.abs(d.deltaBytes) > (repAbs.get(r) ?? -1)) {
      r.stackId = d.stackId;
      repAbs.set(r, Math.abs(d.deltaBytes));
    }
    r.members.push(d.stackId);
    r.baseBytes += d.baseBytes;
    r.targetBytes += d.targetBytes;
    r.baseObjects += d.baseObjects;
    r.targetObjects += d.targetObjects;
    // variances add (σ² here, its root below)
    if (varBase && varTarget) r.sigmaDeltaBytes += varBase[d.stackId] + varTarget[d.stackId];
  }
  const rows = [...groups.values()];
  for (const r of rows) {
    r.deltaBytes = r.targetBytes - r.baseBytes;
    r.deltaObjects = r.targetObjects - r.baseObjects;
    r.sigmaDeltaBytes = Math.sqrt(r.sigmaDeltaBytes);
    r.withinNoise = opts.sigma && withinNoise(r.deltaBytes, r.sigmaDeltaBytes);
    r.status = rowStatus(r);
  }
  if (opts.order === 'magnitude')
    rows.sort((a, b) => Math.abs(b.deltaBytes) - Math.abs(a.deltaBytes) || b.targetBytes - a.targetBytes);
  else rows.sort((a, b) => b.deltaBytes - a.deltaBytes || a.stackId - b.stackId);
  return { rows, deltas, totals: diffTotals(deltas) };
}

/** A row's status from its summed values: new (absent in the base), gone, or which way it moved. */
function rowStatus(r: DiffRow): DeltaStatus {
  const inBase = r.baseBytes !== 0 || r.baseObjects !== 0;
  const inTarget = r.targetBytes !== 0 || r.targetObjects !== 0;
  if (!inBase) return 'new';
  if (!inTarget) return 'gone';
  return r.deltaBytes > 0 ? 'grown' : r.deltaBytes < 0 ? 'shrunk' : 'same';
}
