// The page of a job of many processes (core/query/process-groups.ts) for `growth` and `postmortem`: whether the
// text lists every process (--all, or a job small enough). The page and its JSON are the engine's
// (core/query/growth-listing.ts).

import type { Job } from '../../../core/model/model.js';
import { LIST_ALL_UP_TO } from '../../../core/query/process-groups.js';
import { has, type ParsedArgs } from '../args.js';

/** Whether the text is a page (the processes that matter, the rest by group) rather than every process. */
export function pagedOf(job: Pick<Job, 'processes'>, args: ParsedArgs): boolean {
  return !has(args, 'all') && job.processes.length > LIST_ALL_UP_TO;
}
