// The dataset's tables: one definition per column (name, SQL type, append type) drives the CREATE statements,
// the appends and the reader, so the schema is written once. docs/dataset.md describes every column.

import { BIGINT, BOOLEAN, DOUBLE, INTEGER, UBIGINT, VARCHAR, type DuckDBType } from '@duckdb/node-api';

export { DATASET_FORMAT, DATASET_VERSION, MANIFEST_FILE, type Manifest } from './manifest.js';

export interface ColumnDef {
  name: string;
  sql: string;
  type: DuckDBType;
}

function col(name: string, sql: string, type: DuckDBType): ColumnDef {
  return { name, sql, type };
}

/** Job-wide tables: one Parquet file each, rewritten by every ingest run (they are small). */
export const PROCESSES: readonly ColumnDef[] = [
  col('process', 'INTEGER', INTEGER),
  col('key', 'VARCHAR', VARCHAR),
  col('pid', 'BIGINT', BIGINT),
  col('pid_namespace', 'BIGINT', BIGINT),
  col('prefix', 'VARCHAR', VARCHAR),
  col('ended_without_final_dump', 'BOOLEAN', BOOLEAN),
  col('snapshot_count', 'INTEGER', INTEGER),
  col('stack_count', 'INTEGER', INTEGER),
  col('address_count', 'INTEGER', INTEGER),
  col('has_maps', 'BOOLEAN', BOOLEAN),
  /** the process's PYFRAMES/1 table (tagged JSON), null without one */
  col('python_frames_json', 'VARCHAR', VARCHAR),
  /** whether the frames were symbolized at ingest, and the symbolizer's per-module report (JSON) */
  col('symbolized', 'BOOLEAN', BOOLEAN),
  col('symbol_modules_json', 'VARCHAR', VARCHAR),
  /**
   * the host the process ran on (core/model/process-host.ts): the capture context's hostname, else the top folder
   * its dumps came from among those ingested, else `ingest --host`; null when nothing names one
   */
  col('host', 'VARCHAR', VARCHAR),
  /** where `host` comes from: context | folder | option; null without a host */
  col('host_from', 'VARCHAR', VARCHAR),
];

export const FILES: readonly ColumnDef[] = [
  col('path', 'VARCHAR', VARCHAR),
  col('size', 'BIGINT', BIGINT),
  col('mtime_ms', 'DOUBLE', DOUBLE),
  /** dump | failed (a dump that gave no snapshot) | side | ignored */
  col('status', 'VARCHAR', VARCHAR),
  col('process', 'INTEGER', INTEGER),
];

export const WARNINGS: readonly ColumnDef[] = [
  /** null for warnings about side files shared by every process (maps files) */
  col('process', 'INTEGER', INTEGER),
  col('ordinal', 'INTEGER', INTEGER),
  /** the process key of a group of dumps none of which could be read (it has no process row) */
  col('group_key', 'VARCHAR', VARCHAR),
  col('file', 'VARCHAR', VARCHAR),
  col('line', 'BIGINT', BIGINT),
  col('byte_offset', 'BIGINT', BIGINT),
  col('message', 'VARCHAR', VARCHAR),
];

