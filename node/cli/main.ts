// heaplens command line: summary, top, diff, growth over dumps, files or folders.
// Exit codes: 0 success, 1 nothing could be read, 2 usage error.

import { gpuJson, gpuText } from './gpu-output.js';
import { loadDumps, loadDumpsOrSay } from './load-dumps.js';
import type { Job, ProcessSeries, Snapshot } from '../../core/model/model.js';
import { diffSnapshots, diffTotals } from '../../core/stats/diff.js';
import { lastCompleteIndex } from '../../core/model/snapshot-status.js';
import { denseVariances, deltaSigma, withinNoise } from '../../core/model/sampling-error.js';
import { escapeControlsInJson, revealControls } from '../../core/model/display-text.js';
import { collectInputFiles, type CollectProblem } from '../io/node-files.js';
import { checkFlags, flag, has, intFlag, parseArgs, sliceFilter, UsageError, type ParsedArgs } from './args.js';
import { atGranularity, frameKey, type Granularity } from '../../core/frames/stack-filter.js';
import { foldsJson } from '../../core/frames/view.js';
import type { Frame } from '../../core/frames/describe.js';
import { stackText as foldedStackText } from './stack-text.js';
import { DEFAULT_STACK_MODE } from '../../core/frames/python-stacks.js';
import type { FoldedStack } from '../../core/frames/stack-labels.js';
import {
  DEFAULT_SAMPLE_TYPE,
  parseSampleType,
  sampleSeries,
  sampleUnavailable,
  sampleUnit,
  type SampleType,
} from '../../core/model/sample-type.js';
import { formatBytes, formatInt, formatPercent, formatSignedBytes, table, wrapLines } from './format.js';
import {
  jobParents,
  processContextJson,
  processContextText,
  snapshotContextCells,
  snapshotContextJson,
} from './context-output.js';
import { prepareSymbols, SYMBOL_FLAGS, SYMBOL_USAGE, symbolizeJob } from './symbols.js';
import { missingBinaries } from '../../core/symbolize/missing-binaries.js';
import { datasetPath, loadDataset } from './dataset-input.js';
import { snapshotBySeq } from './snapshot-choice.js';
import {
  granularityOf,
  indent,
  noProcess,
  onlyPid,
  printWarnings,
  processJson,
  processTitle,
  snapshotJson,
  tableColumns,
  viewer,
  type Output,
  type Viewer,
} from './common.js';
export type { Output } from './common.js';

/**
 * The usage text. The report and export commands (and the core/report/export code they import) are loaded only
 * when they run or when this text is shown, so `top`, `diff` and the rest start faster.
 */
async function usage(): Promise<string> {
  const { EXPORT_USAGE, REPORT_USAGE } = await import('./report-command.js');
  const { INGEST_USAGE } = await import('./ingest-command.js');
  return `heaplens — offline analyzer for jemalloc heap profiles

usage:
  heaplens summary <paths…>                       processes, their snapshots, warnings
  heaplens top <paths…> [--snapshot last|first|<seq>] [-n 20]
                                                  stacks by live bytes in one snapshot
  heaplens diff <base> <target> [-n 20]           stacks by growth between two dumps
  heaplens diff <paths…> [--base <seq> --target <seq>] [-n 20]
                                                  …or within each process (default first → last)
  heaplens growth <paths…> [-n 20]                job-wide suspects (patterns, σ, groups), then each process
  heaplens postmortem <paths…> [--limit <bytes|file>] [-n 10]
                                                  who died, when, the top suspects; time to the limit
  heaplens binaries <paths…> [--snapshot last]    modules whose frames stay unresolved, the bytes
                                                  through them, and what to hand over (--symbols)
${REPORT_USAGE}
${EXPORT_USAGE}
${INGEST_USAGE}

options:
  --json             one JSON document on stdout (shape: README.md, "CLI JSON")
  --show-allocator   keep the allocator's own frames at the top of stacks
  --pid <pid>        only this process
  --stacks python-first|merged|python|native
                     python-first (default): Python frames and the native frames that are not the
                     interpreter's own, which fold into "[+N interpreter frames]"; merged: Python
                     frames in place of the eval loop's, every other frame kept; Python frames
                     only; native frames only
  --fold-imports     fold import-machinery frames (<frozen importlib._bootstrap…>) too
  --sample inuse_space|inuse_objects|alloc_space|alloc_objects
                     what to count (pprof's names; space/objects = inuse_*): live bytes (default),
                     live objects, or bytes/objects allocated since start (needs prof_accum:true)
  --focus RE         only stacks with a frame whose function, file or module path matches (pprof -focus)
  --ignore RE        drop stacks with a matching frame (pprof -ignore)
  --hide RE          remove matching frames from stacks (pprof -hide)
  --show RE          keep only matching frames in stacks (pprof -show)
  --granularity lines|functions|files
                     what a frame is when stacks are grouped and shown (default lines)
${SYMBOL_USAGE}
Paths may be dump files (.heap, .heap.gz), maps files, or folders (read recursively), or one dataset
folder written by ingest (every command reads it as it would read the dumps).`;
}

