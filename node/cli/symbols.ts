// Symbolization for the CLI: --symbols DIR (repeatable), --sysroot DIR, --no-symbols. Runs the one driver
// (core/symbolize/symbolize-job.ts) over the job before a command prints, which writes each process's symbols onto
// the model (the frame pipeline, core/frames/, reads them there). Results are cached on disk between runs
// (node/io/symbol-files.ts).

import type { Job } from '../../core/model/model.js';
import { collectInputFiles } from '../io/node-files.js';
import type { SymbolProblem } from '../../core/symbolize/symbolize-job.js';
import { prepareSymbolizer, symbolizeOnDisk, type SymbolOptions } from '../engine/symbolize.js';
import { flag, has, type ParsedArgs } from './args.js';
import { applyCliV8Flags } from './v8-flags.js';

/** Starts loading the symbolizer (when the command will symbolize), to overlap with reading the dumps. */
export function prepareSymbols(args: ParsedArgs): void {
  // the V8 flags go before the module is compiled (V8 reads the WASM tier-up budget then); already set when the
  // CLI runs through bin/heaplens.js
  if (!has(args, 'no-symbols')) prepareSymbolizer(applyCliV8Flags);
}

/** --symbols and --sysroot as the symbolizer's options; null with --no-symbols. */
export function symbolOptionsOf(args: ParsedArgs): SymbolOptions | null {
  if (has(args, 'no-symbols')) return null;
  return { dirs: args.flags.get('symbols') ?? [], sysroot: flag(args, 'sysroot') ?? null };
}

/** Flags the symbolizing commands accept. */
export const SYMBOL_FLAGS = ['symbols', 'sysroot', 'no-symbols'] as const;

export const SYMBOL_USAGE = `  --symbols <dir>    where to find binaries and debug files (repeatable): searched as a copy of the
                     job's file system, as a flat folder by file name, and for .build-id/ debug files
  --sysroot <dir>    a copy of the job's file system (/usr/lib/… is looked up under it); without it,
                     the paths in the dumps' maps are also tried on this machine
  --no-symbols       print module+offset instead of symbolizing`;

interface Messages {
  err: (s: string) => void;
}

/**
 * The problems symbolization returned (core/symbolize/symbolize-job.ts) as notes on stderr; with --json only a
 * stop (the JSON's frames are then module+offset, and say nothing of why).
 */
export function printSymbolProblems(problems: readonly SymbolProblem[], args: ParsedArgs, io: Messages): void {
  const quiet = has(args, 'json');
  for (const p of problems) if (!quiet || p.kind === 'stopped') io.err(`note: ${p.message}`);
}

/**
 * Symbolizes every process of the job (ProcessSeries.symbols) unless --no-symbols; problems (modules not found,
 * mismatched builds, out of memory) go to stderr as notes, never failing the command.
 */
export async function symbolizeJob(job: Job, args: ParsedArgs, io: Messages): Promise<void> {
  const options = symbolOptionsOf(args);
  if (!options) return;
  prepareSymbols(args);
  printSymbolProblems(await symbolizeOnDisk(job, options, await collectInputFiles(args.positional)), args, io);
}
