// The engine: one answer to every question of the API (core/engine/api.ts `Query`) over a loaded job. Every
// transport calls this and only this (the browser worker, the report page in-page, node/engine/ for `heaplens open`
// and the desktop app's utility process), so the same request gets the same answer whichever engine holds the job.

import { growthTable } from '../query/growth-table.js';
import { diffListing, topListing } from '../query/stack-listings.js';
import { summaryListing } from '../query/summary-listing.js';
import { growthListing } from '../query/growth-listing.js';
import { postmortemListing } from '../query/postmortem-listing.js';
import { binariesListing } from '../query/binaries-listing.js';
import { flameTree } from '../query/flame.js';
import { stackDetail, stackSeries } from '../query/series.js';
import { suspectsResult } from '../query/suspects.js';
import { missingBinariesAt } from '../query/missing-binaries.js';
import { gpuTimeline } from '../query/gpu-timeline.js';
import { resolveStacks, stackTargets } from '../query/stack-targets.js';
import type { QuerySession } from '../query/session.js';
import { appReport } from '../report/app-report.js';
import { reopenPayload, reopenReport } from '../report/reopen.js';
import { fromBase64 } from '../report/payload.js';
import { exportJob } from '../export/job-export.js';
import type { Query, Response } from './api.js';

/** What a transport supplies: the report page's code (a report embeds the app's read-only build). */
export interface AnswerDeps {
  reportApp: { js: string; css: string };
  /**
   * Called between a report's phases (its verdict read, its page not yet packed): a one-question session (the CLI's)
   * drops what it no longer needs there, for a large job's peak
   */
  betweenPhases?: () => void;
}

/** An answer, with the buffers a transport may move instead of copying (a worker's transfer list). */
export interface Answer {
  res: Response;
  transfer: ArrayBuffer[];
}

const plain = (res: Response): Answer => ({ res, transfer: [] });

/** Answers one question over the session's job. An error names what is wrong (no job, no such process, …). */
export async function answer(s: QuerySession, req: Query, deps?: AnswerDeps): Promise<Answer> {
  if (!s.partial) return answerNow(s, req, deps);
  // on the job so far of a load, the answer's time is the load's too (the same thread merges the dumps): the load
  // spaces its next update by it (core/engine/progressive-load.ts)
  const t0 = performance.now();
  try {
    return await answerNow(s, req, deps);
  } finally {
    s.notePartialWork(performance.now() - t0);
  }
}

async function answerNow(s: QuerySession, req: Query, deps?: AnswerDeps): Promise<Answer> {
  switch (req.type) {
    case 'summary':
      return plain({ type: 'summary', summary: s.summary });
    case 'postmortem':
      // a limit typed in the app: the projections again over the same job (a report keeps its own)
      return plain({ type: 'postmortem', postmortem: s.setLimit(req.limit) });
    case 'stackSeries':
      return plain({ type: 'stackSeries', series: stackSeries(s, req.proc, req.n, req.view) });
    case 'growth':
      return plain({ type: 'growth', growth: growthTable(s, req) });
    case 'top': {
      const { type: _, ...r } = req;
      return plain({ type: 'top', listing: topListing(s.job, r) });
    }
    case 'diff': {
      const { type: _, ...r } = req;
      return plain({ type: 'diff', listing: diffListing(s.job, r) });
    }
    case 'summaryListing':
      return plain({ type: 'summaryListing', listing: summaryListing(s.job, { sample: req.sample }) });
    case 'growthListing': {
      const { type: _, ...r } = req;
      return plain({ type: 'growthListing', listing: growthListing(s, r) });
    }
    case 'postmortemListing': {
      const { type: _, ...r } = req;
      return plain({ type: 'postmortemListing', listing: postmortemListing(s, r) });
    }
    case 'binariesListing': {
      const { type: _, ...r } = req;
      return plain({ type: 'binariesListing', listing: binariesListing(s.job, r) });
    }
    case 'suspects':
      return plain({ type: 'suspects', suspects: suspectsResult(s, req.limit, req.view) });
    case 'flame': {
      const { flame, buffers } = flameTree(s, req);
      return { res: { type: 'flame', flame }, transfer: buffers as ArrayBuffer[] };
    }
    case 'stack':
      return plain({ type: 'stack', stack: stackDetail(s, req) });
    case 'stackTargets':
      return plain({ type: 'stackTargets', targets: stackTargets(s, req.proc, req.stackIds) });
    case 'resolveStacks':
      return plain({ type: 'resolveStacks', ids: resolveStacks(s, req.targets) });
    case 'report':
      if (!deps) throw new Error("this engine makes no report page (it was given none of the report's code)");
      return plain({ type: 'report', ...(await appReport(s, req, deps.reportApp, deps.betweenPhases)) });
    case 'export': {
      const { type: _, ...r0 } = req;
      const r = await exportJob(s.job, r0);
      return {
        res: { type: 'export', ...r },
        transfer: typeof r.data === 'string' ? [] : [r.data.buffer as ArrayBuffer],
      };
    }
    case 'reopenReport': {
      // the report's job replaces the loaded one: every view then runs on it as on loaded dumps
      const t0 = performance.now();
      const r = req.payload !== undefined ? reopenPayload(fromBase64(req.payload)) : reopenReport(req.html ?? '');
      const summary = s.open(r.job, { loadMs: performance.now() - t0, bytesTotal: 0, waitMs: 0 }, r.postmortem);
      // the process table counts the stacks of the dumps, not only the ones the report kept
      summary.processes.forEach((p, k) => (p.stackCount = r.header.processes[k]?.stackCount ?? p.stackCount));
      return plain({ type: 'reopenReport', session: r.session, summary });
    }
    case 'missingBinaries':
      return plain({
        type: 'missingBinaries',
        ...missingBinariesAt(s.proc(req.proc), req.snapshot, {
          includeAllocator: !req.view.hideAllocator,
          view: req.view,
        }),
      });
    case 'gpuTimeline':
      return plain({
        type: 'gpuTimeline',
        timeline: gpuTimeline(s.proc(req.proc), Math.max(2, Math.min(20_000, Math.floor(req.maxPoints) || 2))),
      });
    case 'close':
      s.close();
      return plain({ type: 'close' });
  }
}

/** True for the requests `answer` takes (the rest are a transport's own: loading). */
export function isQuery(req: { type: string }): req is Query {
  return QUERY_TYPES.has(req.type);
}

const QUERY_TYPES = new Set<string>([
  'summary',
  'postmortem',
  'stackSeries',
  'growth',
  'top',
  'diff',
  'summaryListing',
  'growthListing',
  'postmortemListing',
  'binariesListing',
  'suspects',
  'flame',
  'stack',
  'stackTargets',
  'resolveStacks',
  'report',
  'export',
  'reopenReport',
  'missingBinaries',
  'gpuTimeline',
  'close',
] satisfies Query['type'][]);
