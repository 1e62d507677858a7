// Dense per-stack vectors of one snapshot (index = stack id), for diffs and series arithmetic.

import type { ProcessSeries, Snapshot } from './model.js';

export type Measure = 'liveBytes' | 'liveObjects';

export function denseValues(proc: ProcessSeries, snap: Snapshot, measure: Measure = 'liveBytes'): Float64Array {
  const out = new Float64Array(proc.stacks.count);
  const col = snap[measure];
  const ids = snap.stackIds;
  for (let i = 0; i < ids.length; i++) out[ids[i]] += col[i];
  return out;
}
