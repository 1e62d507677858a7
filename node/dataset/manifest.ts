// The manifest that marks a dataset folder. Apart from schema.ts so that finding a dataset (every CLI command
// checks its paths) does not load DuckDB's native addon.

export const DATASET_FORMAT = 'heaplens-dataset';
/**
 * Bumped when a table changes incompatibly; a reader refuses a dataset of another version, naming its manifest.
 * 2: processes.host and host_from, and the per-(process, stack) `series` statistics (datasets opened together).
 */
export const DATASET_VERSION = 2;
/** Names starting with "_" are skipped by Spark, Hive and Trino when they list a table's files. */
export const MANIFEST_FILE = '_heaplens.json';

export interface Manifest {
  format: typeof DATASET_FORMAT;
  version: number;
  writer: string;
  /** ISO time of the last ingest run */
  updated: string;
  /** ingest runs so far (names the cells files each run added) */
  runs: number;
}
