// The page of a job of many processes (core/query/process-groups.ts) for `growth` and `postmortem`: whether the
// text lists every process (--all, or a job small enough), and the groups and pick as their JSON adds them.

import type { Job } from '../../../core/model/model.js';
import type { JobSuspects } from '../../../core/stats/suspects.js';
import { killEvidence } from '../../../core/stats/kill-evidence.js';
import { processEnds, type Fate } from '../../../core/stats/fates.js';
import type { Evidence } from '../../../core/stats/kill-evidence.js';
import { processHost } from '../../../core/model/process-host.js';
import {
  culpritHolders,
  LIST_ALL_UP_TO,
  processPage,
  processPoints,
  type ProcessPage,
  type ProcessPoint,
  type ProcessRole,
} from '../../../core/query/process-groups.js';
import { has, type ParsedArgs } from '../args.js';

/** Whether the text is a page (the processes that matter, the rest by group) rather than every process. */
export function pagedOf(job: Pick<Job, 'processes'>, args: ParsedArgs): boolean {
  return !has(args, 'all') && job.processes.length > LIST_ALL_UP_TO;
}

/** The page of a job: its processes' points from their fates (given, or from the kill evidence) and the ranking. */
export function processPageOf(
  job: Job,
  r: JobSuspects,
  ends?: readonly { fate: Fate; fateEvidence: readonly Evidence[] }[],
  roles?: readonly ProcessRole[],
): { page: ProcessPage; points: ProcessPoint[] } {
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
