// How a CLI command asks the engine (core/engine/answer.ts): the job it read becomes a session's, the command's
// question is one of the API's requests, and the command only formats the answer, as the app's views do.

import type { Query, ResponseOf } from '../../core/engine/api.js';
import { answer } from '../../core/engine/answer.js';
import type { Job } from '../../core/model/model.js';
import type { JobSuspects } from '../../core/stats/suspects.js';
import { QuerySession } from '../../core/query/session.js';

/**
 * The engine's answer to `req` over `job` (summarized only if the question needs the summary); `ranked`: the job's
 * suspects ranking when it was made elsewhere (a dataset's, in SQL), which the engine then answers from.
 */
export async function ask<T extends Query['type']>(
  job: Job,
  req: Extract<Query, { type: T }>,
  opts: { ranked?: JobSuspects } = {},
): Promise<ResponseOf<T>> {
  const s = new QuerySession();
  s.attach(job);
  if (opts.ranked) s.useRanking(opts.ranked);
  const { res } = await answer(s, req);
  if (res.type !== req.type) throw new Error(`the engine answered ${res.type} to ${req.type}`);
  return res as ResponseOf<T>;
}
