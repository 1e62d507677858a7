// Where a process's series ends: the one rule every view, command and report reads its series by. A dump cut off
// mid-write is left out (its records are partial, snapshot-status.ts), and so is an exit dump written after
// teardown: jemalloc's prof_final dump is written by its atexit hook, which in a Python process runs after
// Py_Finalize freed the interpreter's objects, so the final total collapses against the last interval dump ("the
// leak stopped" when it did not). Such a dump is kept and shown as a marked point, never as the series' end.

import type { Job, ProcessSeries, Snapshot } from './model.js';
import { treeless } from './snapshot-status.js';

/** A final dump below this share of the last interval dump's total is a collapse… */
export const TEARDOWN_SHARE = 0.25;
/** …when the drop is at least this much (a small process's final dump may differ by noise). */
export const TEARDOWN_MIN_DROP_BYTES = 4 * 1024 * 1024;

/**
 * What the rule reads: the snapshots and whether Python frames were captured (non-null `pythonFrames`; a dataset
 * read without cells has both, its frame table still as JSON while its snapshots are read).
 */
export interface TeardownInput {
  readonly snapshots: readonly Snapshot[];
  readonly pythonFrames?: unknown;
}

export interface TeardownDump {
  processIndex: number;
  /** index of the exit dump in the process's snapshots (its last) */
  snapshotIndex: number;
  file: string;
  finalBytes: number;
  lastIntervalBytes: number;
  lastIntervalFile: string;
  note: string;
}

function isPython(p: TeardownInput): boolean {
  if ((p.pythonFrames ?? null) !== null) return true;
  const c = p.snapshots.find((s) => s.context)?.context;
  return /^python/.test(c?.comm ?? '') || /python/.test(c?.cmdline?.[0] ?? '');
}

/** The final dump of the process when it was written after the interpreter's teardown, else null. */
export function teardownDump(p: TeardownInput, processIndex: number): TeardownDump | null {
  const n = p.snapshots.length;
  if (n < 2) return null;
  const last = p.snapshots[n - 1];
  if (last.trigger !== 'final' || !last.complete || !isPython(p)) return null;
  let k = n - 2;
  while (k >= 0 && !p.snapshots[k].complete) k--;
  if (k < 0) return null;
  const prev = p.snapshots[k];
  const drop = prev.live.bytes - last.live.bytes;
  if (!(last.live.bytes < TEARDOWN_SHARE * prev.live.bytes && drop >= TEARDOWN_MIN_DROP_BYTES)) return null;
  const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;
  return {
    processIndex,
    snapshotIndex: n - 1,
    file: last.file,
    finalBytes: last.live.bytes,
    lastIntervalBytes: prev.live.bytes,
    lastIntervalFile: prev.file,
    note:
      `its final dump (${mib(last.live.bytes)}) was written at exit after Python freed its objects ` +
      `(${mib(prev.live.bytes)} in the last interval dump): kept, but the series ends at ${prev.file}`,
  };
}

/** The index of the process's exit dump after teardown, −1 when it has none. */
export function teardownIndex(p: TeardownInput): number {
  return teardownDump(p, 0)?.snapshotIndex ?? -1;
}

/** Indexes of the snapshots the series is made of: the complete ones, less an exit dump after teardown. */
export function seriesIndexes(p: TeardownInput): number[] {
  const skip = teardownIndex(p);
  const out: number[] = [];
  p.snapshots.forEach((s, i) => {
    if (s.complete && i !== skip) out.push(i);
  });
  return out;
}

/**
 * The snapshot the series ends at, every view's and command's default target: the last complete one that is not
 * an exit dump after teardown; the last snapshot when none is complete (−1 for none at all).
 */
export function seriesEndIndex(p: TeardownInput): number {
  const skip = teardownIndex(p);
  for (let i = p.snapshots.length - 1; i >= 0; i--) if (p.snapshots[i].complete && i !== skip) return i;
  return p.snapshots.length - 1;
}

/**
 * The snapshot a view or a command reads by default: the series' end, passing over massif's snapshots that kept
 * no tree (a row of totals), as the app's views open (the CLI's default, the report's target).
 */
export function defaultSnapshot(p: TeardownInput): number {
  let at = seriesEndIndex(p);
  while (at > 0 && treeless(p.snapshots[at])) at--;
  return at;
}

/**
 * The job as the series read it: each teardown dump left out of its process (the process otherwise the same
 * object), with the dumps left out.
 */
export function withoutTeardownDumps(job: Pick<Job, 'processes'>): {
  processes: ProcessSeries[];
  teardown: TeardownDump[];
} {
  const teardown: TeardownDump[] = [];
  const processes = job.processes.map((p, i) => {
    const t = teardownDump(p, i);
    if (!t) return p;
    teardown.push(t);
    return { ...p, snapshots: p.snapshots.slice(0, -1) };
  });
  return { processes, teardown };
}
