// What a command reads: dumps, files and folders, or a dataset folder written by `heaplens ingest`, narrowed by
// --pid, with the sample's values where a command asks for them. Every command on a job loads through here. A
// dataset is read back as the job the dumps would give, with the symbols found at ingest, reading only the cells the
// command uses.

import type { Job } from '../../core/model/model.js';
import { datasetPaths as datasetsAmong, DatasetsMixedError, openJob } from '../engine/open-job.js';
import { symbolizeOnDisk } from '../engine/symbolize.js';
import type { CellPicker, StackChooser } from '../dataset/read-dataset.js';
import { flag, has, UsageError, type ParsedArgs } from './args.js';
import { loadDumps, loadDumpsOrSay } from './load-dumps.js';
import { defaultSnapshot, snapshotBySeq } from '../../core/query/snapshot-choice.js';
import type { TeardownInput } from '../../core/model/series-end.js';
import { printSymbolProblems, symbolOptionsOf } from './symbols.js';
import { applyCliV8Flags } from './v8-flags.js';
import { onlyPid, printWarnings, type Output } from './common.js';
import {
  DEFAULT_SAMPLE_TYPE,
  jobDefaultSample,
  jobRecordsLive,
  parseSampleType,
  resolveSampleType,
  type SampleType,
} from '../../core/model/sample-type.js';

/** A command over a loaded (and, unless it is `summary`, symbolized) job. */
export type JobCommand = (job: Job, args: ParsedArgs, io: Output) => Promise<void> | void;

/**
 * Loads the job the arguments name and runs `cmd` on it; 1 when nothing could be read, else 0. `jobSample: false`:
 * the command keeps its own sample (growth and postmortem read live bytes), so no note claims the profiles' default
 * — unless the profiles record no live bytes (allocation profiles): then their default, with the note.
 */
export async function withJob(
  args: ParsedArgs,
  io: Output,
  cmd: JobCommand,
  opts: { jobSample?: boolean } = {},
): Promise<number> {
  const job = await loadInput(args, io);
  if (!job) return 1;
  await cmd(job, opts.jobSample === false && jobRecordsLive(job) ? args : withJobSample(job, args), io);
  return 0;
}

/**
 * The arguments with the job's own default sample type (pprof's default_sample_type, jobDefaultSample) as
 * `--sample` when none was given, so every command counts what the profiles ask for; a note says so.
 */
export function withJobSample(job: Job, args: ParsedArgs): ParsedArgs {
  const d = jobDefaultSample(job);
  if (has(args, 'sample') || d === DEFAULT_SAMPLE_TYPE) return args;
  job.warnings.push({
    file: job.processes[0]?.snapshots[0]?.file ?? '',
    message: `values are ${d}, the profiles' default_sample_type (${jobRecordsLive(job) ? '--sample inuse_space for live bytes' : 'they record no live bytes'})`,
  });
  return { ...args, flags: new Map([...args.flags, ['sample', [d]]]) };
}

/**
 * The job the arguments name, symbolized unless the command is `summary` (or the dataset stored its symbols), or
 * null after saying why there is nothing to show. Opened by the one Node function every front-end uses
 * (node/engine/open-job.ts); what is the CLI's own here is the two-dump diff, --pid and --sample.
 */
export async function loadInput(
  args: ParsedArgs,
  io: Output,
  opts: {
    /** given: the job comes back unsymbolized and this receives what symbolizes it (a report ranks first) */
    symbolizeLater?: (symbolize: () => Promise<void>) => void;
  } = {},
): Promise<Job | null> {
  if (args.positional.length === 0) throw new UsageError(`"${args.command}" needs at least one file or folder`);
  let opened;
  try {
    opened = await openJob(args.positional, {
      symbols: symbolOptionsOf(args),
      symbolsAskedAnew: has(args, 'symbols') || has(args, 'sysroot'),
      symbolize: args.command !== 'summary',
      // after --pid below: only the processes shown are symbolized
      symbolizeHere: false,
      beforeSymbolizerCompile: applyCliV8Flags,
      // summary shows snapshot totals only: no cells; top and export read the cells of the snapshot they show
      datasetCells: args.command === 'summary' ? false : await cellPicker(args),
      loadDumps: (files) => loadDumpsOrSay(files, io.err),
    });
  } catch (e) {
    if (e instanceof DatasetsMixedError) throw new UsageError(e.message);
    throw e;
  }
  const { dataset, files, problems } = opened;
  if (!opened.job) return null;
  let job = opened.job;
  if (
    !dataset &&
    args.command === 'diff' &&
    files.length === 2 &&
    args.positional.length === 2 &&
    job.processes.length === 2 &&
    !has(args, 'base') &&
    !has(args, 'target')
  ) {
    // Two dumps of different processes: compare them as one series of two snapshots.
    const [a, b] = job.processes;
    job = await loadDumps(files, { singleSeries: true });
    job.warnings.push({
      file: args.positional[1],
      message: `base and target come from different processes (pid ${a.pid ?? '?'} and ${b.pid ?? '?'}): stacks are matched by raw return address, which differs between processes under ASLR unless the binaries were loaded at the same addresses`,
    });
  }
  printSymbolProblems(opened.symbolProblems, args, io);
  const all = job;
  job = onlyPid(job, args);
  for (const p of problems) job.warnings.unshift({ file: p.path, message: p.message });
  if (job.processes.length === 0) {
    noProcess(all, job, args, io, dataset ? undefined : files.length);
    return null;
  }
  const asked = flag(args, 'sample');
  const resolved = asked === undefined ? null : resolveSampleType(asked, job);
  if (resolved !== null && typeof resolved !== 'string') throw new UsageError(resolved.error);
  const options = symbolOptionsOf(args);
  if (args.command !== 'summary' && !opened.symbolized && options) {
    const shown = job;
    const symbolize = async () => printSymbolProblems(await symbolizeOnDisk(shown, options, files), args, io);
    if (opts.symbolizeLater) opts.symbolizeLater(symbolize);
    else await symbolize();
  }
  return job;
}

