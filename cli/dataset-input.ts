// A dataset (written by `heaplens ingest`) given where dumps are expected: every command reads it back as the
// job the dumps would give, with the symbols found at ingest; `growth` ranks in DuckDB without the cells.

import { stat } from 'node:fs/promises';
import type { StackGrowth } from '../analysis/growth.js';
import type { Job, ProcessSeries, Snapshot } from '../analysis/model.js';
import { MANIFEST_FILE } from '../dataset/schema.js';
import { flag, has, intFlag, UsageError, type ParsedArgs } from './args.js';
import type { CellPicker } from '../dataset/read-dataset.js';
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

/** The snapshots whose cells a command uses, chosen as the command chooses them; true: every snapshot. */
async function cellPicker(args: ParsedArgs): Promise<true | CellPicker> {
  const { snapshotBySeq } = await import('./report-command.js');
  const pick = (which: string, option: string) => (snaps: readonly Snapshot[]) => snapshotBySeq({ snapshots: [...snaps] }, which, option);
  if (args.command === 'top' || args.command === 'export') {
    const one = pick(flag(args, 'snapshot') ?? 'last', 'snapshot');
    return (snaps) => [one(snaps)];
  }
  if (args.command === 'diff') {
    const base = flag(args, 'base');
    const target = flag(args, 'target');
    return (snaps) => [base === undefined ? 0 : pick(base, 'base')(snaps), target === undefined ? snaps.length - 1 : pick(target, 'target')(snaps)];
  }
  return true;
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
  if (args.command === 'growth') {
    // ranked in SQL; only the stacks the command prints are read (those that grew, top n per process)
    const { datasetGrowth } = await import('../dataset/growth-sql.js');
    const byId = await datasetGrowth(dir);
    const n = intFlag(args, 'top', 20);
    const only = new Map([...byId].map(([id, list]) => [id, list.filter((g) => g.deltaBytes > 0).slice(0, n).map((g) => g.stackId)] as const));
    // symbolizing again (--symbols, --sysroot) reads every address, so it needs the whole series
    const resymbolize = has(args, 'symbols') || has(args, 'sysroot');
    const ds = await readDataset(dir, resymbolize ? { cells: false } : { cells: false, onlyStacks: only });
    for (const p of ds.job.processes) ranked.set(p, byId.get(ds.ids.get(p)!) ?? []);
    return { job: ds.job, symbolized: await adoptSymbolTables(ds.symbols, args, io) };
  }
  // summary shows snapshot totals only: no cells; top, diff and export read the cells of the snapshots they show
  const ds = await readDataset(dir, { cells: args.command === 'summary' ? false : await cellPicker(args) });
  const symbolized = args.command !== 'summary' && (await adoptSymbolTables(ds.symbols, args, io));
  return { job: ds.job, symbolized };
}
