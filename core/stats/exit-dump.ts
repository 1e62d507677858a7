// Exit dumps written after teardown. jemalloc's prof_final dump is written by its atexit hook, which in a
// Python process runs after Py_Finalize freed the interpreter's objects: the final total then collapses
// against the last interval dump ("the leak stopped" when it did not). Such a dump is kept and shown, but the
// series that patterns, suspects and the post-mortem read ends at the last interval dump.

import type { Job, ProcessSeries } from '../model/model.js';
import { processHasPython } from '../frames/stack-labels.js';

/** A final dump below this share of the last interval dump's total is a collapse… */
export const TEARDOWN_SHARE = 0.25;
/** …when the drop is at least this much (a small process's final dump may differ by noise). */
export const TEARDOWN_MIN_DROP_BYTES = 4 * 1024 * 1024;

/** What the rule reads: the snapshots and whether Python frames were captured (a dataset read without cells has both). */
export type TeardownInput = Pick<ProcessSeries, 'snapshots'> & Partial<Pick<ProcessSeries, 'pythonFrames'>>;

export interface TeardownDump {
  processIndex: number;
  file: string;
  finalBytes: number;
  lastIntervalBytes: number;
  lastIntervalFile: string;
  note: string;
}

function isPython(p: TeardownInput): boolean {
  if (processHasPython(p)) return true;
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
    file: last.file,
    finalBytes: last.live.bytes,
    lastIntervalBytes: prev.live.bytes,
    lastIntervalFile: prev.file,
    note:
      `its final dump (${mib(last.live.bytes)}) was written at exit after Python freed its objects ` +
      `(${mib(prev.live.bytes)} in the last interval dump): kept, but the series for patterns, suspects and the ` +
      `post-mortem ends at ${prev.file}`,
  };
}

/**
 * The job as patterns should read it: each teardown dump left out of its series (the series otherwise the
 * same objects), with the dumps left out.
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
