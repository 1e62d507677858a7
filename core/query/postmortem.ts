// `postmortem` as typed data: why the job died. The kill evidence (kill-evidence.ts), each process's fate
// (fates.ts), exit dumps after teardown left out of the series (core/model/series-end.ts), memory outside the heap
// (memory-outside-heap.ts), the ranked culprits and the verdict sentence (verdict.ts), beside the older
// post-mortem's end rates and time to the limit (postmortem.ts). The CLI, the app and the report format this.
// The JSON shape is docs/postmortem-json.md.

import type { Job, LoadWarning } from '../model/model.js';
import {
  killEvidence,
  type Evidence,
  type KillBy,
  type KillEvidence,
  type KillMatch,
  type LogRead,
} from '../stats/kill-evidence.js';
import { processEnds, type Fate } from '../stats/fates.js';
import { withoutTeardownDumps, type TeardownDump } from '../model/series-end.js';
import {
  contextPagesAt,
  jobMemory,
  pagesAt,
  processMemory,
  type JobMemory,
  type Pages,
  type ProcessMemory,
} from '../stats/memory-outside-heap.js';
import { rankCulprits, verdictSentence, type Culprit } from '../stats/verdict.js';
import { postmortem, project, type JobPostmortem } from '../stats/postmortem.js';
import type { JobSuspects } from '../stats/suspects.js';
import { processParents, recordedJobLimit } from '../model/memory-context.js';
import { processName } from '../model/process-name.js';
import { processHost } from '../model/process-host.js';
import type { ValueUnit } from '../model/units.js';

export interface KillOut {
  pid: number | null;
  /** the host of the process the kill was matched to; null when it matched none or that process has no host */
  host: string | null;
  by: KillBy;
  atMs: number | null;
  timeFrom: string | null;
  rssBytes: number | null;
  anonRssBytes: number | null;
  limitBytes: number | null;
  usageBytes: number | null;
  invokedByPid: number | null;
  /**
   * how the kill was tied to its process: by its pid, by the NSpid its dumps recorded (a container's process, the
   * kernel naming it by the host's pid) or inferred (memory cgroup, command, time, RSS); `processPid` is the
   * process's own pid. Null when it names no process of the dumps.
   */
  match: KillMatch | null;
  evidence: Evidence[];
}

export type Role = 'driver' | 'worker' | 'process';

export interface ProcessOut {
  processIndex: number;
  pid: number | null;
  host: string | null;
  name: string | null;
  role: Role;
  parentPid: number | null;
  fate: Fate;
  fateEvidence: Evidence[];
  endedAtMs: number | null;
  memory: ProcessMemory;
  /** the final dump written after teardown, kept but not read as the end of the series */
  exitDump: TeardownDump | null;
  /** time to the limit at its end rate (s), for the processes that were not killed; null without a limit or a rate */
  secondsToLimit: number | null;
}

export interface PostmortemResult {
  verdict: string;
  kill: KillOut | null;
  kills: KillOut[];
  processes: ProcessOut[];
  culprits: HostedCulprit[];
  job: JobMemory;
  limit: { bytes: number | null; source: string; scope: LimitScope } | null;
  logsRead: LogRead[];
  clock: KillEvidence['clock'];
  warnings: LoadWarning[];
  /** the end rates, projections and job-wide suspects over the series without teardown dumps */
  postmortem: JobPostmortem;
  /** the processes as the post-mortem read them (teardown dumps left out) */
  series: Job['processes'];
}

/**
 * What a limit bounds: `job`, the sum of the job's processes (a cgroup's memory.max, a watchdog's limit: the time
 * to it is the job's, no process has a countdown of its own); `process`, each process alone (ulimit -v, a
 * per-worker limit a launcher enforces).
 */
export type LimitScope = 'job' | 'process';

/** A limit: bytes (null: "no limit"), where it came from, what it bounds (absent: the job). */
export interface LimitGiven {
  bytes: number | null;
  source: string;
  scope?: LimitScope;
}

