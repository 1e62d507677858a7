// What every export starts from: the stacks of one snapshot of one process with their unbiased values,
// and integer weights for formats that need whole numbers (rounded so that they still sum to the total).

import type { ProcessSeries } from '../model/model.js';
import type { Frame, StackDescriber } from '../frames/describe.js';
import { visibleFrames } from '../frames/view.js';
import { labelHost, pidText } from '../model/process-host.js';

export interface ExportInput {
  proc: ProcessSeries;
  /** index into proc.snapshots */
  snapshotIndex: number;
  frames: StackDescriber;
}

export interface ExportSample {
  stackId: number;
  /** visible frames, leaf first */
  frames: Frame[];
  bytes: number;
  objects: number;
  /** rounded so that Σ intBytes = round(Σ bytes) (largest remainder) */
  intBytes: number;
  intObjects: number;
  /** accumulated (allocated since start) values, rounded the same way; null when the dump has none */
  intAccumBytes: number | null;
  intAccumObjects: number | null;
}

export interface SampleOptions {
  showAllocator?: boolean;
}

/**
 * Rounds values to integers whose sum is round(Σ values): floor each, then give the remaining units to the largest
 * fractional parts (ties by position, so the result is deterministic). Negative values (a delta profile's, what
 * its window freed) round the same way and stay negative, as pprof keeps them.
 */
export function roundPreservingSum(values: ArrayLike<number>): number[] {
  const n = values.length;
  const out = new Array<number>(n);
  let sum = 0;
  let floorSum = 0;
  const frac: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = Number.isFinite(values[i]) ? values[i] : 0;
    sum += v;
    out[i] = Math.floor(v);
    floorSum += out[i];
    frac.push(i);
  }
  let left = Math.round(sum) - floorSum;
  frac.sort((a, b) => values[b] - Math.floor(values[b]) - (values[a] - Math.floor(values[a])) || a - b);
  for (let k = 0; left > 0 && k < frac.length; k++, left--) out[frac[k]]++;
  return out;
}

/** The snapshot's stacks with values, in stack order of the snapshot's columns. */
export function snapshotSamples(input: ExportInput, options: SampleOptions = {}): ExportSample[] {
  const { proc, snapshotIndex } = input;
  const s = proc.snapshots[snapshotIndex];
  if (!s) throw new RangeError(`snapshot index ${snapshotIndex} out of range (0..${proc.snapshots.length - 1})`);
  const ib = roundPreservingSum(s.liveBytes);
  const io = roundPreservingSum(s.liveObjects);
  const acc = s.hasAccumulated && s.accumBytes && s.accumObjects;
  const ab = acc && s.accumBytes ? roundPreservingSum(s.accumBytes) : null;
  const ao = acc && s.accumObjects ? roundPreservingSum(s.accumObjects) : null;
  const out: ExportSample[] = [];
  for (let i = 0; i < s.stackIds.length; i++) {
    const id = s.stackIds[i];
    if (input.frames.dropped?.(id)) continue; // left out by the view's filters (the integer rounding is of the whole)
    out.push({
      stackId: id,
      frames: visibleFrames(input.frames.frames(id), !(options.showAllocator ?? false)),
      bytes: s.liveBytes[i],
      objects: s.liveObjects[i],
      intBytes: ib[i],
      intObjects: io[i],
      intAccumBytes: ab ? ab[i] : null,
      intAccumObjects: ao ? ao[i] : null,
    });
  }
  return out;
}

/** A short name for a process in multi-process exports: `jeprof 12`, `jeprof node-a:12` where pids repeat among them. */
export function processLabel(proc: ProcessSeries, among: readonly ProcessSeries[] = [proc]): string {
  return proc.pid !== null ? `${proc.prefix || 'pid'} ${pidText(proc.pid, labelHost(among, proc))}` : proc.key;
}
