// `heaplens growth`: the job-wide ranking first (one line per stack across the processes that hold it), then each
// process's own series — above 16 processes only those that matter, the rest counted by group (process-page.ts;
// --all: every process). The listing is core/query/growth.ts's; on a dataset the ranking runs over its cells in SQL
// (node/dataset/rank-dataset.ts) and only the listed stacks' frames are read. The output is the same either way.

import type { Job, ProcessSeries } from '../../../core/model/model.js';
import type { JobSuspects } from '../../../core/stats/suspects.js';
import { growthFacts, growthQuery, listedStackIds } from '../../../core/query/growth.js';
import type { DatasetProcess } from '../../dataset/read-dataset.js';
import { DEFAULT_SAMPLE_TYPE } from '../../../core/model/sample-type.js';
import { has, intFlag, type ParsedArgs } from '../args.js';
import { onlyPid, viewOf, type Output } from '../common.js';
import { datasetPaths, loadDataset, noProcess, sampledJob, sampleOf, withJob } from '../input.js';
import { symbolizeJob } from '../symbols.js';
import { printGrowth } from '../text/growth.js';
import { pagedOf, processPageOf, processPageFacts } from './process-page.js';

export async function growthCommand(args: ParsedArgs, io: Output): Promise<number> {
  const datasets = await datasetPaths(args.positional);
  // other sample types rebuild the job's columns from the dumps' (or the datasets') values
  if (datasets && sampleOf(args) === DEFAULT_SAMPLE_TYPE) return growthOnDataset(datasets, args, io);
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

async function growthOnDataset(dirs: readonly string[], args: ParsedArgs, io: Output): Promise<number> {
  const n = intFlag(args, 'top', 20);
  const { startDatasetRanking } = await import('../../dataset/rank-dataset.js');
  const { readableDatasets } = await import('../../dataset/read-dataset.js');
  let r: JobSuspects | null = null;
  // SQL's query over the series statistics runs while the snapshots are read; the ranking ends once they are in,
  // and then only the listed stacks' frames are read. A dataset of another version is left out (the read warns).
  const ranking = await startDatasetRanking(await readableDatasets(dirs));
  const chooser = async (bare: Job, sources: ReadonlyMap<ProcessSeries, DatasetProcess>) => {
    const job = onlyPid(bare, args);
    if (job.processes.length === 0) return new Map<ProcessSeries, number[]>();
    r = await ranking.rank(
      job,
      job.processes.map((p) => sources.get(p)!),
      { top: n },
    );
    const stacks = listedStackIds(r, n);
    return new Map(job.processes.map((p, pi) => [p, stacks.get(pi) ?? []]));
  };
  let loaded;
  try {
    loaded = await loadDataset(dirs, args, io, chooser);
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
