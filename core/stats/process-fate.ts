// How each process of a job ended: with a final dump (exited normally), or apparently killed —
// its last dump cut off mid-write, no final dump while a sibling wrote one, or its dumps stopped
// well before its siblings'. The OOM killer leaves no mark in the dumps themselves, so these are
// the only evidence in a folder of dumps (a kernel log would pin the victim; not read here).

import { revealControls } from '../model/display-text.js';
import type { Job, ProcessSeries } from '../model/model.js';
import { lastCompleteIndex } from '../model/snapshot-status.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { writesFinalDump } from '../model/process-builder.js';

/**
 * A process "ended before its siblings" when its last dump is older than the job's last dump by more
 * than this many of its own median dump intervals (and at least END_GAP_MIN_S): one missed interval
 * is ordinary jitter, several mean the process stopped while the others went on.
 */
export const END_GAP_INTERVALS = 3;
export const END_GAP_MIN_S = 10;

export interface ProcessFate {
  process: string;
  pid: number | null;
  /** index and sequence of the last complete snapshot (null seq when names have none; −1 index with no snapshot) */
  lastCompleteIndex: number;
  lastCompleteSeq: number | null;
  killed: boolean;
  /** the evidence, in words (empty for a process that exited with a final dump) */
  evidence: string[];
  /** time of the last dump (capture clock, else a plausible mtime), when known */
  endedAtMs: number | null;
}

/** The process's dump times (capture clock, else plausible mtimes), or null without a wall-clock axis. */
function dumpTimes(p: ProcessSeries): number[] | null {
  const t = seriesTimes(p);
  return t.axis === 'wall' ? t.snapshots.map((s) => s.timeMs as number) : null;
}

function medianInterval(t: readonly number[]): number | null {
  const d = t
    .slice(1)
    .map((x, i) => x - t[i])
    .filter((x) => x > 0)
    .sort((a, b) => a - b);
  return d.length > 0 ? d[d.length >> 1] : null;
}

export function processFates(job: Pick<Job, 'processes'>): ProcessFate[] {
  // only jemalloc dumps carry this evidence: a pprof profile, a massif file or a memleak log beside them has no
  // final dump to miss, and its times are not the job's dump schedule (unrelated captures are not "killed")
  const dumps = job.processes.map((p) => p.snapshots.some((s) => writesFinalDump(s.format)));
  const anyFinal = job.processes.some((p, i) => dumps[i] && !p.endedWithoutFinalDump);
  const times = job.processes.map((p, i) => (dumps[i] ? dumpTimes(p) : null));
  const lastTimes = times.map((t) => (t && t.length > 0 ? t[t.length - 1] : null));
  const known = lastTimes.filter((t): t is number => t !== null);
  const jobEnd = known.length > 1 ? Math.max(...known) : null;
  return job.processes.map((p, i) => {
    const li = lastCompleteIndex(p);
    const last = p.snapshots[p.snapshots.length - 1];
    const evidence: string[] = [];
    if (last && !last.complete && dumps[i])
      // the file name is shown by the CLI and the app alike: marked once here (bidi overrides, escapes)
      evidence.push(
        `its last dump (${revealControls(last.file)}) is cut off: the process was likely stopped while jemalloc wrote it`,
      );
    if (p.endedWithoutFinalDump && anyFinal)
      evidence.push('no final dump, while other processes of the job wrote theirs');
    const end = lastTimes[i];
    const step = times[i] ? medianInterval(times[i]!) : null;
    if (jobEnd !== null && end !== null && step !== null) {
      const gap = (jobEnd - end) / 1000;
      if (gap > Math.max(END_GAP_MIN_S, (END_GAP_INTERVALS * step) / 1000))
        evidence.push(
          `its dumps stopped ${Math.round(gap)} s before the job's last dump (it dumped every ~${Math.round(step / 1000)} s)`,
        );
    }
    if (p.endedWithoutFinalDump && !anyFinal && evidence.length > 0) evidence.push('no final dump');
    return {
      process: p.key,
      pid: p.pid,
      lastCompleteIndex: li,
      lastCompleteSeq: li >= 0 ? p.snapshots[li].seq : null,
      // no final dump alone is not evidence when no process wrote one (prof_final off, or the whole job was stopped)
      killed: evidence.length > 0,
      evidence,
      endedAtMs: end,
    };
  });
}