/**
 * No process to show: the warnings, then why in one line, and exit status 1. With --pid and processes read, the
 * line lists them; with none read, it says how many files were looked at and what they were.
 */
export function noProcess(all: Job, job: Job, args: ParsedArgs, io: Output, filesSeen?: number): number {
  if (has(args, 'json')) io.out(JSON.stringify({ processes: [], stacks: [], warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
  io.err(`heaplens: ${noProcessReason(all, flag(args, 'pid'), args.positional, filesSeen)}`);
  return 1;
}

/** The one line that says why there is nothing to show. */
export function noProcessReason(
  all: Pick<Job, 'processes' | 'ignoredFiles'>,
  pid: string | undefined,
  paths: readonly string[],
  filesSeen?: number,
): string {
  if (pid !== undefined && all.processes.length > 0) {
    const pids = all.processes.map((p) => (p.pid === null ? p.key : String(p.pid)));
    return `no process ${pid}; the processes are ${listed(pids, 20)}`;
  }
  const where = paths.join(', ');
  if (filesSeen === 0) return `no heap profile could be read from ${where}: no files there`;
  const ignored = all.ignoredFiles;
  if (ignored.length > 0 && filesSeen !== undefined)
    return `no heap profile could be read from ${where}: ${filesSeen} file${filesSeen === 1 ? '' : 's'} looked at, none a jemalloc heap dump (.heap, .heap.gz) — ${listed(ignored, 5)}`;
  return `no heap profile could be read from ${where}`;
}

/** At most `max` items, then how many more. */
function listed(items: readonly string[], max: number): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** The --sample value: a built-in type (aliases resolved), else the declared type's name (checked by loadInput). */
export function sampleOf(args: ParsedArgs): SampleType {
  const v = flag(args, 'sample') ?? DEFAULT_SAMPLE_TYPE;
  return parseSampleType(v) ?? v;
}

/**
 * The snapshots whose cells a command uses, chosen as the command chooses them (top and export: one per process);
 * true: every snapshot (the other commands, whose choices depend on the whole series).
 */
async function cellPicker(args: ParsedArgs): Promise<true | CellPicker> {
  const pick = (which: string, option: string) => (p: TeardownInput) => snapshotBySeq(p, which, option);
  if (args.command === 'top' || args.command === 'export') {
    const which = flag(args, 'snapshot');
    // top without --snapshot reads the series' end, as the command does (snapshot-choice.ts)
    const one = which === undefined && args.command === 'top' ? defaultSnapshot : pick(which ?? 'last', 'snapshot');
    return (p) => [one(p)];
  }
  return true;
}

/** The dataset folders among the paths (opened together as one job), or null when they are dumps. */
export async function datasetPaths(paths: readonly string[]): Promise<string[] | null> {
  try {
    return await datasetsAmong(paths);
  } catch (e) {
    if (e instanceof DatasetsMixedError) throw new UsageError(e.message);
    throw e;
  }
}

export interface DatasetLoad {
  job: Job;
  /** true when the dataset's symbols were taken (no symbolizing needed) */
  symbolized: boolean;
}

/**
 * Reads datasets (one job) with no cells and only the stacks `onlyStacks` names, for a ranking done in SQL (growth),
 * through the one opening of a job (node/engine/open-job.ts): its stored symbols taken, or dropped for
 * --symbols/--sysroot (the command symbolizes after --pid) and --no-symbols. A DatasetError (missing or damaged file)
 * propagates with the file's name.
 */
export async function loadDataset(
  dirs: readonly string[],
  args: ParsedArgs,
  io: { err: (s: string) => void },
  onlyStacks: StackChooser,
): Promise<DatasetLoad> {
  const opened = await openJob(dirs, {
    symbols: symbolOptionsOf(args),
    symbolsAskedAnew: has(args, 'symbols') || has(args, 'sysroot'),
    symbolizeHere: false,
    datasetStacks: onlyStacks,
    loadDumps: async () => null,
  });
  printSymbolProblems(opened.symbolProblems, args, io);
  if (!opened.job) throw new Error(`${dirs.join(', ')}: the dataset gave no job`);
  return { job: opened.job, symbolized: opened.symbolized };
}