export interface PostmortemOptions {
  /** a limit the user gave (bytes; null: "no limit"), with where it came from and what it bounds */
  limit?: LimitGiven | null;
  /** rankJob, or a caller's ranking already made of the same processes (core/query/session.ts `rankOf`) */
  rank?: (job: Pick<Job, 'processes'>) => JobSuspects;
  /**
   * what the series' values are (the sample's unit; bytes when absent). A count (inuse_objects, alloc_objects) is
   * no amount of memory: no time to a limit in bytes is projected from it, and it is not set against the resident
   * pages (no memory outside the heap, no copy-on-write culprit); the verdict gives its figures as counts.
   */
  unit?: ValueUnit;
}

/** A culprit with the hosts of its processes, beside their pids. */
export type HostedCulprit = Culprit & { hosts: (string | null)[] };

function killOut(job: Job, k: KillEvidence['kills'][number]): KillOut {
  return {
    pid: k.pid,
    host: k.processIndex !== null ? processHost(job.processes[k.processIndex]) : null,
    by: k.by,
    atMs: k.atMs,
    timeFrom: k.timeFrom,
    rssBytes: k.rssBytes,
    anonRssBytes: k.anonRssBytes,
    limitBytes: k.limitBytes,
    usageBytes: k.usageBytes,
    invokedByPid: k.invokedByPid,
    match: k.match,
    evidence: k.evidence,
  };
}

/** A process's memory when its heap is a count: the resident pages as read, nothing set against them. */
function countedHeap(m: ProcessMemory): ProcessMemory {
  return {
    ...m,
    outsideHeapBytes: null,
    parts: { copyOnWrite: null, allocatorRetained: null, fragmentation: null, sharedMemory: null, notMalloc: null },
    explanation: null,
  };
}

