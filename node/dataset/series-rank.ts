// The job-wide ranking over many datasets (node/dataset/series-rank.sql: the query docs/dataset.md gives for DuckDB,
// Spark and Trino) run in DuckDB over each node's dataset where it lies: it reads only the stored per-(process,
// stack) series statistics and the processes table, never a cell.

import { basename, join, resolve } from 'node:path';
import { openEngine, sqlString, type Engine } from './duckdb.js';
import { datasetSql } from './growth-sql.js';
import { readManifest } from './read-dataset.js';
import { checkTopFile, parquetPathSql } from './tree-check.js';

/** The ranking query's text (node/dataset/series-rank.sql). */
export function seriesRankSql(): string {
  return datasetSql('series-rank.sql');
}

/** One row of series-rank.sql: a stack across the job's processes, with the member that grows most. */
export interface RankedStack {
  job: string;
  groupRank: number;
  stackKey: string;
  boundBytes: number;
  deltaBytes: number;
  sigmaDeltaBytes: number;
  lastBytes: number;
  processes: number;
  growingProcesses: number;
  topDataset: string;
  topProcessKey: string;
  topHost: string | null;
  topStackId: number;
  topBoundBytes: number;
  topDeltaBytes: number;
  topSlopeBytesPerSnapshot: number;
  topR2: number;
  topGrowingFraction: number;
  topPoints: number;
}

/**
 * Views `series` and `processes` over the datasets, as one job: `job` is `job`, `dataset` each folder's name (its
 * whole path where two names are the same), as the hive folders job=<j>/dataset=<name> give them in a warehouse.
 */
export async function createSeriesRankViews(engine: Engine, dirs: readonly string[], job = ''): Promise<void> {
  const names = dirs.map((d) => basename(resolve(d)));
  const label = (i: number) => (names.filter((n) => n === names[i]).length > 1 ? resolve(dirs[i]) : names[i]);
  const series: string[] = [];
  const processes: string[] = [];
  for (const [i, d] of dirs.entries()) {
    await readManifest(d);
    // only the two files the query reads are checked (tree-check.ts's rules: regular files, no link), not the
    // per-process folders it never opens: a thousand partitions took longer to check than the query to run
    for (const f of ['series.parquet', 'processes.parquet']) await checkTopFile(join(d, f));
    const head = `SELECT ${sqlString(job)} AS job, ${sqlString(label(i))} AS dataset`;
    series.push(`${head}, * FROM read_parquet(${parquetPathSql(join(d, 'series.parquet'))})`);
    processes.push(`${head}, process, key, host FROM read_parquet(${parquetPathSql(join(d, 'processes.parquet'))})`);
  }
  await engine.con.run(`CREATE OR REPLACE VIEW series AS ${series.join(' UNION ALL ')}`);
  await engine.con.run(`CREATE OR REPLACE VIEW processes AS ${processes.join(' UNION ALL ')}`);
}

/**
 * One thread: the sums over a million series then run in the rows' order, so the figures are the same to the last
 * bit on every run (on two threads, 10 runs gave 10 answers, two tied groups swapped), and the query spends ~15 %
 * less CPU than on two (the 1,000-process job's 25 datasets) and waits on no second thread on a loaded machine.
 */
const RANK_THREADS = 1;

/** series-rank.sql over the datasets (one job): its first 100 stacks, job-wide. */
export async function datasetsRanking(dirs: readonly string[], job = ''): Promise<RankedStack[]> {
  const engine = await openEngine(dirs, { threads: RANK_THREADS });
  try {
    await createSeriesRankViews(engine, dirs, job);
    const rows = (await engine.con.runAndReadAll(seriesRankSql())).getRowObjectsJS();
    return rows.map((r) => ({
      job: String(r.job),
      groupRank: Number(r.group_rank),
      stackKey: String(r.stack_key),
      boundBytes: Number(r.bound_bytes),
      deltaBytes: Number(r.delta_bytes),
      sigmaDeltaBytes: Number(r.sigma_delta_bytes),
      lastBytes: Number(r.last_bytes),
      processes: Number(r.processes),
      growingProcesses: Number(r.growing_processes),
      topDataset: String(r.top_dataset),
      topProcessKey: String(r.top_process_key),
      topHost: r.top_host === null ? null : String(r.top_host),
      topStackId: Number(r.top_stack_id),
      topBoundBytes: Number(r.top_bound_bytes),
      topDeltaBytes: Number(r.top_delta_bytes),
      topSlopeBytesPerSnapshot: Number(r.top_slope_bytes_per_snapshot),
      topR2: Number(r.top_r2),
      topGrowingFraction: Number(r.top_growing_fraction),
      topPoints: Number(r.top_points),
    }));
  } finally {
    engine.close();
  }
}