const COMMON = ['json', 'show-allocator', 'pid', 'help', 'stacks', 'fold-imports', 'sample'];
/** what the stack-listing commands add: pprof's slicing options */
const SLICING = ['focus', 'ignore', 'hide', 'show', 'granularity'];

export async function run(argv: readonly string[], rawIo: Output): Promise<number> {
  const safe: Output = {
    ...terminalSafe(
      rawIo,
      argv.includes('--json') || argv.includes('speedscope') || argv.includes('--format=speedscope'),
    ),
    columns: rawIo.columns,
  };
  let args: ParsedArgs;
  let io = safe;
  try {
    args = parseArgs(argv);
    const columns = rawIo.columns;
    // Text output fits the terminal (tables cut their stack column; longer lines wrap); JSON is left whole, and
    // so is the list of binaries to hand over (paths to copy).
    if (columns !== undefined && !has(args, 'json') && args.command !== 'binaries')
      io = { ...safe, out: (s) => safe.out(wrapLines(s, columns)) };
    if (args.command === 'help' || args.command === '--help' || args.command === '-h' || has(args, 'help')) {
      io.out(await usage());
      return 0;
    }
    switch (args.command) {
      case 'summary':
        checkFlags(args, COMMON);
        return await withJob(args, io, summary);
      case 'top':
        checkFlags(args, [...COMMON, ...SLICING, ...SYMBOL_FLAGS, 'snapshot', 'top']);
        return await withJob(args, io, top);
      case 'diff':
        checkFlags(args, [...COMMON, ...SLICING, ...SYMBOL_FLAGS, 'base', 'target', 'top']);
        return await withJob(args, io, diff);
      case 'growth': {
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'top']);
        const g = await import('./growth-command.js');
        const dataset = await datasetPath(args.positional);
        // on a dataset the ranking runs over its cells in SQL; other sample types rebuild the job's columns
        if (dataset && sampleOf(args) === DEFAULT_SAMPLE_TYPE) return await g.growthOnDataset(dataset, args, io);
        return await withJob(args, io, (job, a, o) => g.growth(sampledJob(job, a), a, o));
      }
      case 'postmortem': {
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'top', 'limit']);
        const pm = await import('./postmortem-command.js');
        const limit = await pm.readLimit(args);
        return await withJob(args, io, (job, a, o) => pm.postmortemCommand(sampledJob(job, a), a, o, limit));
      }
      case 'binaries':
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'snapshot']);
        if (has(args, 'no-symbols'))
          throw new UsageError('"binaries" symbolizes to find what is missing: drop --no-symbols');
        return await withJob(args, io, binaries);
      case 'report':
        return await (await import('./report-command.js')).reportCommand(args, io);
      case 'export':
        return await (await import('./export-command.js')).exportCommand(args, io);
      case 'ingest':
        return await (await import('./ingest-command.js')).ingestCommand(args, io);
      default:
        throw new UsageError(`unknown command "${args.command}"`);
    }
  } catch (e) {
    // A dataset with a missing or damaged file (node/dataset/read-dataset.ts): the message names the file.
    if (e instanceof Error && e.name === 'DatasetError') {
      io.err(`heaplens: ${e.message}`);
      return 1;
    }
    if (e instanceof UsageError) {
      io.err(`heaplens: ${e.message}\n\n${await usage()}`);
      return 2;
    }
    throw e;
  }
}

