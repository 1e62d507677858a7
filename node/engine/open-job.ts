// Opening a job from paths in Node, for every front-end alike (the CLI's commands, `heaplens open`, the desktop
// app's engine): files and folders expanded with their side files (node/io/node-files.ts), or a dataset folder
// written by `heaplens ingest` (read through DuckDB, node/dataset/), the dumps read by a loader the caller picks
// (the CLI's pool or in-thread read; the engine's progressive load), then symbolized from this machine's files.
// It knows no command-line type: options are plain data.

import { stat } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { Job } from '../../core/model/model.js';
import type { LoadProgress } from '../../core/model/vocab.js';
import type { InputFile } from '../../core/formats/input-file.js';
import type { SymbolProblem } from '../../core/symbolize/symbolize-job.js';
import { collectInputFiles, type CollectProblem } from '../io/node-files.js';
import { MANIFEST_FILE } from '../dataset/manifest.js';
import type { CellPicker, StackChooser } from '../dataset/read-dataset.js';
import { prepareSymbolizer, storedSymbolProblems, symbolizeOnDisk, type SymbolOptions } from './symbolize.js';

// The model may take this share of the machine's memory: the rest is for the workers' buffers, the
// views built from it, and the other programs of a shared machine.
const MEMORY_SHARE = 0.6;

// ... and at most this share of V8's heap limit: the stack table and the addresses live on the JS heap, and the
// commands build their views there after the load (a dump of 10^7 stacks used to load and then die of V8's heap).
const HEAP_SHARE = 0.4;

/**
 * The model's memory budget: HEAPLENS_MEMORY_LIMIT (bytes, or with K/M/G), or a share of RAM and at most a share
 * of V8's heap limit (node --max-old-space-size raises it).
 */
export function memoryBudget(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.HEAPLENS_MEMORY_LIMIT;
  const m = v ? /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)b?\s*$/i.exec(v) : null;
  if (m) return Number(m[1]) * { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.floor(Math.min(totalmem() * MEMORY_SHARE, getHeapStatistics().heap_size_limit * HEAP_SHARE));
}

/** A dataset among other paths: a dataset is read alone. */
export class DatasetNotAloneError extends Error {
  constructor(readonly dataset: string) {
    super(`${dataset} is a dataset: give it alone (ingest the other dumps into it to read them together)`);
    this.name = 'DatasetNotAloneError';
  }
}

async function isDatasetFolder(path: string): Promise<boolean> {
  try {
    // the path itself first: a dump's stat succeeds, where `dump/manifest` fails, and a failed stat builds an
    // error with its stack (a shell's glob of 200 dumps spent ~8 ms of the start on those)
    if (!(await stat(path)).isDirectory()) return false;
    return (await stat(`${path}/${MANIFEST_FILE}`)).isFile();
  } catch {
    return false;
  }
}

/** The dataset folder among the paths, or null when they are dumps; DatasetNotAloneError when it is not alone. */
export async function datasetPath(paths: readonly string[]): Promise<string | null> {
  // asked all at once: a shell's glob names hundreds of dumps, and one stat after another took ~10 ms of the start
  const isDataset = await Promise.all(paths.map(isDatasetFolder));
  const found = paths.filter((_, i) => isDataset[i]);
  if (found.length === 0) return null;
  if (paths.length > 1) throw new DatasetNotAloneError(found[0]);
  return found[0];
}

/** How the dumps are read into a job (the CLI's loader; the engine's progressive load). */
/** `problems`: the paths that could not be read, for the loader to show with the job (the CLI adds them itself). */
export type DumpsLoader = (files: InputFile[], problems: readonly CollectProblem[]) => Promise<Job | null>;

export interface OpenJobOptions {
  /** where binaries are looked for; null: no symbolization (module+offset frames) */
  symbols: SymbolOptions | null;
  /** reads the dumps */
  loadDumps: DumpsLoader;
  /** what of a dataset to read: every cell (true), none (false: snapshot totals), a picker, or only some stacks */
  datasetCells?: boolean | CellPicker;
  datasetStacks?: ReadonlyMap<number, readonly number[]> | StackChooser;
  /** a dataset's stored symbols are kept unless symbols are asked for anew (`--symbols`/`--sysroot` given) */
  symbolsAskedAnew?: boolean;
  /** symbolize after reading (false: `summary`, which shows no frame) */
  symbolize?: boolean;
  /**
   * false: the caller symbolizes what needs it itself (the CLI, after --pid narrowed the job; the engine's progressive
   * load, before its full job is shown), dumps or a dataset whose stored symbols are dropped; stored symbols are
   * still taken
   */
  symbolizeHere?: boolean;
  /** the symbolizer's progress, cancel */
  signal?: AbortSignal;
  onSymbolProgress?: (p: LoadProgress) => void;
  /** V8 flags to set before the symbolizer's WASM compile (the CLI's) */
  beforeSymbolizerCompile?: () => void;
}

export interface OpenedJob {
  /** null: nothing could be read (the loader said why) */
  job: Job | null;
  dataset: string | null;
  /** the files the paths expanded to (none for a dataset) */
  files: InputFile[];
  /** paths that could not be read or listed */
  problems: CollectProblem[];
  /** symbolization's problems (modules not found, mismatched builds), for the caller to show */
  symbolProblems: SymbolProblem[];
  /** the job's frames are symbolized (here, or at ingest) */
  symbolized: boolean;
}

/** Opens the job the paths name. Errors: DatasetNotAloneError; a dataset's DatasetError (file named). */
export async function openJob(paths: readonly string[], o: OpenJobOptions): Promise<OpenedJob> {
  const dataset = await datasetPath(paths);
  const symbolize = (o.symbolize ?? true) && o.symbols !== null;
  // The symbolizer (modules, WASM compile) loads while the dumps are read.
  if (symbolize && !dataset) prepareSymbolizer(o.beforeSymbolizerCompile);
  const problems: CollectProblem[] = [];
  if (dataset) {
    const { readDataset } = await import('../dataset/read-dataset.js');
    const ds = await readDataset(
      dataset,
      o.datasetStacks ? { cells: false, onlyStacks: o.datasetStacks } : { cells: o.datasetCells ?? true },
    );
    const job = ds.job;
    let symbolProblems: SymbolProblem[] = [];
    let symbolized = false;
    if (o.symbolize ?? true) {
      if (o.symbols === null || o.symbolsAskedAnew) {
        for (const p of job.processes) p.symbols = null;
        if (o.symbols && o.symbolizeHere !== false) {
          symbolProblems = await symbolizeOnDisk(job, o.symbols, [], symbolExtras(o));
          symbolized = true;
        }
      } else {
        symbolProblems = await storedSymbolProblems(job);
        symbolized = true;
      }
    }
    return { job, dataset, files: [], problems, symbolProblems, symbolized };
  }
  const files = await collectInputFiles(paths, problems);
  const job = await o.loadDumps(files, problems);
  let symbolProblems: SymbolProblem[] = [];
  if (job && symbolize && o.symbols && o.symbolizeHere !== false)
    symbolProblems = await symbolizeOnDisk(job, o.symbols, files, symbolExtras(o));
  const symbolized = symbolize && job !== null && o.symbolizeHere !== false;
  return { job, dataset: null, files, problems, symbolProblems, symbolized };
}

function symbolExtras(o: OpenJobOptions): Parameters<typeof symbolizeOnDisk>[3] {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onSymbolProgress ? { onProgress: o.onSymbolProgress } : {}),
  };
}
