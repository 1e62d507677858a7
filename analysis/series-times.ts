// Capture times of a series, for slopes per second. Interval dumps fire on allocation volume, not on a
// clock, so the only time source here is the files' mtimes, and only when they are usable: present
// for every snapshot, distinct and increasing with the sequence (a copy that reset them, or a
// filesystem with coarse mtimes, gives none). One small function so a better source
// (analysis/snapshot-time.ts, capture times written by the capture library) can replace it.

import type { Snapshot } from './model.js';

export interface SeriesTimes {
  /** seconds since the first snapshot, one per snapshot given; null when the times are not usable */
  seconds: Float64Array | null;
  /** why there are no times (null when there are) */
  note: string | null;
}

export function seriesTimes(snapshots: readonly Snapshot[]): SeriesTimes {
  if (snapshots.length < 2) return { seconds: null, note: 'one snapshot: no time span' };
  const t0 = snapshots[0].mtimeMs;
  const out = new Float64Array(snapshots.length);
  for (let i = 0; i < snapshots.length; i++) {
    const m = snapshots[i].mtimeMs;
    if (m === null || t0 === null) return { seconds: null, note: 'no file modification times' };
    if (i > 0 && m <= snapshots[i - 1].mtimeMs!) return { seconds: null, note: 'file modification times are not distinct and increasing with the sequence (copied without them?)' };
    out[i] = (m - t0) / 1000;
  }
  return { seconds: out, note: null };
}
