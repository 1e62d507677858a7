// What the CLI's commands share: the output sink, --pid, warnings, process titles and JSON, and the stacks as a
// command shows them. Its own file so that main.ts (the dispatcher) and the commands it loads lazily do not import
// each other.

import type { Job, LoadWarning, ProcessSeries } from '../../core/model/model.js';
import { flag, has, sliceFilter, UsageError, type ParsedArgs } from './args.js';
import { parseGranularity, type Granularity } from '../../core/frames/stack-filter.js';
import type { Frame, StackDescriber } from '../../core/frames/describe.js';
import { processViewer, visibleFrames, type StackViewer } from '../../core/frames/view.js';
import { stackText as foldedStackText } from './stack-text.js';
import { DEFAULT_STACK_MODE, parseStackMode } from '../../core/frames/python-stacks.js';
import type { FoldedStack } from '../../core/frames/stack-labels.js';
import { processName } from '../../core/model/process-name.js';
import { jobPidText, pidText, processHost } from '../../core/model/process-host.js';
import type { ViewOptions } from '../../core/model/vocab.js';

export interface Output {
  out: (s: string) => void;
  err: (s: string) => void;
  /** terminal width: tables fit it (cli/heaplens.ts passes the TTY's, $COLUMNS or 100); unlimited when absent */
  columns?: number;
}

/** The job with only the process `--pid` names, when given. */
export function onlyPid(job: Job, args: ParsedArgs): Job {
  const pid = flag(args, 'pid');
  // `--pid 12`, or `--pid node-a:12` where pids repeat across hosts
  return pid === undefined
    ? job
    : {
        ...job,
        processes: job.processes.filter((p) => String(p.pid) === pid || pidText(p.pid, processHost(p)) === pid),
      };
}

export function printWarnings(warnings: readonly LoadWarning[], io: Output): void {
  for (const w of warnings) io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
}

/** `pid 12 python3.12 job.py (job): 30 snapshots`; `pid node-a:12 …` where pids repeat in the job. */
export function processTitle(p: ProcessSeries, job?: Pick<Job, 'processes'>): string {
  const name = processName(p);
  const who =
    p.pid !== null
      ? `pid ${job ? jobPidText(job.processes, p) : p.pid}${name ? ` ${name}` : ''}${p.prefix ? ` (${p.prefix})` : ''}`
      : p.key;
  return `${who}: ${p.snapshots.length} snapshot${p.snapshots.length === 1 ? '' : 's'}${p.endedWithoutFinalDump ? ', no final dump (stopped: killed, or still running)' : ''}`;
}

export function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => '  ' + l)
    .join('\n');
}

export type Viewer = StackViewer;

export function granularityOf(args: ParsedArgs): Granularity {
  return parseGranularity(flag(args, 'granularity') ?? 'lines') ?? 'lines';
}

/** The view the flags ask for (--stacks, --show-allocator, --fold-imports, --focus/--ignore/--hide/--show). */
export function viewOf(args: ParsedArgs): ViewOptions {
  const v = flag(args, 'stacks') ?? DEFAULT_STACK_MODE;
  const mode = parseStackMode(v);
  if (!mode) throw new UsageError(`--stacks takes python-first, merged, python or native, got ${JSON.stringify(v)}`);
  return {
    mode,
    hideAllocator: !has(args, 'show-allocator'),
    foldImports: has(args, 'fold-imports'),
    filters: sliceFilter(args),
  };
}

/** The stacks of a process as the command shows them (core/frames/view.ts, the app's pipeline too). */
export function viewer(p: ProcessSeries, args: ParsedArgs): Viewer {
  return processViewer(p, viewOf(args));
}

/**
 * The frames the commands print for a stack, as a describer (growth-command, commands/postmortem): the surviving
 * frames of the view (python-first folds, allocator option, filters); folded frames are left out.
 */
export function describer(p: ProcessSeries, args: ParsedArgs): StackDescriber {
  const view = viewer(p, args);
  return { frames: (id) => view(id)?.frames ?? [] };
}

/** A stack as one line: frames (or a folded stack, noting what was folded), the first surviving frame first. */
export function stackText(frames: readonly Frame[] | FoldedStack<Frame>, max = 6): string {
  return foldedStackText('folds' in frames ? frames : { frames: [...frames], folds: [] }, max);
}

/** The frames to print of one stack of a describer (allocator frames dropped unless --show-allocator). */
export function framesFor(d: StackDescriber, stackId: number, args: ParsedArgs): { frames: Frame[] } {
  return { frames: visibleFrames(d.frames(stackId), !has(args, 'show-allocator')) };
}

/** Output width for tables (cli/heaplens.ts passes the terminal's), less the two-space indent. */
export function tableColumns(io: Output): number | undefined {
  return io.columns !== undefined ? io.columns - 2 : undefined;
}
