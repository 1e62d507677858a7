// Symbolization for the CLI: --symbols DIR (repeatable), --sysroot DIR, --no-symbols. Runs the one driver
// (core/symbolize/symbolize-job.ts) over the job before a command prints, which writes each process's symbols onto
// the model (the frame pipeline, core/frames/, reads them there). Results are cached on disk between runs
// (node/io/symbol-files.ts).

import type { Job } from '../../core/model/model.js';
import { collectInputFiles } from '../io/node-files.js';
import type { SymbolProblem } from '../../core/symbolize/symbolize-job.js';
import type { CompiledWasm } from '../../core/symbolize/wasm-addr2line.js';
import { flag, has, type ParsedArgs } from './args.js';
import { applyCliV8Flags } from './v8-flags.js';

/**
 * The symbolizer's modules and the compiled WASM module, loaded once and only by commands that symbolize
 * (not with --no-symbols). `prepareSymbols` starts this early, so the compile overlaps reading the dumps.
 */
interface SymbolRuntime {
  io: typeof import('../io/symbol-files.js');
  job: typeof import('../../core/symbolize/symbolize-job.js');
  wasmBytes: Uint8Array;
  wasm: CompiledWasm;
}

let runtime: Promise<SymbolRuntime> | null = null;

function loadRuntime(): Promise<SymbolRuntime> {
  runtime ??= (async () => {
    // before the module is compiled and instantiated (V8 reads the WASM tier-up budget then); already set when
    // the CLI runs through bin/heaplens.js
    applyCliV8Flags();
    const [io, job, wasmMod] = await Promise.all([
      import('../io/symbol-files.js'),
      import('../../core/symbolize/symbolize-job.js'),
      import('../../core/symbolize/wasm-addr2line.js'),
    ]);
    const wasmBytes = await io.readAddr2lineWasm();
    const wasm = await wasmMod.compileAddr2line(wasmBytes);
    return { io, job, wasmBytes, wasm };
  })();
  return runtime;
}

/** Starts loading the symbolizer (when the command will symbolize), to overlap with reading the dumps. */
export function prepareSymbols(args: ParsedArgs): void {
  if (has(args, 'no-symbols')) return;
  loadRuntime().catch(() => undefined); // symbolizeJob awaits it again and reports a failure
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
function printProblems(problems: readonly SymbolProblem[], args: ParsedArgs, io: Messages): void {
  const quiet = has(args, 'json');
  for (const p of problems) if (!quiet || p.kind === 'stopped') io.err(`note: ${p.message}`);
}

/**
 * Symbolizes every process of the job (ProcessSeries.symbols) unless --no-symbols; problems (modules not found,
 * mismatched builds, out of memory) go to stderr as notes, never failing the command.
 */
export async function symbolizeJob(job: Job, args: ParsedArgs, io: Messages): Promise<void> {
  if (has(args, 'no-symbols')) return;
  const sysroot = flag(args, 'sysroot') ?? null;
  const rt = await loadRuntime();
  const cacheDir = rt.io.defaultSymbolCacheDir();
  const problems = await rt.job.symbolizeJob(job, {
    source: new rt.io.NodeSymbolFileSource(),
    wasm: rt.wasm,
    symbolDirs: args.flags.get('symbols') ?? [],
    sysroot,
    // On another machine's dumps the local files at the same paths are a different build; a sysroot says so.
    hostPaths: sysroot === null,
    inflate: rt.io.nodeInflate,
    cacheStore: cacheDir ? new rt.io.NodeSymbolCacheStore(cacheDir, rt.io.wasmVersion(rt.wasmBytes)) : null,
    // perf maps are among the files loadJob leaves aside (not dumps)
    perfMaps: await rt.job.perfMapsAmong(await collectInputFiles(args.positional)),
  });
  printProblems(problems, args, io);
}

/**
 * Symbol tables read from a dataset (made at ingest, already on its processes): kept, so a dataset needs no
 * binaries, and their problems noted. With --symbols or --sysroot the command symbolizes again instead (false);
 * with --no-symbols it shows none.
 */
export async function adoptSymbolTables(job: Job, args: ParsedArgs, io: Messages): Promise<boolean> {
  if (has(args, 'no-symbols') || has(args, 'symbols') || has(args, 'sysroot')) {
    for (const p of job.processes) p.symbols = null;
    return false;
  }
  const { symbolProblems } = await import('../../core/symbolize/symbolize-job.js');
  printProblems(symbolProblems(job), args, io);
  return true;
}