/** Every line the CLI prints passes here: controls and bidi characters from files become visible text. */
function terminalSafe(io: Output, json: boolean): Output {
  return {
    out: (s) => io.out(json ? escapeControlsInJson(s) : revealControls(s)),
    err: (s) => io.err(revealControls(s)),
  };
}

type Command = (job: Job, args: ParsedArgs, io: Output) => Promise<void> | void;

async function withJob(args: ParsedArgs, io: Output, cmd: Command): Promise<number> {
  if (args.positional.length === 0) throw new UsageError(`"${args.command}" needs at least one file or folder`);
  const problems: CollectProblem[] = [];
  const dataset = await datasetPath(args.positional);
  // The symbolizer (modules, WASM compile) loads while the dumps are read.
  if (args.command !== 'summary' && !dataset) prepareSymbols(args);
  const files = dataset ? [] : await collectInputFiles(args.positional, problems);
  const fromDataset = dataset ? await loadDataset(dataset, args, io) : null;
  const loaded = fromDataset?.job ?? (await loadDumpsOrSay(files, io.err));
  if (!loaded) return 1;
  let job = loaded;
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
  job = onlyPid(job, args);
  for (const p of problems) job.warnings.unshift({ file: p.path, message: p.message });
  if (job.processes.length === 0) return noProcess(job, args, io);
  if (args.command !== 'summary' && !fromDataset?.symbolized) await symbolizeJob(job, args, io);
  await cmd(job, args, io);
  return 0;
}

/**
 * The job with the sample's values in every process's columns, for the commands that read the columns only
 * (growth, postmortem); processes without the values are left out with a warning saying why.
 */
function sampledJob(job: Job, args: ParsedArgs): Job {
  if (sampleOf(args) === DEFAULT_SAMPLE_TYPE) return job;
  const processes: ProcessSeries[] = [];
  for (const p of job.processes) {
    const sp = sampled(job, p, args);
    if (sp) processes.push(sp);
  }
  return { ...job, processes };
}

function sampleOf(args: ParsedArgs): SampleType {
  return parseSampleType(flag(args, 'sample') ?? DEFAULT_SAMPLE_TYPE) ?? DEFAULT_SAMPLE_TYPE;
}

/** The process with the sample's values in its columns, or null (and a warning) when its dumps lack them. */
function sampled(job: Job, p: ProcessSeries, args: ParsedArgs): ProcessSeries | null {
  const t = sampleOf(args);
  const sp = sampleSeries(p, t);
  if (!sp) job.warnings.push({ file: p.key, message: sampleUnavailable(p, t) ?? `no ${t} values` });
  return sp;
}

/** Value formatting for the sample: bytes, or counts of objects. */
function valueFormat(args: ParsedArgs): {
  plain: (n: number) => string;
  signed: (n: number) => string;
  unit: 'bytes' | 'objects';
  name: string;
} {
  const t = sampleOf(args);
  const unit = sampleUnit(t);
  if (unit === 'bytes') return { plain: formatBytes, signed: formatSignedBytes, unit, name: t };
  return { plain: formatInt, signed: (n) => (n > 0 ? '+' : n < 0 ? '-' : '') + formatInt(Math.abs(n)), unit, name: t };
}

