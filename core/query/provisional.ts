// The provisional ranking of a job still loading: the suspects (core/query/suspects.ts) over the processes read so
// far and the dumps read so far of the one being read (core/load/load-job.ts onDump), so the first screen has a
// ranking seconds before the first process is complete. It is ranked in a session of its own, thrown away after:
// the loading job's session, and so its final ranking, never see it.

import type { ProcessSeries } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { ProcessSummary } from './job-summary.js';
import { QuerySession } from './session.js';
import { suspectsResult, type SuspectsResult } from './suspects.js';

export interface ProvisionalRanking {
  suspects: SuspectsResult;
  /** the processes the rows' `proc` indices name (the last one read in part) */
  processes: ProcessSummary[];
  /** the dumps ranked, of the job's `dumpsTotal` */
  dumps: number;
  dumpsTotal: number;
}

/** The view a job opens in, the window's too (state/selection.svelte.ts): python-first, allocator frames hidden. */
export const OPENING_VIEW: ViewOptions = { mode: 'python-first', hideAllocator: true };

/**
 * The top `limit` suspects over `read` (complete processes) and `reading` (a process from its first dumps). The
 * stack ids are the ones the complete process will have (its stacks are numbered as they first appear).
 */
export function provisionalRanking(
  read: readonly ProcessSeries[],
  reading: ProcessSeries,
  dumpsTotal: number,
  limit: number,
  view: ViewOptions = OPENING_VIEW,
): ProvisionalRanking {
  const s = new QuerySession();
  const processes = [...read, reading];
  const summary = s.open({ processes, warnings: [], ignoredFiles: [] });
  return {
    suspects: suspectsResult(s, limit, view),
    processes: summary.processes,
    dumps: processes.reduce((n, p) => n + p.snapshots.length, 0),
    dumpsTotal,
  };
}