/** Per-process tables, hive-partitioned: <table>/process=<n>/<file>.parquet (the column is in the folder name). */
export const SNAPSHOTS: readonly ColumnDef[] = [
  col('snapshot', 'INTEGER', INTEGER),
  col('file', 'VARCHAR', VARCHAR),
  col('seq', 'BIGINT', BIGINT),
  col('trigger', 'VARCHAR', VARCHAR),
  col('trigger_seq', 'BIGINT', BIGINT),
  col('mtime_ms', 'DOUBLE', DOUBLE),
  col('format', 'VARCHAR', VARCHAR),
  col('sample_period', 'DOUBLE', DOUBLE),
  col('live_bytes', 'DOUBLE', DOUBLE),
  col('live_objects', 'DOUBLE', DOUBLE),
  col('accum_bytes', 'DOUBLE', DOUBLE),
  col('accum_objects', 'DOUBLE', DOUBLE),
  col('header_live_bytes', 'DOUBLE', DOUBLE),
  col('header_live_objects', 'DOUBLE', DOUBLE),
  col('header_accum_bytes', 'DOUBLE', DOUBLE),
  col('header_accum_objects', 'DOUBLE', DOUBLE),
  /** the header's live bytes unbiased as one record (analysis: Snapshot.headerLiveBytes); null without a header */
  col('header_live_bytes_unbiased', 'DOUBLE', DOUBLE),
  col('has_accumulated', 'BOOLEAN', BOOLEAN),
  /** false when the file was cut before its last record */
  col('complete', 'BOOLEAN', BOOLEAN),
  col('has_accum_cells', 'BOOLEAN', BOOLEAN),
  col('truncated_byte_offset', 'BIGINT', BIGINT),
  col('truncated_line', 'BIGINT', BIGINT),
  /** the load warnings naming this file, one per line (damage, truncation, skipped records) */
  col('damage', 'VARCHAR', VARCHAR),
  col('maps_source', 'VARCHAR', VARCHAR),
  col('threads_json', 'VARCHAR', VARCHAR),
  /** what the capture library recorded with the dump (time, RSS, cgroup, allocator stats; tagged JSON); null without */
  col('context_json', 'VARCHAR', VARCHAR),
  col('cell_count', 'INTEGER', INTEGER),
];

/** Staging form of `stacks`: one row per frame, folded into a list per stack when written. */
export const STACK_FRAMES_STAGE: readonly ColumnDef[] = [
  col('stack_id', 'INTEGER', INTEGER),
  col('depth', 'INTEGER', INTEGER),
  col('address_id', 'INTEGER', INTEGER),
];
export const STACKS_STAGE: readonly ColumnDef[] = [
  col('stack_id', 'INTEGER', INTEGER),
  col('allocator_depth', 'INTEGER', INTEGER),
  /** job-wide identity of the stack (the same key in every process); null when it cannot be formed */
  col('stack_key', 'VARCHAR', VARCHAR),
];

export const FRAMES: readonly ColumnDef[] = [
  col('address_id', 'INTEGER', INTEGER),
  col('address', 'VARCHAR', VARCHAR),
  /** leaf (looked up at the PC) | caller (at PC − 1) | '' (not symbolized) */
  col('role', 'VARCHAR', VARCHAR),
  col('kind', 'VARCHAR', VARCHAR),
  col('module', 'VARCHAR', VARCHAR),
  col('module_offset', 'VARCHAR', VARCHAR),
  col('function', 'VARCHAR', VARCHAR),
  col('source_file', 'VARCHAR', VARCHAR),
  col('line', 'BIGINT', BIGINT),
  /** the symbolizer's whole answer (inlined frames, binary check), for an exact rebuild */
  col('symbol_json', 'VARCHAR', VARCHAR),
];

export const MAPPINGS: readonly ColumnDef[] = [
  col('ordinal', 'INTEGER', INTEGER),
  col('map_start', 'UBIGINT', UBIGINT),
  col('map_end', 'UBIGINT', UBIGINT),
  col('perms', 'VARCHAR', VARCHAR),
  col('file_offset', 'UBIGINT', UBIGINT),
  col('dev', 'VARCHAR', VARCHAR),
  col('inode', 'BIGINT', BIGINT),
  col('path', 'VARCHAR', VARCHAR),
  col('deleted', 'BOOLEAN', BOOLEAN),
];

export const CELLS: readonly ColumnDef[] = [
  col('snapshot', 'INTEGER', INTEGER),
  col('seq', 'BIGINT', BIGINT),
  col('stack_id', 'INTEGER', INTEGER),
  col('objects', 'DOUBLE', DOUBLE),
  col('bytes', 'DOUBLE', DOUBLE),
  col('accum_objects', 'DOUBLE', DOUBLE),
  col('accum_bytes', 'DOUBLE', DOUBLE),
  /** σ of `bytes` from jemalloc's sampling model (core/model/sampling-error.ts); 0 when every allocation was recorded */
  col('sd_bytes', 'DOUBLE', DOUBLE),
  /** its variance (bytes²): variances of cells add, σ do not */
  col('var_bytes', 'DOUBLE', DOUBLE),
  /** bytes > this stack's bytes in the previous snapshot (0 where it was absent there); null in snapshot 0 */
  col('rose', 'BOOLEAN', BOOLEAN),
];

