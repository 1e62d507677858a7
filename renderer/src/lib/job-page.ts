// The window's page of a job of many processes (issue 49 item 4), from the answers it already has: the processes
// grouped by host → role/command with their fates counted, the processes that matter (killed, the first suspects'
// top holders, outliers of growth) — core/query/process-groups.ts, as the CLI's `growth` and `postmortem` pick
// them. A process's growth here is its live bytes' change over its series (what the process list sorts by).

import type { JobSummary, ProcessSummary, SuspectsResult } from './protocol.ts';
import {
  processPage,
  type HolderSummary,
  type ProcessPage,
  type ProcessPoint,
  type ProcessRole,
} from '../../../core/query/process-groups.ts';
import type { Evidence } from '../../../core/stats/kill-evidence.ts';

export interface JobPage {
  points: ProcessPoint[];
  page: ProcessPage;
  /** the processes the timeline draws as lines above BANDS_ABOVE, with why (selected ones are added by the chart) */
  emphasis: Map<number, string[]>;
}

function roles(ps: readonly ProcessSummary[]): ProcessRole[] {
  const parents = new Set(ps.map((p) => p.identity?.parentIndex).filter((i): i is number => i != null));
  return ps.map((p) => (p.identity?.parentIndex != null ? 'worker' : parents.has(p.index) ? 'driver' : 'process'));
}

/** The first suspects' holders as the ranking's rows give them: summarised when many, else the members shown. */
function holdersOf(s: SuspectsResult | null): HolderSummary[] {
  return (s?.rows ?? [])
    .filter((r) => r.score > 0)
    .slice(0, 3)
    .map(
      (r) =>
        r.holders ?? {
          group: r.group,
          holders: r.processCount,
          perSecond: r.members.every((m) => m.lateRatePerSecond),
          rates: { n: 0, min: 0, median: 0, p90: 0, max: 0 },
          outliers: [],
          top: r.members.slice(0, 3).map((m) => m.proc),
        },
    );
}

export function jobPage(summary: JobSummary, suspects: SuspectsResult | null): JobPage {
  const ps = summary.processes;
  const pm = new Map((summary.postmortem?.processes ?? []).map((p) => [p.processIndex, p]));
  const role = roles(ps);
  const points: ProcessPoint[] = ps.map((p, i) => {
    const v = pm.get(i);
    const e = v?.evidence ?? null;
    const evidence: Evidence[] = e ? [{ source: e.source, file: e.file, line: e.line, text: e.text }] : [];
    return {
      processIndex: i,
      host: p.host ?? null,
      command: p.name ?? p.prefix ?? p.key,
      role: role[i],
      fate: v?.fate ?? 'unknown',
      fateEvidence: evidence,
      growth: p.lastLiveBytes - p.firstLiveBytes,
    };
  });
  const page = processPage(points, holdersOf(suspects));
  const emphasis = new Map<number, string[]>();
  const mark = (i: number, why: string) => emphasis.set(i, [...(emphasis.get(i) ?? []), why]);
  for (const l of page.listed) for (const why of l.reasons) mark(l.processIndex, why);
  // every outlier and each holder's outliers too (the page lists at most a dozen; the chart can draw them all)
  for (const i of page.outliers) if (!emphasis.get(i)?.includes('outlier')) mark(i, 'outlier');
  for (const h of page.holders) for (const o of h.outliers) mark(o.processIndex, 'outlier holder');
  return { points, page, emphasis };
}
