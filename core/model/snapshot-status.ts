// Complete and cut snapshots. A dump cut off while jemalloc was writing it (a process killed
// mid-dump) keeps only part of its records, so its record sum understates the heap; jemalloc 5.3
// writes the `t*` totals first, so the header of a cut dump still gives the total. Views take the
// last complete snapshot as their default target, and a cut one's total from its header.

import type { ProcessSeries, Snapshot } from './model.js';

/** The snapshot's live-bytes total: the sum of its records, or its header's for a cut dump that has one. */
export function snapshotTotalBytes(s: Snapshot): number {
  return totalOfDump(s.complete, s.headerLiveBytes, s.live.bytes);
}

/** The same rule over the figures apart (a summary of a snapshot carries them without the model's records). */
export function totalOfDump(complete: boolean, headerLiveBytes: number | null, recordBytes: number): number {
  return !complete && headerLiveBytes !== null ? headerLiveBytes : recordBytes;
}

/** Index of the last snapshot whose records are complete; the last snapshot when none is (−1 for none at all). */
export function lastCompleteIndex(proc: Pick<ProcessSeries, 'snapshots'>): number {
  for (let i = proc.snapshots.length - 1; i >= 0; i--) if (proc.snapshots[i].complete) return i;
  return proc.snapshots.length - 1;
}

/** Indexes of the complete snapshots, in order (the series that growth patterns are computed over). */
export function completeIndexes(proc: Pick<ProcessSeries, 'snapshots'>): number[] {
  const out: number[] = [];
  proc.snapshots.forEach((s, i) => {
    if (s.complete) out.push(i);
  });
  return out;
}

/**
 * A massif snapshot whose tree massif did not keep: its heap is one row (massif keeps trees for a few snapshots;
 * the last ones are often totals only).
 */
export function treeless(s: Pick<Snapshot, 'massif'>): boolean {
  return s.massif?.tree === 'empty';
}

/** The last snapshot, passing over massif's snapshots without a tree (−1 for none at all): views open on it. */
export function lastShownIndex(proc: { readonly snapshots: readonly Snapshot[] }): number {
  for (let i = proc.snapshots.length - 1; i >= 0; i--) if (!treeless(proc.snapshots[i])) return i;
  return proc.snapshots.length - 1;
}

/** massif's peak snapshot where it marked one, else the snapshot with the most live bytes (−1 for none). */
export function peakIndex(proc: { readonly snapshots: readonly Snapshot[] }): number {
  const marked = proc.snapshots.findIndex((s) => s.massif?.tree === 'peak');
  if (marked >= 0) return marked;
  let best = -1;
  proc.snapshots.forEach((s, i) => {
    if (best < 0 || s.live.bytes > proc.snapshots[best].live.bytes) best = i;
  });
  return best;
}

/**
 * The snapshot a name picks (`last`, `first`, `peak` or a sequence number, as `--snapshot`, `--base`, `--target` and the
 * report's selection say it): its index, or −1 when the process has no such snapshot.
 */
export function snapshotByName(proc: { readonly snapshots: readonly Snapshot[] }, which: string): number {
  if (which === 'last') return lastShownIndex(proc);
  if (which === 'first') return 0;
  if (which === 'peak') return peakIndex(proc);
  if (!/^\d+$/.test(which)) return -1;
  return proc.snapshots.findIndex((s) => s.seq === Number(which));
}
