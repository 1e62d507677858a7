// `heaplens growth`: the job-wide ranking first (one line per stack across the processes that hold it), then each
// process's own series — above 16 processes only those that matter, the rest counted by group (process-page.ts;
// --all: every process). The listing is core/query/growth.ts's; on a dataset the ranking runs over its cells in SQL
// (node/dataset/rank-dataset.ts) and only the listed stacks' frames are read. The output is the same either way.

import type { Job, ProcessSeries } from '../../../core/model/model.js';
import type { JobSuspects } from '../../../core/stats/suspects.js';
import { growthFacts, growthQuery, listedStackIds } from '../../../core/query/growth.js';
import { DEFAULT_SAMPLE_TYPE } from '../../../core/model/sample-type.js';
import { has, intFlag, type ParsedArgs } from '../args.js';
import { onlyPid, viewOf, type Output } from '../common.js';
import { datasetPath, loadDataset, noProcess, sampledJob, sampleOf, withJob } from '../input.js';
import { symbolizeJob } from '../symbols.js';
import { printGrowth } from '../text/growth.js';
import { pagedOf, processPageOf, processPageFacts } from './process-page.js';

export async function growthCommand(args: ParsedArgs, io: Output): Promise<number> {
  const dataset = await datasetPath(args.positional);
  // other sample types rebuild the job's columns from the dumps' (or the dataset's) values
  if (dataset && sampleOf(args) === DEFAULT_SAMPLE_TYPE) return growthOnDataset(dataset, args, io);
  return withJob(args, io, (job) => growth(sampledJob(job, args), args, io));
}

/** The listing of a loaded job (ranked here unless `ranked` says how SQL ranked it), as text or JSON. */
function growth(job: Job, args: ParsedArgs, io: Output, ranked?: JobSuspects): void {
  const view = viewOf(args);
  const a = growthQuery(job, view, intFlag(args, 'top', 20), ranked);
  const { page, points } = processPageOf(job, a.ranking);
  if (has(args, 'json'))
    // machine output keeps every process; the groups and the pick come beside them
    io.out(JSON.stringify({ ...growthFacts(job, a), ...processPageFacts(job, page), warnings: job.warnings }, null, 2));
  else printGrowth(job, a, io, pagedOf(job, args) ? { page, points, mode: view.mode } : undefined);
}

async function growthOnDataset(dir: string, args: ParsedArgs, io: Output): Promise<number> {
  const n = intFlag(args, 'top', 20);
  const { startDatasetRanking } = await import('../../dataset/rank-dataset.js');
  let r: JobSuspects | null = null;
  // SQL's first pass over the cells runs while the snapshots are read; the ranking ends once they are in, and
  // then only the listed stacks' frames are read
  const ranking = await startDatasetRanking(dir);
  const chooser = async (bare: Job, ids: ReadonlyMap<ProcessSeries, number>) => {
    const job = onlyPid(bare, args);
    if (job.processes.length === 0) return new Map<number, number[]>();
    const pids = job.processes.map((p) => ids.get(p)!);
    r = await ranking.rank(job, pids, { top: n });
    // by process index → by the dataset's process id
    return new Map([...listedStackIds(r, n)].map(([pi, stacks]) => [pids[pi], stacks]));
  };
  let loaded;
  try {
    loaded = await loadDataset(dir, args, io, chooser);
  } finally {
    ranking.close();
  }
  const { job: all, symbolized } = loaded;
  const job = onlyPid(all, args);
  if (job.processes.length === 0 || !r) return noProcess(all, job, args, io);
  if (!symbolized) await symbolizeJob(job, args, io);
  growth(job, args, io, r);
  return 0;
}