/** accumulatedBytes/accumulatedObjects of rows of a snapshot, where the dump has them. */
function accumulatedJson(
  s: Snapshot,
  rows: readonly number[],
): { accumulatedBytes?: number; accumulatedObjects?: number } {
  if (!s.hasAccumulated || !s.accumBytes || !s.accumObjects) return {};
  let b = 0;
  let o = 0;
  for (const r of rows) {
    b += s.accumBytes[r];
    o += s.accumObjects[r];
  }
  return { accumulatedBytes: b, accumulatedObjects: o };
}

/** accumulatedBytes/accumulatedObjects of one stack in a snapshot (looked up by stack id), where the dump has them. */
function accumulatedLookup(
  s: Snapshot,
): (stackId: number) => { accumulatedBytes?: number; accumulatedObjects?: number } {
  if (!s.hasAccumulated || !s.accumBytes || !s.accumObjects) return () => ({});
  const row = new Map<number, number>();
  s.stackIds.forEach((id, r) => row.set(id, r));
  return (id) => {
    const r = row.get(id);
    return r === undefined ? { accumulatedBytes: 0, accumulatedObjects: 0 } : accumulatedJson(s, [r]);
  };
}

function summary(job: Job, args: ParsedArgs, io: Output): void {
  const parents = jobParents(job);
  if (has(args, 'json')) {
    io.out(
      JSON.stringify(
        {
          processes: job.processes.map((p) => {
            const ctx = snapshotContextJson(p);
            return {
              ...processJson(p, job),
              ...processContextJson(p, parents),
              ...gpuJson(p),
              snapshots: p.snapshots.map((s, i) => ({ ...snapshotJson(s), ...ctx[i] })),
            };
          }),
          warnings: job.warnings,
          ignoredFiles: job.ignoredFiles,
        },
        null,
        2,
      ),
    );
    return;
  }
  const fmt = valueFormat(args);
  const withSample = fmt.name !== 'inuse_space' && fmt.name !== 'inuse_objects';
  for (const p of job.processes) {
    io.out(processTitle(p));
    for (const l of processContextText(p, parents, job)) io.out(indent(l));
    for (const l of gpuText(p)) io.out(indent(l));
    const extra = snapshotContextCells(p);
    const sp = withSample ? sampled(job, p, args) : p;
    const rows = p.snapshots.map((s, i) => [
      s.seq === null ? '-' : String(s.seq),
      s.trigger,
      ...extra.rows[i],
      formatBytes(s.live.bytes),
      formatInt(s.live.objects),
      ...(withSample ? [sp ? fmt.plain(sp.snapshots[i].live.bytes) : '-'] : []),
      s.truncated
        ? `truncated at byte ${s.truncated.byteOffset}${s.complete ? ' (in its maps: records complete)' : s.headerLiveBytes !== null ? `: records incomplete, header total ${formatBytes(s.headerLiveBytes)}` : ': records incomplete'}`
        : '',
      s.file,
    ]);
    const header = [
      'seq',
      'trigger',
      ...extra.header,
      'live',
      'objects',
      ...(withSample ? [fmt.name] : []),
      'note',
      'file',
    ];
    io.out(
      indent(
        table(header, rows, [
          true,
          false,
          false,
          true,
          true,
          true,
          true,
          true,
          ...(withSample ? [true] : []),
          false,
          false,
        ]),
      ),
    );
    io.out('');
  }
  printWarnings(job.warnings, io);
}

interface TopGroup {
  stackIds: number[];
  rows: number[];
  stack: FoldedStack<Frame>;
  value: number;
  bytes: number;
  objects: number;
}

/** What makes two shown stacks the same row: their surviving frames at the granularity (folded frames do not count). */
function shownKey(stack: FoldedStack<Frame>, g: Granularity): string {
  return atGranularity(stack.frames, g)
    .map((f) => (f.function || f.kind === 'python' || g === 'files' ? frameKey(f, g) : f.address))
    .join(';');
}

