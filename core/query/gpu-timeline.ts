// A PyTorch snapshot's device over time, as a timeline draws it: reserved, allocated and cached bytes (the caching
// allocator's own figures, ProcessSeries.gpu), the record_function spans in lanes, the out-of-memory events and the
// peak the views open on. Long traces are cut to at most `maxPoints` points per line, each kept point the highest of
// its bucket (a chart of the envelope: no peak is drawn lower than it was).

import type { ProcessSeries } from '../model/model.js';

export interface GpuSpanView {
  name: string;
  startMs: number;
  /** null: open when the snapshot was taken (drawn to the end of the trace) */
  endMs: number | null;
  /** the lane: spans inside another span are one lane below it (record_function nests) */
  lane: number;
}

export interface GpuTimelineView {
  device: number;
  /** ms since the epoch (time_us / 1000), or the trace entry's index when the file has no times */
  timeMs: number[];
  timed: boolean;
  allocated: number[];
  reserved: number[];
  cached: number[];
  spans: GpuSpanView[];
  ooms: { timeMs: number | null; size: number; deviceFree: number }[];
  /** the trace's peak of allocated bytes (exact, whatever the cut) and the snapshot views open on */
  peak: { timeMs: number; allocated: number; snapshot: number | null } | null;
}

/** The device's timeline, null for a series that is not a PyTorch snapshot's. */
export function gpuTimeline(p: ProcessSeries, maxPoints = 2000): GpuTimelineView | null {
  const g = p.gpu;
  if (!g) return null;
  const tl = g.timeline;
  const n = tl.timeMs.length;
  const keep: number[] = [];
  if (n <= maxPoints) for (let i = 0; i < n; i++) keep.push(i);
  else {
    // the point of each bucket with the most reserved bytes, and its allocated peak's point: reserved ≥ allocated
    const per = n / maxPoints;
    for (let b = 0; b < maxPoints; b++) {
      const lo = Math.floor(b * per);
      const hi = Math.min(n, Math.floor((b + 1) * per));
      let r = lo;
      let a = lo;
      for (let i = lo; i < hi; i++) {
        if (tl.reserved[i] > tl.reserved[r]) r = i;
        if (tl.allocated[i] > tl.allocated[a]) a = i;
      }
      for (const i of a === r ? [a] : a < r ? [a, r] : [r, a]) if (keep[keep.length - 1] !== i) keep.push(i);
    }
    if (keep[keep.length - 1] !== n - 1) keep.push(n - 1);
  }
  let peakAt = -1;
  for (let i = 0; i < n; i++) if (peakAt < 0 || tl.allocated[i] > tl.allocated[peakAt]) peakAt = i;
  return {
    device: g.device,
    timeMs: keep.map((i) => tl.timeMs[i]),
    timed: n > 0 && tl.timeMs[0] > 1e9,
    allocated: keep.map((i) => tl.allocated[i]),
    reserved: keep.map((i) => tl.reserved[i]),
    cached: keep.map((i) => tl.cached[i]),
    spans: spanLanes(g.spans),
    ooms: g.ooms,
    peak:
      peakAt >= 0
        ? { timeMs: tl.timeMs[peakAt], allocated: tl.allocated[peakAt], snapshot: g.peakSnapshot ?? null }
        : null,
  };
}

/** Spans in start order, each in the first lane free at its start (a span inside another goes below it). */
function spanLanes(spans: readonly { name: string; startMs: number; endMs: number | null }[]): GpuSpanView[] {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  const laneEnds: number[] = [];
  return sorted.map((s) => {
    let lane = laneEnds.findIndex((end) => end <= s.startMs);
    if (lane < 0) lane = laneEnds.length;
    laneEnds[lane] = s.endMs ?? Infinity;
    return { name: s.name, startMs: s.startMs, endMs: s.endMs, lane };
  });
}
