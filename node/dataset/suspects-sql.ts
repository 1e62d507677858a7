// The job-wide suspects ranking in SQL: node/dataset/suspects.sql (the query docs/dataset.md gives for DuckDB, Spark and
// Trino) computes core/stats/suspects.ts rankJob's patterns, scores, order and groups from a dataset's tables, so a
// warehouse of many jobs can be ranked without building a job in memory. Per-second slopes are left out.

import { parquetPathSql } from './tree-check.js';
import { join } from 'node:path';
import type { GrowthPattern } from '../../core/stats/patterns.js';
import { openEngine, sqlString, type Engine } from './duckdb.js';
import { createDatasetViews, datasetSql, runOnDataset, tableFiles } from './growth-sql.js';
import { STACKS_STAGE } from './schema.js';

/** The suspects query's text (node/dataset/suspects.sql). */
export function suspectsSql(): string {
  return datasetSql('suspects.sql');
}

/** One row of suspects.sql: a (job, process, stack) series as rankJob ranks it. */
export interface SqlSuspect {
  job: string;
  /** the dataset's process id (the `process=<n>` partition) */
  process: number;
  processKey: string;
  stackId: number;
  points: number;
  firstBytes: number;
  lastBytes: number;
  peakBytes: number;
  deltaBytes: number;
  sigmaBytes: number;
  sigmaDeltaBytes: number;
  /** null where rankJob gives ±Infinity (an exact, non-zero change) */
  z: number | null;
  pattern: GrowthPattern;
  slopeBytesPerSnapshot: number;
  lateSlopeBytesPerSnapshot: number;
  /** null where rankJob gives ±Infinity */
  lateZ: number | null;
  score: number;
  /** 1-based position in the job's ranking (rankJob's `stacks` index + 1) */
  rank: number;
  stackKey: string;
  /** 1-based rank of the stack's group in the job (rankJob's `group` + 1) */
  groupRank: number;
  groupScore: number;
  groupProcesses: number;
  groupPattern: GrowthPattern;
}

const PATTERNS: readonly GrowthPattern[] = ['steady', 'plateau', 'step', 'fluctuating', 'declining', 'flat', 'unknown'];

function pattern(v: unknown): GrowthPattern {
  const p = PATTERNS.find((x) => x === v);
  if (!p) throw new Error(`suspects.sql gave pattern ${String(v)}`);
  return p;
}

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The rows of suspects.sql's result, typed. */
export function suspectRows(rows: readonly Record<string, unknown>[]): SqlSuspect[] {
  return rows.map((r) => ({
    job: String(r.job),
    process: Number(r.process),
    processKey: String(r.process_key),
    stackId: Number(r.stack_id),
    points: Number(r.points),
    firstBytes: Number(r.first_bytes),
    lastBytes: Number(r.last_bytes),
    peakBytes: Number(r.peak_bytes),
    deltaBytes: Number(r.delta_bytes),
    sigmaBytes: Number(r.sigma_bytes),
    sigmaDeltaBytes: Number(r.sigma_delta_bytes),
    z: numOrNull(r.z),
    pattern: pattern(r.pattern),
    slopeBytesPerSnapshot: Number(r.slope_bytes_per_snapshot),
    lateSlopeBytesPerSnapshot: Number(r.late_slope_bytes_per_snapshot),
    lateZ: numOrNull(r.late_z),
    score: Number(r.score),
    rank: Number(r.rank),
    stackKey: String(r.stack_key),
    groupRank: Number(r.group_rank),
    groupScore: Number(r.group_score),
    groupProcesses: Number(r.group_processes),
    groupPattern: pattern(r.group_pattern),
  }));
}

/**
 * The views suspects.sql reads over one dataset: `cells` and `snapshots` as growth.sql has them, and `stacks` (per
 * process, the same way) and `processes` (the job-wide file), each with the `job` column.
 */
export async function createSuspectsViews(engine: Engine, dir: string, job = ''): Promise<void> {
  await createDatasetViews(engine, dir, job);
  const files = await tableFiles(dir, 'stacks');
  const stacks =
    files.length === 0
      ? `SELECT ${sqlString(job)} AS job, CAST(NULL AS INTEGER) AS process, ${STACKS_STAGE.map((c) => `CAST(NULL AS ${c.sql}) AS "${c.name}"`).join(', ')} WHERE false`
      : `SELECT ${sqlString(job)} AS job, CAST(process AS INTEGER) AS process, * EXCLUDE (process) FROM read_parquet([${files.map(parquetPathSql).join(', ')}], hive_partitioning = true)`;
  await engine.con.run(`CREATE OR REPLACE VIEW stacks AS ${stacks}`);
  await engine.con.run(
    `CREATE OR REPLACE VIEW processes AS SELECT ${sqlString(job)} AS job, * FROM read_parquet(${parquetPathSql(join(dir, 'processes.parquet'))})`,
  );
}

/** suspects.sql over one dataset: every (process, stack) series in rankJob's job-wide order. */
export async function datasetSuspects(dir: string, job = ''): Promise<SqlSuspect[]> {
  const engine = await openEngine([dir]);
  try {
    await createSuspectsViews(engine, dir, job);
    const reader = await runOnDataset(engine, dir, () => engine.con.runAndReadAll(suspectsSql()));
    return suspectRows(reader.getRowObjectsJS());
  } finally {
    engine.close();
  }
}