export function postmortemQuery(job: Job, opts: PostmortemOptions = {}): PostmortemResult {
  const ev = killEvidence(job);
  const { processes: series, teardown } = withoutTeardownDumps(job);
  const trimmed = { processes: series, evidence: job.evidence };
  // fates from the whole series: a final dump after teardown is still the process's exit
  const { ends, kills } = processEnds(job, ev);
  const first = kills.find((k) => k.processIndex !== null) ?? null;
  const rec = recordedJobLimit(job.processes);
  // every limit the evidence gives bounds the job's sum (a cgroup's, a watchdog's); a typed one says what it bounds
  const found: LimitGiven | null =
    opts.limit ??
    (first?.limitBytes !== null && first?.limitBytes !== undefined
      ? {
          bytes: first.limitBytes,
          source: `the ${first.by === 'kernel' ? "kernel's OOM report" : first.by === 'watchdog' ? "watchdog's kill line" : first.by} (${first.evidence[0].file})`,
        }
      : ev.cgroup?.limitBytes !== null && ev.cgroup?.limitBytes !== undefined
        ? { bytes: ev.cgroup.limitBytes, source: 'the cgroup files given' }
        : rec
          ? { bytes: rec.bytes, source: `memory.max recorded with the dumps of ${rec.processes} process(es)` }
          : null);
  const limit = found ? { bytes: found.bytes, source: found.source, scope: found.scope ?? ('job' as const) } : null;
  const counts = opts.unit === 'objects';
  const pm = postmortem(trimmed, counts ? null : (limit?.bytes ?? null), opts.rank);
  if (limit?.scope === 'job')
    // a job-wide limit: the job's sum meets it, not any process alone (no per-process countdown)
    for (const p of pm.processes) p.projection = null;
  if (limit?.scope === 'process') pm.job.projection = null;
  const samples = (job.evidence?.smaps ?? []).flatMap(({ file, rollup }) =>
    rollup.samples.map((sample) => ({ file, sample })),
  );
  // memory at the moment of the kill (each process's own kill, else the first): what filled the cgroup then
  const cutoff = (i: number): number | null => ends[i].kill?.atMs ?? first?.atMs ?? null;
  // the pages the capture recorded with the end dump first (same moment as its heap), else a copied smaps_rollup
  const pagesOf = (i: number): Pages | null =>
    contextPagesAt(series[i], cutoff(i)) ?? pagesAt(samples, series[i].pid, cutoff(i));
  const memory = processMemory(trimmed, pm.suspects, pagesOf, cutoff).map((m) => (counts ? countedHeap(m) : m));
  const culprits: HostedCulprit[] = rankCulprits(trimmed, pm.suspects, memory).map((c) => ({
    ...c,
    hosts: c.processIndexes.map((i) => processHost(series[i])),
  }));
  const victimRate =
    first?.processIndex !== null && first ? (pm.processes[first.processIndex!].rate?.perSecond ?? null) : null;
  const verdict = verdictSentence(trimmed, first, ends, culprits, victimRate, memory, opts.unit);
  const parents = processParents(series);
  const index = new Map(series.map((p, i) => [p.key, i]));
  const hasChildren = new Set([...parents.values()].filter((v): v is string => v !== null));
  const processes: ProcessOut[] = series.map((p, i) => {
    const parentKey = parents.get(p.key) ?? null;
    const proj = pm.processes[i].projection;
    return {
      processIndex: i,
      pid: p.pid,
      host: processHost(p),
      name: processName(p),
      role: parentKey !== null ? 'worker' : hasChildren.has(p.key) ? 'driver' : 'process',
      parentPid: parentKey !== null ? series[index.get(parentKey)!].pid : null,
      fate: ends[i].fate,
      fateEvidence: ends[i].fateEvidence,
      endedAtMs: ends[i].endedAtMs,
      memory: memory[i],
      exitDump: teardown.find((t) => t.processIndex === i) ?? null,
      secondsToLimit: ends[i].fate === 'oom-killed' || !proj ? null : proj.seconds,
    };
  });
  const usageAtKill = first?.usageBytes ?? null;
  const job_ = jobMemory(memory, {
    usageAtKillBytes: usageAtKill,
    peakBytes: ev.cgroup?.peakBytes ?? null,
    limitBytes: limit?.bytes ?? null,
  });
  // The job's headroom from the best figure of what the cgroup held: summed heap estimates count a forked
  // child's inherited allocations twice and miss the pages no allocation explains, so "already over the limit"
  // from that sum is not a fact. The cgroup's own usage at the kill first, then Σ Pss, then the heaps counted once
  // plus the copy-on-write copies.
  if (!counts && limit?.bytes != null && limit.scope === 'job' && pm.job.perSecond !== null) {
    const used: [number, string] | null =
      job_.usageAtKillBytes !== null
        ? [
            job_.usageAtKillBytes,
            first?.by === 'watchdog' ? "the watchdog's sum at the kill" : "the cgroup's usage at the kill",
          ]
        : job_.pssBytes !== null
          ? [job_.pssBytes, "the processes' resident pages (Σ Pss)"]
          : memory.length > 0
            ? [
                job_.heapBytes + job_.copyOnWriteBytes,
                'the heaps, inherited allocations counted once, and copy-on-write copies',
              ]
            : null;
    if (used) {
      const rate = {
        perSnapshot: 0,
        perSnapshotLo: 0,
        perSnapshotHi: 0,
        perSecond: pm.job.perSecond,
        perSecondLo: pm.job.perSecondLo,
        perSecondHi: pm.job.perSecondHi,
        points: 0,
      };
      pm.job.projection = {
        ...project(limit.bytes - used[0], rate),
        snapshots: null,
        snapshotsLo: null,
        snapshotsHi: null,
      };
      pm.job.basis = used[1];
    }
  }
  const warnings = [...ev.warnings, ...teardown.map((t) => ({ file: t.file, message: t.note }))];
  return {
    verdict,
    kill: first ? killOut(job, first) : null,
    kills: kills.map((k) => killOut(job, k)),
    processes,
    culprits,
    job: job_,
    limit,
    logsRead: ev.logsRead,
    clock: ev.clock,
    warnings,
    postmortem: pm,
    series,
  };
}
