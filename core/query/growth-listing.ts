// `heaplens growth` as the engine answers it (core/engine/api.ts 'growthListing'): the job-wide ranking cut to what
// the command lists (core/query/growth.ts), the page of a job of many processes (core/query/process-groups.ts: the
// processes that matter, the rest by group) — the --json document — and what the text shows besides (the ranking's
// per-process series, the page's points). `postmortem` lists its suspects and page the same way
// (core/query/postmortem-listing.ts). The CLI only formats this.

import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import {
  DEFAULT_SAMPLE_TYPE,
  jobDeclaredSamples,
  sampleSeriesOrWarn,
  sampleUnit,
  type SampleType,
} from '../model/sample-type.js';
import type { ValueUnit } from '../model/units.js';
import { processEnds, type Fate } from '../stats/fates.js';
import { killEvidence, type Evidence } from '../stats/kill-evidence.js';
import type { JobSuspects } from '../stats/suspects.js';
import { processHost } from '../model/process-host.js';
import { growthFacts, growthQuery, type GrowthGroup, type GrowthStack } from './growth.js';
import {
  culpritHolders,
  processPage,
  processPoints,
  type ProcessPage,
  type ProcessPoint,
  type ProcessRole,
} from './process-groups.js';
import type { QuerySession } from './session.js';

export interface GrowthListingRequest {
  /** the stacks' view, and the sample whose values are ranked (inuse_space when absent) */
  view: ViewOptions;
  /** stacks listed per process, and groups */
  n: number;
}

/** What the text of `growth` and `postmortem` lists: the cut ranking, with what the text reads of the whole one. */
export interface ListedSuspects {
  /** each process's top n stacks, in job-wide order */
  stacks: GrowthStack[];
  /** the first n groups */
  groups: GrowthGroup[];
  ranking: Pick<JobSuspects, 'groupCount' | 'processes'>;
}

/** A job's page (core/query/process-groups.ts) and every process's point on it. */
export interface PageOf {
  page: ProcessPage;
  points: ProcessPoint[];
}

/**
 * The sample a listing's values are of, and their unit: a count sample's (inuse_objects, alloc_objects) figures
 * are counts, in the same fields (`lastBytes`, `score`, …) that hold bytes otherwise.
 */
export interface SampleOfValues {
  sample: SampleType;
  unit: ValueUnit;
}

/** The sample asked (inuse_space when absent) and its unit, a declared type's by the job's declaration. */
export function sampleOfValues(job: Pick<Job, 'processes'>, sample: SampleType | undefined): SampleOfValues {
  const t = sample ?? DEFAULT_SAMPLE_TYPE;
  return { sample: t, unit: sampleUnit(t, jobDeclaredSamples(job)) };
}

export interface GrowthListing extends ListedSuspects, PageOf {
  /** the --json document */
  document: SampleOfValues &
    ReturnType<typeof growthFacts> &
    ReturnType<typeof processPageFacts> & { warnings: LoadWarning[] };
  /** the job the listing is of (its processes' indexes): the one asked, less those without the sample's values */
  processIndexes: number[];
}

/**
 * The job with the sample's values in every process's columns, and which of the job's processes it holds: those
 * without the values are left out with a warning (in `warnings`) saying why. Live bytes: the job itself.
 */
export function sampledJob(
  job: Job,
  sample: SampleType,
  warnings: LoadWarning[],
): { job: Job; processIndexes: number[] } {
  if (sample === DEFAULT_SAMPLE_TYPE) return { job, processIndexes: job.processes.map((_, i) => i) };
  const processes: ProcessSeries[] = [];
  const processIndexes: number[] = [];
  for (const [i, p] of job.processes.entries()) {
    const sp = sampleSeriesOrWarn(p, sample, warnings);
    if (!sp) continue;
    processes.push(sp);
    processIndexes.push(i);
  }
  return { job: { ...job, processes }, processIndexes };
}

/** The page of a job: its processes' points from their fates (given, or from the kill evidence) and the ranking. */
export function pageOf(
  job: Job,
  r: JobSuspects,
  ends?: readonly { fate: Fate; fateEvidence: readonly Evidence[] }[],
  roles?: readonly ProcessRole[],
): PageOf {
  const points = processPoints(job, r, ends ?? processEnds(job, killEvidence(job)).ends, roles);
  return { page: processPage(points, culpritHolders(r)), points };
}

/** What `--json` adds: every process by group (host, role, command), the processes that matter, the holders. */
export function processPageFacts(job: Pick<Job, 'processes'>, page: ProcessPage) {
  const who = (pi: number) => ({ pid: job.processes[pi].pid, host: processHost(job.processes[pi]) });
  return {
    processGroups: page.groups.map((g) => ({
      host: g.host,
      role: g.role,
      command: g.command,
      processes: g.processIndexes.map(who),
      fates: g.fates,
      growthBytes: g.growth,
    })),
    processesThatMatter: page.listed.map((l) => ({ ...who(l.processIndex), reasons: l.reasons })),
    holders: page.holders.map((h) => ({
      group: h.group,
      holders: h.holders,
      ratePer: h.perSecond ? 'second' : 'dump',
      rates: h.rates,
      outliers: h.outliers.map((o) => ({ ...who(o.processIndex), rate: o.rate })),
      top: h.top.map(who),
    })),
    fateCounts: page.fates.map((f) => ({
      fate: f.fate,
      count: f.count,
      groups: f.groups.map(({ host, command, count }) => ({ host, command, count })),
      evidence: f.evidence.map((e) => ({ ...who(e.processIndex), ...e.evidence })),
      withEvidence: f.withEvidence,
    })),
  };
}

/**
 * The job-wide suspects and each process's series (`heaplens growth`), ranked once per session's job (or as the
 * session was given its ranking: a dataset's, in SQL); another sample type ranks that sample's series.
 */
export function growthListing(s: QuerySession, req: GrowthListingRequest): GrowthListing {
  const values = sampleOfValues(s.job, req.view.sample);
  const sample = values.sample;
  const warnings = [...s.job.warnings];
  const { job, processIndexes } = sampledJob(s.job, sample, warnings);
  const a = growthQuery(job, req.view, req.n, job === s.job ? s.ranking() : undefined);
  const { page, points } = pageOf(job, a.ranking);
  return {
    // machine output keeps every process; the groups and the pick come beside them
    document: { ...values, ...growthFacts(job, a), ...processPageFacts(job, page), warnings },
    stacks: a.stacks,
    groups: a.groups,
    ranking: { groupCount: a.ranking.groupCount, processes: a.ranking.processes },
    page,
    points,
    processIndexes,
  };
}
