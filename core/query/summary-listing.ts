// `heaplens summary` as the engine answers it (core/engine/api.ts 'summaryListing'): the --json document (every
// process with what the capture library recorded of it — identity, parent in the job, cgroup limit, time axis, a
// PyTorch snapshot's device — and each snapshot with its time, context and memory counters, the exit dump after
// teardown marked), and what the text shows besides (each snapshot's value of another sample type, the teardown
// dump's place). The CLI only formats this.

import type { GpuSeriesInfo, Job, LoadWarning, ProcessSeries } from '../model/model.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { memoryGap, processIdentity, processLimit, processParents } from '../model/memory-context.js';
import { processName } from '../model/process-name.js';
import { seriesMemory } from '../load/series-memory.js';
import { teardownDump } from '../model/series-end.js';
import { DEFAULT_SAMPLE_TYPE, sampleSeriesOrWarn, type SampleType } from '../model/sample-type.js';
import { processFacts, snapshotFacts } from './summary.js';

export interface SummaryRequest {
  /** a sample type whose value the text adds per snapshot (none for live bytes and objects, its own columns) */
  sample: SampleType | null;
}

/** Per-snapshot additions to the summary JSON, in the series' order. */
function snapshotContextFacts(p: ProcessSeries) {
  const times = seriesTimes(p);
  const mem = seriesMemory(p);
  return p.snapshots.map((s, i) => {
    const m = mem[i];
    const gap = memoryGap(m);
    const c = s.context ?? null;
    return {
      timeMs: times.snapshots[i].timeMs,
      timeSource: times.snapshots[i].source,
      ...(times.axis === 'wall' ? { secondsSinceFirst: times.x[i] } : {}),
      context: c
        ? {
            timeRealMs: c.timeRealMs,
            timeMonoMs: c.timeMonoMs,
            pid: c.pid,
            ppid: c.ppid,
            comm: c.comm,
            cmdline: c.cmdline,
            cmdlineCut: c.cmdlineCut,
            hostname: c.hostname,
            processStartMs: c.startRealMs,
            jemalloc: c.jemalloc,
            rss: c.rss,
            rssAnon: c.rssAnon,
            cgroup: c.cgroup,
            collectNs: c.costNs,
          }
        : null,
      memory: { ...m, gap },
    };
  });
}

/** Per-process additions to the summary JSON (identity, parent in the job, cgroup limit, time axis). */
function processContextFacts(p: ProcessSeries, parents: ReadonlyMap<string, string | null>) {
  const id = processIdentity(p);
  const t = seriesTimes(p);
  return {
    name: processName(p),
    comm: id?.comm ?? null,
    cmdline: id?.cmdline ?? null,
    ppid: id?.ppid ?? null,
    hostname: id?.hostname ?? null,
    nsPids: id?.nsPids ?? null,
    hostPid: id?.hostPid ?? null,
    pidNamespace: id?.pidNamespace ?? null,
    bootId: id?.bootId ?? null,
    startMs: id?.startMs ?? null,
    parentKey: parents.get(p.key) ?? null,
    limitBytes: processLimit(p),
    rssLog: p.rssLog ? { file: p.rssLog.file, samples: p.rssLog.timeMs.length } : null,
    timeAxis: t.axis,
    timeSource: t.source,
    ...(t.mtimeProblem && t.source !== 'capture' ? { timeNote: t.mtimeProblem } : {}),
  };
}

function gpuFacts(p: ProcessSeries): { gpu?: GpuSeriesInfo } {
  return p.gpu ? { gpu: p.gpu } : {};
}

/** A process in `summary --json`: its facts, its context, its device, its snapshots. */
function summaryProcess(p: ProcessSeries, job: Job, parents: ReadonlyMap<string, string | null>) {
  const ctx = snapshotContextFacts(p);
  const t = teardownDump(p, 0)?.snapshotIndex ?? -1;
  return {
    ...processFacts(p, job),
    ...processContextFacts(p, parents),
    ...gpuFacts(p),
    snapshots: p.snapshots.map((s, i) => ({
      ...snapshotFacts(s),
      ...ctx[i],
      ...(i === t ? { afterTeardown: true } : {}),
    })),
  };
}

export type SummaryProcess = ReturnType<typeof summaryProcess>;

/** What the text shows of a process besides its JSON facts. */
export interface SummaryBlock {
  /** the exit dump after teardown, listed, marked and left out of the series (core/model/series-end.ts) */
  teardown: { snapshotIndex: number; endsAtSeq: number | null; endsAtFile: string } | null;
  /** each snapshot's value of the request's sample; null: none asked, or its dumps lack it (a warning says so) */
  sampled: number[] | null;
}

export interface SummaryListing {
  processes: SummaryProcess[];
  warnings: LoadWarning[];
  ignoredFiles: string[];
  /** one per process */
  blocks: SummaryBlock[];
  /** the job's warnings and why a process has no value of the sample (the text's warnings; the JSON's are above) */
  textWarnings: LoadWarning[];
}

/** The processes, their snapshots (with capture context) and the warnings (`heaplens summary`). */
export function summaryListing(job: Job, req: SummaryRequest): SummaryListing {
  const parents = processParents(job.processes);
  const textWarnings = [...job.warnings];
  const sample = req.sample !== null && req.sample !== DEFAULT_SAMPLE_TYPE ? req.sample : null;
  const blocks = job.processes.map((p): SummaryBlock => {
    const t = teardownDump(p, 0);
    const end = t ? p.snapshots.find((x) => x.file === t.lastIntervalFile) : undefined;
    const sp = sample !== null ? sampleSeriesOrWarn(p, sample, textWarnings) : null;
    return {
      teardown: t
        ? { snapshotIndex: t.snapshotIndex, endsAtSeq: end?.seq ?? null, endsAtFile: t.lastIntervalFile }
        : null,
      sampled: sp ? sp.snapshots.map((s) => s.live.bytes) : null,
    };
  });
  return {
    processes: job.processes.map((p) => summaryProcess(p, job, parents)),
    warnings: [...job.warnings],
    ignoredFiles: [...job.ignoredFiles],
    blocks,
    textWarnings,
  };
}
