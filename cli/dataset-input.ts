// A dataset (written by `heaplens ingest`) given where dumps are expected: every command reads it back as the
// job the dumps would give, with the symbols found at ingest; `growth` ranks in DuckDB without the cells.

import { stat } from 'node:fs/promises';
import type { StackGrowth } from '../analysis/growth.js';
import type { Job, ProcessSeries } from '../analysis/model.js';
import { MANIFEST_FILE } from '../dataset/schema.js';
import { UsageError, type ParsedArgs } from './args.js';
import { adoptSymbolTables } from './symbols.js';

const ranked = new WeakMap<ProcessSeries, StackGrowth[]>();

/** Growth ranked by DuckDB for a process read from a dataset (undefined for dumps: rankGrowth ranks them). */
export function precomputedGrowth(p: ProcessSeries): StackGrowth[] | undefined {
  return ranked.get(p);
}

async function isDatasetFolder(path: string): Promise<boolean> {
  try {
    return (await stat(`${path}/${MANIFEST_FILE}`)).isFile();
  } catch {
    return false;
  }
}

/** The dataset folder among the paths, or null when they are dumps. A dataset is read alone. */
export async function datasetPath(paths: readonly string[]): Promise<string | null> {
  const found: string[] = [];
  for (const p of paths) if (await isDatasetFolder(p)) found.push(p);
  if (found.length === 0) return null;
  if (paths.length > 1) throw new UsageError(`${found[0]} is a dataset: give it alone (ingest the other dumps into it to read them together)`);
  return found[0];
}

export interface DatasetLoad {
  job: Job;
  /** true when the dataset's symbols were taken (no symbolizing needed) */
  symbolized: boolean;
}

/**
 * Reads the dataset for `args.command`. A DatasetError (missing or damaged file) propagates with the file's name.
 * DuckDB (a native addon) is loaded only here, so commands on dumps never load it.
 */
export async function loadDataset(dir: string, args: ParsedArgs, io: { err: (s: string) => void }): Promise<DatasetLoad> {
  const { readDataset } = await import('../dataset/read-dataset.js');
  const growth = args.command === 'growth';
  // summary shows snapshot totals only; growth ranks in SQL: neither needs the cells in memory
  const ds = await readDataset(dir, { cells: !growth && args.command !== 'summary' });
  if (growth) {
    const { datasetGrowth } = await import('../dataset/growth-sql.js');
    const byId = await datasetGrowth(dir);
    for (const p of ds.job.processes) ranked.set(p, byId.get(ds.ids.get(p)!) ?? []);
  }
  const symbolized = args.command !== 'summary' && (await adoptSymbolTables(ds.symbols, args, io));
  return { job: ds.job, symbolized };
}