/**
 * Staging form of `cells`: only what JS must hand over (every value costs a call); `seq` and `sd_bytes` are
 * derived in SQL, `accum_*` are staged only for a process that has them (NaN where a snapshot has none).
 */
export const CELLS_STAGE: readonly ColumnDef[] = [
  col('snapshot', 'INTEGER', INTEGER),
  col('stack_id', 'INTEGER', INTEGER),
  col('objects', 'DOUBLE', DOUBLE),
  col('bytes', 'DOUBLE', DOUBLE),
  col('var_bytes', 'DOUBLE', DOUBLE),
  col('rose', 'BOOLEAN', BOOLEAN),
];
export const CELLS_STAGE_ACCUM: readonly ColumnDef[] = [
  col('accum_objects', 'DOUBLE', DOUBLE),
  col('accum_bytes', 'DOUBLE', DOUBLE),
];

/**
 * `series.parquet`, one row per (process, stack): the series' sufficient statistics over the process's complete
 * snapshots (points t = 0…n−1; a stack absent from a point is 0 there), worked out at ingest from the cells. Sums
 * add across time ranges, processes and datasets; first/last/prev are the values at the series' ends. One file per
 * dataset (not per process): a job-wide ranking over many datasets reads only these (node/dataset/series-rank.sql),
 * and a thousand small files cost more to open than their rows to read.
 */
export const SERIES: readonly ColumnDef[] = [
  col('process', 'INTEGER', INTEGER),
  col('stack_id', 'INTEGER', INTEGER),
  /** the job-wide identity of the stack (stacks.stack_key), repeated here so a ranking over datasets joins nothing */
  col('stack_key', 'VARCHAR', VARCHAR),
  /** the process's points (complete snapshots), the same on every row of the process */
  col('n', 'INTEGER', INTEGER),
  /** points where the stack has a cell */
  col('present', 'INTEGER', INTEGER),
  /** Σt and Σt² over all n points (t = the point's index) */
  col('sum_t', 'DOUBLE', DOUBLE),
  col('sum_tt', 'DOUBLE', DOUBLE),
  /** Σy, Σty, Σy² of live bytes; Σ of their sampling variance */
  col('sum_y', 'DOUBLE', DOUBLE),
  col('sum_ty', 'DOUBLE', DOUBLE),
  col('sum_yy', 'DOUBLE', DOUBLE),
  col('sum_var', 'DOUBLE', DOUBLE),
  /** intervals (t−1, t) in which the bytes rose */
  col('grew', 'INTEGER', INTEGER),
  /** bytes and variance at the first point (t = 0), the last (t = n−1) and the one before it (t = n−2) */
  col('first_y', 'DOUBLE', DOUBLE),
  col('first_var', 'DOUBLE', DOUBLE),
  col('last_y', 'DOUBLE', DOUBLE),
  col('last_var', 'DOUBLE', DOUBLE),
  col('prev_y', 'DOUBLE', DOUBLE),
  col('prev_var', 'DOUBLE', DOUBLE),
  /** the largest bytes of the series */
  col('max_y', 'DOUBLE', DOUBLE),
  /** the stack has a cell at a point other than the last (an exit dump's own stacks have none) */
  col('before_last', 'BOOLEAN', BOOLEAN),
];

export const PER_PROCESS_TABLES = ['snapshots', 'stacks', 'frames', 'mappings', 'cells'] as const;
export type PerProcessTable = (typeof PER_PROCESS_TABLES)[number];

export function createTableSql(name: string, cols: readonly ColumnDef[]): string {
  return `CREATE OR REPLACE TEMP TABLE ${name} (${cols.map((c) => `"${c.name}" ${c.sql}`).join(', ')})`;
}

export function types(cols: readonly ColumnDef[]): DuckDBType[] {
  return cols.map((c) => c.type);
}
