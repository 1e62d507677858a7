// The manifest that marks a dataset folder. Apart from schema.ts so that finding a dataset (every CLI command
// checks its paths) does not load DuckDB's native addon.

import { createHash } from 'node:crypto';

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
  /**
   * The job's evidence files (kernel logs, launcher and job logs, cgroup memory files, smaps_rollup) kept in
   * `evidence/`, in the order ingest was given them; absent in datasets written before they were kept (read as a
   * job without evidence).
   */
  evidence?: EvidenceCopy[];
}

/** One evidence file as ingest was given it, and its copy (its first MAX_EVIDENCE_BYTES bytes) in the dataset. */
export interface EvidenceCopy {
  /** the path as given to ingest (node scoping, warnings and kill evidence name it, as on the dumps) */
  path: string;
  /** the original's size (a copy holds at most MAX_EVIDENCE_BYTES: the reader then says only those were read) */
  size: number;
  mtimeMs: number | null;
  /** the copy, relative to the dataset folder: always `evidence/<32 hex>` (EVIDENCE_COPY) */
  copy: string;
}

export const EVIDENCE_DIR = 'evidence';
/** The only form a copy's name may have: no folder, no `..`, nothing outside `evidence/`. */
export const EVIDENCE_COPY = /^evidence\/[0-9a-f]{32}$/;

/** The copy of the evidence file at `path` (the same path given again replaces its copy). */
export function evidenceCopyName(path: string): string {
  return `${EVIDENCE_DIR}/${createHash('sha256').update(path).digest('hex').slice(0, 32)}`;
}
