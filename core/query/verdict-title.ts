// The verdict as a title: who died and what filled the memory, in a line that fits a browser tab and a ticket
// ("rollout-1 killed: leak in launch.py:59"), not the first pid or the folder's name. A report is titled by it (the
// CLI's `heaplens report`, the app's export dialog: JobSummary.title); the report page's <title> and its banner
// show it.

import type { Job } from '../model/model.js';
import { processLabel } from '../stats/verdict.js';
import type { PostmortemView } from './postmortem-view.js';

/** what a heap culprit's growth pattern is, in the title's words */
const PATTERN_WORD: Record<string, string> = {
  steady: 'leak',
  plateau: 'filled buffer',
  step: 'one-time step',
  fluctuating: 'fluctuating growth',
};

/** "StepLog.add (oom_job.py:57)" → "oom_job.py:57"; a site without a file and line whole */
function siteShort(site: string): string {
  const m = /\(([^()]*:\d+)\)\s*$/.exec(site);
  return m ? m[1] : site;
}

function culpritText(c: PostmortemView['culprits'][number]): string {
  if (c.kind === 'outside-heap') return /copy-on-write/.test(c.site) ? 'copy-on-write' : 'memory outside the heap';
  return `${PATTERN_WORD[c.pattern ?? ''] ?? 'growth'} in ${siteShort(c.site)}`;
}

/**
 * The title the verdict gives the job: the victim (its role, else its name and pid) and how it ended, then the
 * first culprit — and the first heap culprit too when the first is outside the heap. Null when the post-mortem says
 * neither who died nor what grew (the caller keeps its own title).
 */
export function verdictTitle(job: Pick<Job, 'processes'>, pm: PostmortemView | null | undefined): string | null {
  if (!pm) return null;
  const nameOf = (i: number): string => job.processes[i]?.role?.name ?? processLabel(job, i);
  let victim: string | null = null;
  if (pm.kill)
    victim = `${pm.kill.processIndex !== null ? nameOf(pm.kill.processIndex) : `pid ${pm.kill.pid ?? '?'}`} killed`;
  else {
    const stopped = pm.processes.find((p) => p.fate === 'oom-killed' || p.fate === 'killed' || p.fate === 'stopped');
    if (stopped) victim = `${nameOf(stopped.processIndex)} ${stopped.fate === 'stopped' ? 'stopped' : 'killed'}`;
  }
  const parts: string[] = [];
  const first = pm.culprits[0];
  if (first) parts.push(culpritText(first));
  if (first?.kind === 'outside-heap') {
    const heap = pm.culprits.find((c) => c.kind === 'heap');
    if (heap) parts.push(culpritText(heap));
  }
  const what = parts.join(', ');
  if (victim && what) return `${victim}: ${what}`;
  return victim ?? (what || null);
}
