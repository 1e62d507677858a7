// A dataset (written by `heaplens ingest`) given where dumps are expected: every command reads it back as the
// job the dumps would give, with the symbols found at ingest, reading only the cells the command uses.

import { snapshotBySeq } from './snapshot-choice.js';
import { stat } from 'node:fs/promises';
import type { Job, Snapshot } from '../../core/model/model.js';
import { MANIFEST_FILE } from '../dataset/manifest.js';
import { flag, UsageError, type ParsedArgs } from './args.js';
import type { CellPicker, StackChooser } from '../dataset/read-dataset.js';
import { adoptSymbolTables } from './symbols.js';

async function isDatasetFolder(path: string): Promise<boolean> {
  try {
    return (await stat(`${path}/${MANIFEST_FILE}`)).isFile();
  } catch {
    return false;
  }
}

/**
 * The snapshots whose cells a command uses, chosen as the command chooses them (top and export: one per process);
 * true: every snapshot (the other commands, whose choices depend on the whole series).
 */
async function cellPicker(args: ParsedArgs): Promise<true | CellPicker> {
  const pick = (which: string, option: string) => (snaps: readonly Snapshot[]) =>
    snapshotBySeq({ snapshots: [...snaps] }, which, option);
  if (args.command === 'top' || args.command === 'export') {
    const one = pick(flag(args, 'snapshot') ?? 'last', 'snapshot');
    return (snaps) => [one(snaps)];
  }
  return true;
}

/** The dataset folder among the paths, or null when they are dumps. A dataset is read alone. */
export async function datasetPath(paths: readonly string[]): Promise<string | null> {
  const found: string[] = [];
  for (const p of paths) if (await isDatasetFolder(p)) found.push(p);
  if (found.length === 0) return null;
  if (paths.length > 1)
    throw new UsageError(
      `${found[0]} is a dataset: give it alone (ingest the other dumps into it to read them together)`,
    );
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
export async function loadDataset(
  dir: string,
  args: ParsedArgs,
  io: { err: (s: string) => void },
  /** no cells, and only these stacks' frames (by dataset process id): for a ranking done in SQL (growth) */
  onlyStacks?: ReadonlyMap<number, readonly number[]> | StackChooser,
): Promise<DatasetLoad> {
  const { readDataset } = await import('../dataset/read-dataset.js');
  // summary shows snapshot totals only: no cells; top and export read the cells of the snapshot they show
  const ds = await readDataset(
    dir,
    onlyStacks ? { cells: false, onlyStacks } : { cells: args.command === 'summary' ? false : await cellPicker(args) },
  );
  const symbolized = args.command !== 'summary' && (await adoptSymbolTables(ds.job, args, io));
  return { job: ds.job, symbolized };
}