/**
 * A snapshot's stacks by the sample's value. Except in the merged view at line granularity without filters (every
 * frame, one row per stack), stacks whose shown frames are the same (they differed only in frames the view hides,
 * folds or does not distinguish) are one row, as in py-spy and pprof.
 */
function topGroups(s: Snapshot, values: Snapshot, view: Viewer, args: ParsedArgs): TopGroup[] {
  const mode = flag(args, 'stacks') ?? DEFAULT_STACK_MODE;
  const g = granularityOf(args);
  const perStack = mode === 'merged' && g === 'lines' && sliceFilter(args).length === 0;
  const order = [...s.stackIds.keys()].sort((a, b) => values.liveBytes[b] - values.liveBytes[a]);
  const byKey = new Map<string, TopGroup>();
  const out: TopGroup[] = [];
  for (const r of order) {
    const stack = view(s.stackIds[r]);
    if (!stack) continue;
    const key = perStack ? String(r) : shownKey(stack, g);
    const grp = byKey.get(key);
    if (grp) {
      grp.stackIds.push(s.stackIds[r]);
      grp.rows.push(r);
      grp.value += values.liveBytes[r];
      grp.bytes += s.liveBytes[r];
      grp.objects += s.liveObjects[r];
    } else {
      const n: TopGroup = {
        stackIds: [s.stackIds[r]],
        rows: [r],
        stack,
        value: values.liveBytes[r],
        bytes: s.liveBytes[r],
        objects: s.liveObjects[r],
      };
      byKey.set(key, n);
      out.push(n);
    }
  }
  return out.sort((a, b) => b.value - a.value);
}

