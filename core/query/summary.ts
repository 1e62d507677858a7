// Process and snapshot facts as data, for every front-end that lists a job (`heaplens summary|top|diff|growth|
// binaries --json`, the report): what was read, how complete it is, and how each process ended.

import type { Job, ProcessSeries, Snapshot } from '../model/model.js';
import { processFates } from '../stats/process-fate.js';
import { processName } from '../model/process-name.js';
import { dumpTrigger } from '../model/dump-trigger.js';
import { processHost } from '../model/process-host.js';

/** One snapshot: its file, totals, sampling, completeness and threads. */
export function snapshotFacts(s: Snapshot) {
  return {
    file: s.file,
    seq: s.seq,
    /** as recorded: the capture context's trigger (rss-step, cgroup-fraction, …), else the file name's */
    trigger: dumpTrigger(s),
    ...(s.context?.triggerFraction != null ? { triggerFraction: s.context.triggerFraction } : {}),
    liveBytes: s.live.bytes,
    liveObjects: s.live.objects,
    ...(s.hasAccumulated ? { accumulatedBytes: s.accumulated.bytes, accumulatedObjects: s.accumulated.objects } : {}),
    samplePeriod: s.samplePeriod,
    format: s.format,
    truncated: s.truncated !== null,
    complete: s.complete,
    headerLiveBytes: s.headerLiveBytes,
    ...(s.truncated ? { truncatedAt: s.truncated } : {}),
    threads: s.threads.map((t) => ({ uid: t.uid, name: t.name, liveBytes: t.live.bytes, liveObjects: t.live.objects })),
  };
}

export type SnapshotFacts = ReturnType<typeof snapshotFacts>;

// the fates are of the whole job (a parent's end is read from its children): computed once per job
const fatesOf = new WeakMap<Job, ReturnType<typeof processFates>>();

/** One process: who it is, whether it has maps, and (given its job) how it ended. */
export function processFacts(p: ProcessSeries, job?: Job) {
  let fates = job ? fatesOf.get(job) : undefined;
  if (job && !fates) {
    fates = processFates(job);
    fatesOf.set(job, fates);
  }
  const fate = job && fates ? fates[job.processes.indexOf(p)] : null;
  return {
    key: p.key,
    pid: p.pid,
    host: processHost(p),
    prefix: p.prefix,
    name: processName(p),
    endedWithoutFinalDump: p.endedWithoutFinalDump,
    hasMaps: p.maps !== null,
    ...(fate ? { lastCompleteSeq: fate.lastCompleteSeq, killed: fate.killed, killedEvidence: fate.evidence } : {}),
  };
}

export type ProcessFacts = ReturnType<typeof processFacts>;
