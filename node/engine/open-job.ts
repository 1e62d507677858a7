// Opening a job from paths in Node, for every front-end alike (the CLI's commands, `heaplens open`, the desktop
// app's engine): files and folders expanded with their side files (node/io/node-files.ts), or a dataset folder
// written by `heaplens ingest`, or several (each node's of one job, opened as one: read through DuckDB,
// node/dataset/), the dumps read by a loader the caller picks
// (the CLI's pool or in-thread read; the engine's progressive load), then symbolized from this machine's files.
// It knows no command-line type: options are plain data.

import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
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

/** Datasets and dumps given together: datasets open together, dumps are ingested into one first. */
export class DatasetsMixedError extends Error {
  constructor(
    readonly dataset: string,
    readonly other: string,
  ) {
    super(
      `${dataset} is a dataset and ${other} is not: give datasets only (they open together as one job), or ingest the dumps into a dataset first`,
    );
    this.name = 'DatasetsMixedError';
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

/**
 * The dataset folders among the paths (each node's dataset of a job, opened together), or null when they are dumps;
 * DatasetsMixedError when some are datasets and some are not. The same folder given twice is read once.
 */
export async function datasetPaths(paths: readonly string[]): Promise<string[] | null> {
  // asked all at once: a shell's glob names hundreds of dumps, and one stat after another took ~10 ms of the start
  const isDataset = await Promise.all(paths.map(isDatasetFolder));
  const found = paths.filter((_, i) => isDataset[i]);
  if (found.length === 0) return null;
  const other = paths.find((_, i) => !isDataset[i]);
  if (other !== undefined) throw new DatasetsMixedError(found[0], other);
  const seen = new Set<string>();
  return found.filter((d) => {
    const k = resolve(d);
    return seen.size < seen.add(k).size;
  });
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
  datasetStacks?: StackChooser;
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
  /** the first dataset read, null for dumps */
  dataset: string | null;
  /** every dataset read as this job (empty for dumps; one left out for a damaged file is named in the warnings) */
  datasets: string[];
  /** the files the paths expanded to (none for a dataset) */
  files: InputFile[];
  /** paths that could not be read or listed */
  problems: CollectProblem[];
  /** symbolization's problems (modules not found, mismatched builds), for the caller to show */
  symbolProblems: SymbolProblem[];
  /** the job's frames are symbolized (here, or at ingest) */
  symbolized: boolean;
}

/** Opens the job the paths name. Errors: DatasetsMixedError; a dataset's DatasetError (file named). */
export async function openJob(paths: readonly string[], o: OpenJobOptions): Promise<OpenedJob> {
  const datasets = await datasetPaths(paths);
  const symbolize = (o.symbolize ?? true) && o.symbols !== null;
  // The symbolizer (modules, WASM compile) loads while the dumps are read.
  if (symbolize && !datasets) prepareSymbolizer(o.beforeSymbolizerCompile);
  const problems: CollectProblem[] = [];
  if (datasets) {
    const read = o.datasetStacks ? { cells: false, onlyStacks: o.datasetStacks } : { cells: o.datasetCells ?? true };
    let job: Job;
    let dirs = datasets;
    if (datasets.length === 1) {
      const { readDataset } = await import('../dataset/read-dataset.js');
      job = (await readDataset(datasets[0], read)).job;
    } else {
      // each node's dataset of one job: one job, as the dumps loaded together give it
      const { readDatasets } = await import('../dataset/read-dataset.js');
      const ds = await readDatasets(datasets, read);
      job = ds.job;
      dirs = ds.dirs;
    }
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
    return { job, dataset: dirs[0], datasets: dirs, files: [], problems, symbolProblems, symbolized };
  }
  const files = await collectInputFiles(paths, problems);
  const job = await o.loadDumps(files, problems);
  let symbolProblems: SymbolProblem[] = [];
  if (job && symbolize && o.symbols && o.symbolizeHere !== false)
    symbolProblems = await symbolizeOnDisk(job, o.symbols, files, symbolExtras(o));
  const symbolized = symbolize && job !== null && o.symbolizeHere !== false;
  return { job, dataset: null, datasets: [], files, problems, symbolProblems, symbolized };
}

function symbolExtras(o: OpenJobOptions): Parameters<typeof symbolizeOnDisk>[3] {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onSymbolProgress ? { onProgress: o.onSymbolProgress } : {}),
  };
}
