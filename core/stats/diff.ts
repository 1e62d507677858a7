// Diff of two snapshots of one process, per stack: what grew, what is new, what is gone.

import type { ProcessSeries } from '../model/model.js';
import { denseValues } from '../model/dense.js';

export type DeltaStatus = 'new' | 'gone' | 'grown' | 'shrunk' | 'same';

export interface StackDelta {
  stackId: number;
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  baseObjects: number;
  targetObjects: number;
  deltaObjects: number;
  status: DeltaStatus;
}

/** Every stack live in either snapshot, largest growth first. */
export function diffSnapshots(proc: ProcessSeries, baseIndex: number, targetIndex: number): StackDelta[] {
  const base = proc.snapshots[baseIndex];
  const target = proc.snapshots[targetIndex];
  if (!base || !target) throw new RangeError(`snapshot index out of range (0..${proc.snapshots.length - 1})`);
  const bb = denseValues(proc, base, 'liveBytes');
  const bo = denseValues(proc, base, 'liveObjects');
  const tb = denseValues(proc, target, 'liveBytes');
  const to = denseValues(proc, target, 'liveObjects');
  const out: StackDelta[] = [];
  for (let id = 0; id < proc.stacks.count; id++) {
    const inBase = bo[id] !== 0 || bb[id] !== 0;
    const inTarget = to[id] !== 0 || tb[id] !== 0;
    if (!inBase && !inTarget) continue;
    const deltaBytes = tb[id] - bb[id];
    const status: DeltaStatus = !inBase
      ? 'new'
      : !inTarget
        ? 'gone'
        : deltaBytes > 0
          ? 'grown'
          : deltaBytes < 0
            ? 'shrunk'
            : 'same';
    out.push({
      stackId: id,
      baseBytes: bb[id],
      targetBytes: tb[id],
      deltaBytes,
      baseObjects: bo[id],
      targetObjects: to[id],
      deltaObjects: to[id] - bo[id],
      status,
    });
  }
  out.sort((a, b) => b.deltaBytes - a.deltaBytes || a.stackId - b.stackId);
  return out;
}

export interface DiffTotals {
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  newStacks: number;
  goneStacks: number;
}

export function diffTotals(deltas: readonly StackDelta[]): DiffTotals {
  const t: DiffTotals = { baseBytes: 0, targetBytes: 0, deltaBytes: 0, newStacks: 0, goneStacks: 0 };
  for (const d of deltas) {
    t.baseBytes += d.baseBytes;
    t.targetBytes += d.targetBytes;
    t.deltaBytes += d.deltaBytes;
    if (d.status === 'new') t.newStacks++;
    if (d.status === 'gone') t.goneStacks++;
  }
  return t;
}
