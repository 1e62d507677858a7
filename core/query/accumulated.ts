// accumulatedBytes/accumulatedObjects (prof_accum) of a row's records, where the dump has them.

import type { Snapshot } from '../model/model.js';

/** accumulatedBytes/accumulatedObjects of records of a snapshot, where the dump has them. */
export function accumulatedOf(
  s: Snapshot,
  records: readonly number[],
): { accumulatedBytes?: number; accumulatedObjects?: number } {
  if (!s.hasAccumulated || !s.accumBytes || !s.accumObjects) return {};
  return {
    accumulatedBytes: sumRecords(s.accumBytes, records),
    accumulatedObjects: sumRecords(s.accumObjects, records),
  };
}

/** The same for stacks looked up by id (0 for a stack absent from the snapshot). */
export function accumulatedByStack(
  s: Snapshot,
): (stackIds: readonly number[]) => { accumulatedBytes?: number; accumulatedObjects?: number } {
  if (!s.hasAccumulated || !s.accumBytes || !s.accumObjects) return () => ({});
  const record = new Map<number, number>();
  s.stackIds.forEach((id, r) => record.set(id, r));
  return (ids) =>
    accumulatedOf(
      s,
      ids.flatMap((id) => record.get(id) ?? []),
    );
}

export function sumRecords(a: ArrayLike<number>, records: readonly number[]): number {
  let t = 0;
  for (const r of records) t += a[r];
  return t;
}
