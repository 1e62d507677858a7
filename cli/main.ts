// heaplens command line: summary, top, diff, growth over dumps, files or folders.
// Exit codes: 0 success, 1 nothing could be read, 2 usage error.

import { loadJob } from '../analysis/load-job.js';
import type { Job, LoadWarning, ProcessSeries, Snapshot } from '../analysis/model.js';
import { diffSnapshots, diffTotals } from '../analysis/diff.js';
import { lastCompleteIndex } from '../analysis/snapshot-status.js';
import { processFates } from '../analysis/process-fate.js';
import { denseVariances, deltaSigma, withinNoise } from '../analysis/sampling-error.js';
import { escapeControlsInJson, revealControls } from '../analysis/display-text.js';
import { collectInputFiles, type CollectProblem } from '../node-io/node-files.js';
import { checkFlags, flag, has, intFlag, parseArgs, UsageError, type ParsedArgs } from './args.js';
import { describeFrame, mapsDescriber, pythonDescriber, visibleFrames, type FrameOut, type StackDescriber } from './describe-stacks.js';
import { parseStackMode } from '../analysis/python-stacks.js';
import { formatBytes, formatInt, formatPercent, formatSignedBytes, table } from './format.js';
import { prepareSymbols, SYMBOL_FLAGS, SYMBOL_USAGE, symbolDescriber, symbolizeJob } from './symbols.js';
import { datasetPath, loadDataset } from './dataset-input.js';

