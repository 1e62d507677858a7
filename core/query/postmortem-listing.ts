// `heaplens postmortem` as the engine answers it (core/engine/api.ts 'postmortemListing'): why the job died
// (core/query/postmortem.ts: the verdict, the kill, the fates and memory, the culprits, the logs read), its top
// suspects job-wide (core/query/growth.ts) and the page of a job of many processes — the --json document — and
// what the text shows besides (each process's end figures, the limit in force, the page's points). The CLI only
// formats this; the JSON's shape is docs/postmortem-json.md.

import type { Job, LoadWarning } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { JobPostmortem } from '../stats/postmortem.js';
import { groupFacts, growthQuery, stackFacts } from './growth.js';
import { postmortemQuery, type LimitScope, type PostmortemResult } from './postmortem.js';
import {
  pageOf,
  processPageFacts,
  sampledJob,
  sampleOfValues,
  type ListedSuspects,
  type PageOf,
  type SampleOfValues,
} from './growth-listing.js';
import { processFacts } from './summary.js';
import type { QuerySession } from './session.js';

/** A limit as given: bytes (null: "no limit"), where from, and a note on it (memory.max's "max"). */
export interface LimitText {
  bytes: number | null;
  source: string;
  note: string | null;
}

export interface PostmortemListingRequest {
  /** the stacks' view, and the sample whose values are read (inuse_space when absent) */
  view: ViewOptions;
  /** suspects listed */
  n: number;
  /** the limit the user gave (--limit); null: the kill's report, the cgroup files given, memory.max recorded */
  limit: LimitText | null;
  /** what the limit bounds: the job's sum, or each process */
  scope: LimitScope;
}

export interface PostmortemListing extends PageOf, SampleOfValues {
  /** the --json document (numbers that are not finite are the printer's to write) */
  document: ReturnType<typeof postmortemDocument>;
  /** the post-mortem, less what the text does not read (the series, the whole ranking) */
  result: Omit<PostmortemResult, 'series' | 'postmortem'>;
  postmortem: Omit<JobPostmortem, 'suspects'>;
  /** the limit in force: the one given, else the evidence's */
  limit: LimitText | null;
  /** the top suspects job-wide */
  listed: Pick<ListedSuspects, 'groups'>;
  /** the job the listing is of (its processes' indexes): the one asked, less those without the sample's values */
  processIndexes: number[];
}

function postmortemDocument(
  job: Job,
  q: PostmortemResult,
  limit: LimitText | null,
  scope: LimitScope,
  listed: ReturnType<typeof growthQuery>,
  pageFacts: ReturnType<typeof processPageFacts>,
  warnings: LoadWarning[],
  values: SampleOfValues,
) {
  const pm = q.postmortem;
  const r = pm.suspects;
  return {
    // what the heap's figures count (lastCompleteBytes, the groups' and stacks' …Bytes, memory.heapBytes, the
    // culprits' heap `bytes`): bytes, or a count sample's objects; the limit, RSS and pages are bytes either way
    ...values,
    verdict: q.verdict,
    kill: q.kill,
    kills: q.kills,
    limit: limit
      ? { bytes: limit.bytes, source: limit.source, note: limit.note, scope: q.limit?.scope ?? scope }
      : null,
    died: pm.died.map((i) => job.processes[i].pid),
    culprits: q.culprits,
    logsRead: q.logsRead,
    clock: q.clock,
    processes: pm.processes.map((p) => ({
      ...processFacts(job.processes[p.processIndex], job),
      name: q.processes[p.processIndex].name,
      role: q.processes[p.processIndex].role,
      parentPid: q.processes[p.processIndex].parentPid,
      fate: q.processes[p.processIndex].fate,
      fateEvidence: q.processes[p.processIndex].fateEvidence,
      memory: q.processes[p.processIndex].memory,
      exitDump: q.processes[p.processIndex].exitDump,
      secondsToLimit: q.processes[p.processIndex].secondsToLimit,
      snapshots: p.snapshots,
      lastCompleteBytes: p.lastCompleteBytes,
      lastCompleteSigmaBytes: p.lastCompleteSigmaBytes,
      lastKnownBytes: p.lastKnownBytes,
      lastKnownFromHeader: p.lastKnownFromHeader,
      endedAtMs: p.fate.endedAtMs,
      rate: p.rate,
      projection: p.projection,
      topPattern: r.processes[p.processIndex].topPattern,
      notes: p.notes,
    })),
    job: { ...pm.job, memory: q.job },
    groups: listed.groups.map((g) => groupFacts(job, g)),
    stacks: listed.stacks.map((s) => stackFacts(job, s)),
    // every process is above; the groups and the pick of those that matter beside them
    ...pageFacts,
    warnings,
  };
}

/** Why the job died, with its top suspects job-wide (`heaplens postmortem`). */
export function postmortemListing(s: QuerySession, req: PostmortemListingRequest): PostmortemListing {
  const warnings = [...s.job.warnings];
  const values = sampleOfValues(s.job, req.view.sample);
  const { job, processIndexes } = sampledJob(s.job, values.sample, warnings);
  const given = req.limit;
  const q = postmortemQuery(job, {
    ...(given ? { limit: { bytes: given.bytes, source: given.source, scope: req.scope } } : {}),
    unit: values.unit,
  });
  const limit: LimitText | null = given ?? (q.limit ? { ...q.limit, note: null } : null);
  const pm = q.postmortem;
  const listed = growthQuery(job, req.view, req.n, pm.suspects);
  const { page, points } = pageOf(
    job,
    pm.suspects,
    q.processes,
    q.processes.map((p) => p.role),
  );
  const { series: _s, postmortem: _p, ...result } = q;
  const { suspects: _r, ...rest } = pm;
  return {
    document: postmortemDocument(
      job,
      q,
      limit,
      req.scope,
      listed,
      processPageFacts(job, page),
      [...warnings, ...q.warnings],
      values,
    ),
    ...values,
    result,
    postmortem: rest,
    limit,
    listed: { groups: listed.groups },
    page,
    points,
    processIndexes,
  };
}