function top(job: Job, args: ParsedArgs, io: Output): void {
  const n = intFlag(args, 'top', 20);
  const which = flag(args, 'snapshot') ?? 'last';
  const json = has(args, 'json');
  const fmt = valueFormat(args);
  const g = granularityOf(args);
  const stacksJson: unknown[] = [];
  const procsJson: unknown[] = [];
  for (const p of job.processes) {
    const sp = sampled(job, p, args);
    if (!sp) continue;
    const si = snapshotBySeq(p, which, 'snapshot');
    if (si < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    const s = p.snapshots[si];
    const values = sp.snapshots[si];
    const all = topGroups(s, values, viewer(p, args), args);
    const shown = all.reduce((a, x) => a + x.value, 0);
    const groups = all.slice(0, n);
    procsJson.push({
      ...processJson(p),
      snapshot: snapshotJson(s),
      sample: fmt.name,
      total: values.live.bytes,
      shownTotal: shown,
    });
    if (!json) {
      const what = fmt.name === 'inuse_space' ? 'live' : fmt.name;
      io.out(
        `${processTitle(p)}\n  snapshot ${s.seq ?? '-'} (${s.trigger}) ${s.file}: ${fmt.plain(values.live.bytes)} ${what}${fmt.name === 'inuse_space' ? ` in ${formatInt(s.live.objects)} objects` : ''}`,
      );
      if (sliceFilter(args).length > 0)
        io.out(`  filters keep ${fmt.plain(shown)} (${formatPercent(shown, values.live.bytes)}) in ${all.length} rows`);
    }
    const rows: string[][] = [];
    groups.forEach((grp, rank) => {
      if (json) {
        stacksJson.push({
          pid: p.pid,
          process: p.key,
          stackId: grp.stackIds[0],
          ...(grp.stackIds.length > 1 ? { stackIds: grp.stackIds } : {}),
          ...(fmt.name !== 'inuse_space' ? { value: grp.value } : {}),
          liveBytes: grp.bytes,
          liveObjects: grp.objects,
          ...accumulatedJson(s, grp.rows),
          frames: grp.stack.frames,
          ...foldsJson(grp.stack),
        });
      } else {
        const objects =
          fmt.unit === 'bytes'
            ? formatInt(fmt.name === 'alloc_space' ? sumRows(values.liveObjects, grp.rows) : grp.objects)
            : fmt.plain(grp.value);
        rows.push([
          String(rank + 1),
          fmt.plain(grp.value),
          formatPercent(grp.value, values.live.bytes),
          objects,
          foldedStackText(grp.stack, 6, g) + (grp.stackIds.length > 1 ? ` [${grp.stackIds.length} stacks]` : ''),
        ]);
      }
    });
    const head = fmt.name === 'inuse_space' ? 'live' : fmt.name;
    if (!json)
      io.out(
        indent(
          table(
            ['#', head, 'share', 'objects', 'stack (leaf first)'],
            rows,
            [true, true, true, true, false],
            tableColumns(io),
          ),
        ) + '\n',
      );
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, stacks: stacksJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}

function sumRows(a: ArrayLike<number>, rows: readonly number[]): number {
  let s = 0;
  for (const r of rows) s += a[r];
  return s;
}

function diff(job: Job, args: ParsedArgs, io: Output): void {
  const n = intFlag(args, 'top', 20);
  const json = has(args, 'json');
  const fmt = valueFormat(args);
  const g = granularityOf(args);
  const baseSeq = flag(args, 'base');
  const targetSeq = flag(args, 'target');
  const stacksJson: unknown[] = [];
  const procsJson: unknown[] = [];
  // Two files of one process: compare those two; otherwise first → last (or --base/--target) per process.
  const twoFiles = args.positional.length === 2 && baseSeq === undefined && targetSeq === undefined;
  for (const p of job.processes) {
    const sp = sampled(job, p, args);
    if (!sp) continue;
    let bi = 0;
    // the last complete dump: a cut one would report frees that never happened
    let ti = lastCompleteIndex(p);
    if (twoFiles) {
      bi = p.snapshots.findIndex((s) => s.file === args.positional[0]);
      ti = p.snapshots.findIndex((s) => s.file === args.positional[1]);
      if (bi < 0 || ti < 0) {
        bi = 0;
        ti = lastCompleteIndex(p);
      }
    }
    if (baseSeq !== undefined) bi = snapshotBySeq(p, baseSeq, 'base');
    if (targetSeq !== undefined) ti = snapshotBySeq(p, targetSeq, 'target');
    if (bi < 0 || ti < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${bi < 0 ? baseSeq : targetSeq}` });
      continue;
    }
    if (p.snapshots.length < 2) {
      job.warnings.push({ file: p.key, message: 'only one snapshot: nothing to compare' });
      continue;
    }
    const base = p.snapshots[bi];
    const target = p.snapshots[ti];
    const view = viewer(p, args);
    const deltas = diffSnapshots(sp, bi, ti).flatMap((x) => {
      const stack = view(x.stackId);
      return stack ? [{ ...x, stack }] : [];
    });
    const totals = diffTotals(deltas);
    const accOf = accumulatedLookup(target);
    // σ of jemalloc's sampling, for live bytes (the model keeps no variance of the other sample types)
    const withSigma = fmt.name === 'inuse_space';
    const varBase = withSigma ? denseVariances(p.stacks.count, base) : null;
    const varTarget = withSigma ? denseVariances(p.stacks.count, target) : null;
    procsJson.push({
      ...processJson(p),
      base: snapshotJson(base),
      target: snapshotJson(target),
      sample: fmt.name,
      ...totals,
    });
    if (!json) {
      io.out(
        `${processTitle(p)}\n  ${base.file} → ${target.file}: ${fmt.plain(totals.baseBytes)} → ${fmt.plain(totals.targetBytes)} (${fmt.signed(totals.deltaBytes)})${fmt.name === 'inuse_space' ? '' : ` ${fmt.name}`}${sliceFilter(args).length > 0 ? ' in the stacks the filters keep' : ''}, ${totals.newStacks} new stacks, ${totals.goneStacks} gone`,
      );
    }
    const rows: string[][] = [];
    deltas.slice(0, n).forEach((x, rank) => {
      const sd = varBase && varTarget ? deltaSigma(varBase[x.stackId], varTarget[x.stackId]) : 0;
      const noise = withSigma && withinNoise(x.deltaBytes, sd);
      if (json) {
        stacksJson.push({
          pid: p.pid,
          process: p.key,
          stackId: x.stackId,
          baseBytes: x.baseBytes,
          targetBytes: x.targetBytes,
          deltaBytes: x.deltaBytes,
          ...(withSigma ? { sigmaBytes: sd, withinNoise: noise } : {}),
          baseObjects: x.baseObjects,
          targetObjects: x.targetObjects,
          deltaObjects: x.deltaObjects,
          status: x.status,
          ...accOf(x.stackId),
          frames: x.stack.frames,
          ...foldsJson(x.stack),
        });
      } else {
        rows.push([
          String(rank + 1),
          fmt.signed(x.deltaBytes) + (noise ? ' ~' : ''),
          sd > 0 ? '±' + fmt.plain(2 * sd) : '',
          fmt.plain(x.baseBytes),
          fmt.plain(x.targetBytes),
          x.status,
          foldedStackText(x.stack, 6, g),
        ]);
      }
    });
    const head = fmt.name === 'inuse_space' ? 'Δ live' : `Δ ${fmt.name}`;
    if (!json)
      io.out(
        indent(
          table(
            ['#', head, '±2σ', 'base', 'target', 'status', 'stack (leaf first)'],
            rows,
            [true, true, true, true, true, false, false],
            tableColumns(io),
          ),
        ) +
          (rows.length > 0 && withSigma ? '\n  (~ within sampling noise: |Δ| < 2σ)' : '') +
          '\n',
      );
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, stacks: stacksJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}

/** Modules whose frames stay unresolved, heaviest first, with what to hand over to resolve them. */
function binaries(job: Job, args: ParsedArgs, io: Output): void {
  const which = flag(args, 'snapshot') ?? 'last';
  const json = has(args, 'json');
  const procsJson: unknown[] = [];
  for (const p of job.processes) {
    const si = snapshotBySeq(p, which, 'snapshot');
    if (si < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    const symbols = p.symbols;
    const sum = missingBinaries(p, si, symbols?.modules ?? [], { includeAllocator: has(args, 'show-allocator') });
    const s = p.snapshots[si];
    procsJson.push({ ...processJson(p), snapshot: snapshotJson(s), symbolized: symbols !== null, ...sum });
    if (json) continue;
    io.out(`${processTitle(p)}\n  snapshot ${s.seq ?? '-'} ${s.file}`);
    if (!symbols) {
      io.out(
        p.maps
          ? '  not symbolized\n'
          : '  no maps: frames cannot be attributed to binaries (give the maps file beside the dumps)\n',
      );
      continue;
    }
    if (sum.modules.length === 0) {
      io.out('  every module with frames was found and matches its mapping\n');
      continue;
    }
    io.out(
      `  ${formatBytes(sum.unresolvedBytes)} of ${formatBytes(sum.totalBytes)} (${formatPercent(sum.unresolvedBytes, sum.totalBytes)}) is in stacks with unresolved frames.`,
    );
    io.out('  Hand over these files (or their debug files) and pass their folder with --symbols:');
    // Paths are what to copy: never cut (the JSON has each module's reason in full)
    const rows = sum.modules.map((m) => [
      formatBytes(m.bytes),
      formatPercent(m.bytes, sum.totalBytes),
      formatInt(m.stacks),
      formatInt(m.addresses),
      m.status,
      m.buildId ?? '-',
      m.mappingPath,
    ]);
    io.out(
      indent(
        table(['bytes', 'share', 'stacks', 'addresses', 'status', 'build-id', 'path as in the maps'], rows, [
          true,
          true,
          true,
          true,
          false,
          false,
          false,
        ]),
      ) + '\n',
    );
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}