export interface Output {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * The usage text. The report and export commands (and the report/export code they import) are loaded only
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
${REPORT_USAGE}
${EXPORT_USAGE}
${INGEST_USAGE}

options:
  --json             one JSON document on stdout (shape: README.md, "CLI JSON")
  --show-allocator   keep the allocator's own frames at the top of stacks
  --pid <pid>        only this process
  --stacks merged|python|native
                     Python frames (PYFRAMES/1) in place of the interpreter's frames (default),
                     Python frames only, or native frames only
${SYMBOL_USAGE}
Paths may be dump files (.heap, .heap.gz), maps files, or folders (read recursively), or one dataset
folder written by ingest (every command reads it as it would read the dumps).`;
}

const COMMON = ['json', 'show-allocator', 'pid', 'help', 'stacks'];

export async function run(argv: readonly string[], rawIo: Output): Promise<number> {
  const io = terminalSafe(rawIo, argv.includes('--json') || argv.includes('speedscope') || argv.includes('--format=speedscope'));
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
    if (args.command === 'help' || args.command === '--help' || args.command === '-h' || has(args, 'help')) {
      io.out(await usage());
      return 0;
    }
    switch (args.command) {
      case 'summary':
        checkFlags(args, COMMON);
        return await withJob(args, io, summary);
      case 'top':
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'snapshot', 'top']);
        return await withJob(args, io, top);
      case 'diff':
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'base', 'target', 'top']);
        return await withJob(args, io, diff);
      case 'growth':
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'top']);
        return await withJob(args, io, (await import('./growth-command.js')).growth);
      case 'postmortem': {
        checkFlags(args, [...COMMON, ...SYMBOL_FLAGS, 'top', 'limit']);
        const pm = await import('./postmortem-command.js');
        const limit = await pm.readLimit(args);
        return await withJob(args, io, (job, a, o) => pm.postmortemCommand(job, a, o, limit));
      }
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
    // A dataset with a missing or damaged file (dataset/read-dataset.ts): the message names the file.
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
  return { out: (s) => io.out(json ? escapeControlsInJson(s) : revealControls(s)), err: (s) => io.err(revealControls(s)) };
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
  let job = fromDataset?.job ?? (await loadJob(files));
  if (!dataset && args.command === 'diff' && files.length === 2 && args.positional.length === 2 && job.processes.length === 2 && !has(args, 'base') && !has(args, 'target')) {
    // Two dumps of different processes: compare them as one series of two snapshots.
    const [a, b] = job.processes;
    job = await loadJob(files, { singleSeries: true });
    job.warnings.push({
      file: args.positional[1],
      message: `base and target come from different processes (pid ${a.pid ?? '?'} and ${b.pid ?? '?'}): stacks are matched by raw return address, which differs between processes under ASLR unless the binaries were loaded at the same addresses`,
    });
  }
  const pidFlag = flag(args, 'pid');
  if (pidFlag !== undefined) job.processes = job.processes.filter((p) => String(p.pid) === pidFlag);
  for (const p of problems) job.warnings.unshift({ file: p.path, message: p.message });
  if (job.processes.length === 0) {
    if (has(args, 'json')) io.out(JSON.stringify({ processes: [], stacks: [], warnings: job.warnings }, null, 2));
    else printWarnings(job.warnings, io);
    io.err(`heaplens: no heap profile could be read from ${args.positional.join(', ')}`);
    return 1;
  }
  if (args.command !== 'summary' && !fromDataset?.symbolized) await symbolizeJob(job, args, io);
  await cmd(job, args, io);
  return 0;
}

export function printWarnings(warnings: readonly LoadWarning[], io: Output): void {
  for (const w of warnings) io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
}

export function processTitle(p: ProcessSeries): string {
  const who = p.pid !== null ? `pid ${p.pid}${p.prefix ? ` (${p.prefix})` : ''}` : p.key;
  return `${who}: ${p.snapshots.length} snapshot${p.snapshots.length === 1 ? '' : 's'}${p.endedWithoutFinalDump ? ', no final dump (killed or still running)' : ''}`;
}

export function snapshotJson(s: Snapshot) {
  return {
    file: s.file,
    seq: s.seq,
    trigger: s.trigger,
    liveBytes: s.live.bytes,
    liveObjects: s.live.objects,
    ...(s.hasAccumulated ? { accumulatedBytes: s.accumulated.bytes, accumulatedObjects: s.accumulated.objects } : {}),
    samplePeriod: s.samplePeriod,
    format: s.format,
    truncated: s.truncated !== null,
    complete: s.complete,
    headerLiveBytes: s.headerLiveBytes,
    ...(s.truncated ? { truncatedAt: s.truncated } : {}),
    threads: s.threads.map((t) => ({ uid: t.uid, name: t.name, liveBytes: t.live.bytes, liveObjects: t.live.objects })),
  };
}

export function processJson(p: ProcessSeries, job?: Job) {
  const fate = job ? processFates(job)[job.processes.indexOf(p)] : null;
  return {
    key: p.key,
    pid: p.pid,
    prefix: p.prefix,
    endedWithoutFinalDump: p.endedWithoutFinalDump,
    hasMaps: p.maps !== null,
    ...(fate ? { lastCompleteSeq: fate.lastCompleteSeq, killed: fate.killed, killedEvidence: fate.evidence } : {}),
  };
}

function summary(job: Job, args: ParsedArgs, io: Output): void {
  if (has(args, 'json')) {
    io.out(
      JSON.stringify(
        {
          processes: job.processes.map((p) => ({ ...processJson(p, job), snapshots: p.snapshots.map(snapshotJson) })),
          warnings: job.warnings,
          ignoredFiles: job.ignoredFiles,
        },
        null,
        2,
      ),
    );
    return;
  }
  for (const p of job.processes) {
    io.out(processTitle(p));
    const rows = p.snapshots.map((s) => [
      s.seq === null ? '-' : String(s.seq),
      s.trigger,
      formatBytes(s.live.bytes),
      formatInt(s.live.objects),
      s.truncated ? `truncated at byte ${s.truncated.byteOffset}${s.complete ? ' (in its maps: records complete)' : s.headerLiveBytes !== null ? `: records incomplete, header total ${formatBytes(s.headerLiveBytes)}` : ': records incomplete'}` : '',
      s.file,
    ]);
    io.out(indent(table(['seq', 'trigger', 'live', 'objects', 'note', 'file'], rows, [true, false, true, true, false, false])));
    io.out('');
  }
  printWarnings(job.warnings, io);
}

export function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => '  ' + l)
    .join('\n');
}

function pickSnapshot(p: ProcessSeries, which: string): number {
  if (which === 'last') return p.snapshots.length - 1;
  if (which === 'first') return 0;
  if (!/^\d+$/.test(which)) throw new UsageError(`--snapshot takes last, first or a sequence number, got ${JSON.stringify(which)}`);
  const i = p.snapshots.findIndex((s) => s.seq === Number(which));
  return i;
}

interface StackLine {
  frames: FrameOut[];
}

export function describer(p: ProcessSeries, args: ParsedArgs): StackDescriber {
  const v = flag(args, 'stacks') ?? 'merged';
  const mode = parseStackMode(v);
  if (!mode) throw new UsageError(`--stacks takes merged, python or native, got ${JSON.stringify(v)}`);
  return pythonDescriber(symbolDescriber(mapsDescriber(p), p), p, mode);
}

export function stackText(frames: readonly FrameOut[], max = 6): string {
  const shown = frames.slice(0, max).map(describeFrame);
  return shown.join(' ← ') + (frames.length > max ? ` ← … (${frames.length - max} more)` : '') || '(no frames)';
}

export function framesFor(d: StackDescriber, stackId: number, args: ParsedArgs): StackLine {
  return { frames: visibleFrames(d.frames(stackId), { showAllocator: has(args, 'show-allocator') }) };
}

interface TopGroup {
  stackIds: number[];
  frames: FrameOut[];
  bytes: number;
  objects: number;
}

/**
 * A snapshot's stacks by live bytes. In the Python-only and native-only views, stacks whose visible
 * frames are the same (they differed only in frames the view hides) are one row, as in py-spy.
 */
function topGroups(s: Snapshot, d: StackDescriber, args: ParsedArgs): TopGroup[] {
  const mode = flag(args, 'stacks') ?? 'merged';
  const rows = [...s.stackIds.keys()].sort((a, b) => s.liveBytes[b] - s.liveBytes[a]);
  if (mode === 'merged') {
    const n = intFlag(args, 'top', 20);
    return rows.slice(0, n).map((r) => ({ stackIds: [s.stackIds[r]], frames: framesFor(d, s.stackIds[r], args).frames, bytes: s.liveBytes[r], objects: s.liveObjects[r] }));
  }
  const byKey = new Map<string, TopGroup>();
  for (const r of rows) {
    const { frames } = framesFor(d, s.stackIds[r], args);
    const key = frames.map((f) => (f.function ? `${f.kind}|${f.function}|${f.file ?? ''}|${f.line ?? ''}` : f.address)).join(';');
    const g = byKey.get(key);
    if (g) {
      g.stackIds.push(s.stackIds[r]);
      g.bytes += s.liveBytes[r];
      g.objects += s.liveObjects[r];
    } else {
      byKey.set(key, { stackIds: [s.stackIds[r]], frames, bytes: s.liveBytes[r], objects: s.liveObjects[r] });
    }
  }
  return [...byKey.values()].sort((a, b) => b.bytes - a.bytes);
}

function top(job: Job, args: ParsedArgs, io: Output): void {
  const n = intFlag(args, 'top', 20);
  const which = flag(args, 'snapshot') ?? 'last';
  const json = has(args, 'json');
  const stacksJson: unknown[] = [];
  const procsJson: unknown[] = [];
  for (const p of job.processes) {
    const si = pickSnapshot(p, which);
    if (si < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    const s = p.snapshots[si];
    const d = describer(p, args);
    const groups = topGroups(s, d, args).slice(0, n);
    procsJson.push({ ...processJson(p), snapshot: snapshotJson(s) });
    if (!json) {
      io.out(`${processTitle(p)}\n  snapshot ${s.seq ?? '-'} (${s.trigger}) ${s.file}: ${formatBytes(s.live.bytes)} live in ${formatInt(s.live.objects)} objects`);
    }
    const rows: string[][] = [];
    groups.forEach((g, rank) => {
      if (json) {
        stacksJson.push({ pid: p.pid, process: p.key, stackId: g.stackIds[0], ...(g.stackIds.length > 1 ? { stackIds: g.stackIds } : {}), liveBytes: g.bytes, liveObjects: g.objects, frames: g.frames });
      } else {
        rows.push([String(rank + 1), formatBytes(g.bytes), formatPercent(g.bytes, s.live.bytes), formatInt(g.objects), stackText(g.frames) + (g.stackIds.length > 1 ? ` [${g.stackIds.length} stacks]` : '')]);
      }
    });
    if (!json) io.out(indent(table(['#', 'live', 'share', 'objects', 'stack (leaf first)'], rows, [true, true, true, true, false])) + '\n');
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, stacks: stacksJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}

function diff(job: Job, args: ParsedArgs, io: Output): void {
  const n = intFlag(args, 'top', 20);
  const json = has(args, 'json');
  const baseSeq = flag(args, 'base');
  const targetSeq = flag(args, 'target');
  const stacksJson: unknown[] = [];
  const procsJson: unknown[] = [];
  // Two files of one process: compare those two; otherwise first → last (or --base/--target) per process.
  const twoFiles = args.positional.length === 2 && baseSeq === undefined && targetSeq === undefined;
  for (const p of job.processes) {
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
    if (baseSeq !== undefined) bi = pickSnapshot(p, baseSeq);
    if (targetSeq !== undefined) ti = pickSnapshot(p, targetSeq);
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
    const deltas = diffSnapshots(p, bi, ti);
    const totals = diffTotals(deltas);
    const varBase = denseVariances(p.stacks.count, base);
    const varTarget = denseVariances(p.stacks.count, target);
    const d = describer(p, args);
    procsJson.push({ ...processJson(p), base: snapshotJson(base), target: snapshotJson(target), ...totals });
    if (!json) {
      io.out(
        `${processTitle(p)}\n  ${base.file} → ${target.file}: ${formatBytes(totals.baseBytes)} → ${formatBytes(totals.targetBytes)} (${formatSignedBytes(totals.deltaBytes)}), ${totals.newStacks} new stacks, ${totals.goneStacks} gone`,
      );
    }
    const rows: string[][] = [];
    deltas.slice(0, n).forEach((x, rank) => {
      const { frames } = framesFor(d, x.stackId, args);
      const sd = deltaSigma(varBase[x.stackId], varTarget[x.stackId]);
      const noise = withinNoise(x.deltaBytes, sd);
      if (json) {
        stacksJson.push({ pid: p.pid, process: p.key, stackId: x.stackId, baseBytes: x.baseBytes, targetBytes: x.targetBytes, deltaBytes: x.deltaBytes, sigmaBytes: sd, withinNoise: noise, baseObjects: x.baseObjects, targetObjects: x.targetObjects, deltaObjects: x.deltaObjects, status: x.status, frames });
      } else {
        rows.push([String(rank + 1), formatSignedBytes(x.deltaBytes) + (noise ? ' ~' : ''), sd > 0 ? '±' + formatBytes(2 * sd) : '', formatBytes(x.baseBytes), formatBytes(x.targetBytes), x.status, stackText(frames)]);
      }
    });
    if (!json) io.out(indent(table(['#', 'Δ live', '±2σ', 'base', 'target', 'status', 'stack (leaf first)'], rows, [true, true, true, true, true, false, false])) + (rows.length > 0 ? '\n  (~ within sampling noise: |Δ| < 2σ)' : '') + '\n');
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, stacks: stacksJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}
