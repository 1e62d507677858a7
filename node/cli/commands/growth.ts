// `heaplens growth`: the job-wide ranking first (one line per stack across the processes that hold it), then each
// process's own series — above 16 processes only those that matter, the rest counted by group (process-page.ts;
// --all: every process). The listing is the engine's (core/query/growth-listing.ts growthListing); on a dataset the
// ranking runs over its cells in SQL (node/dataset/rank-dataset.ts), the engine is given it, and only the listed
// stacks' frames are read. The output is the same either way.

import type { Job, ProcessSeries } from '../../../core/model/model.js';
import type { JobSuspects } from '../../../core/stats/suspects.js';
import { listedStackIds } from '../../../core/query/growth.js';
import type { DatasetProcess } from '../../dataset/read-dataset.js';
import { DEFAULT_SAMPLE_TYPE } from '../../../core/model/sample-type.js';
import { has, intFlag, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { onlyPid, viewOf, type Output } from '../common.js';
import { datasetPaths, loadDataset, noProcess, sampleOf, withJob } from '../input.js';
import { symbolizeJob } from '../symbols.js';
import { printGrowth } from '../text/growth.js';
import { valueFormat } from '../text/values.js';
import { pagedOf } from './process-page.js';

export async function growthCommand(args: ParsedArgs, io: Output): Promise<number> {
  const datasets = await datasetPaths(args.positional);
  // other sample types rebuild the job's columns from the dumps' (or the datasets') values
  if (datasets && sampleOf(args) === DEFAULT_SAMPLE_TYPE) return growthOnDataset(datasets, args, io);
  // growth ranks live bytes unless --sample says (a Go allocs profile's default, alloc_space, only ever grows)
  return withJob(args, io, (job, own) => growth(job, own, io), { jobSample: false });
}

/** The engine's listing of a loaded job (ranked by it, or as `ranked` says SQL ranked it), as text or JSON. */
async function growth(job: Job, args: ParsedArgs, io: Output, ranked?: JobSuspects): Promise<void> {
  const view = { ...viewOf(args), sample: sampleOf(args) };
  const { listing } = await ask(job, { type: 'growthListing', view, n: intFlag(args, 'top', 20) }, { ranked });
  if (has(args, 'json')) {
    io.out(JSON.stringify(listing.document, null, 2));
    return;
  }
  // the processes listed: those with the sample's values
  const listed: Job = { ...job, processes: listing.processIndexes.map((i) => job.processes[i]) };
  const paged = pagedOf(listed, args) ? { page: listing.page, points: listing.points, mode: view.mode } : undefined;
  printGrowth(listed, listing, listing.document.warnings, io, paged, valueFormat(args, job));
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
  await growth(job, args, io, r);
  return 0;
}
