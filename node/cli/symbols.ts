// Symbolization for the CLI: --symbols DIR (repeatable), --sysroot DIR, --no-symbols. Runs the shared
// symbolizer (core/symbolize/) over each process before a command prints, then decorates described frames with
// function, file:line and inlined frames. Results are cached on disk between runs (node/io/symbol-files.ts).

import type { Job, ProcessSeries } from '../../core/model/model.js';
import { collectInputFiles } from '../io/node-files.js';
import type { PerfMap } from '../../core/symbolize/perf-map.js';
import type { SymbolTable, symbolAt as SymbolAt } from '../../core/symbolize/symbolize.js';
import type { CompiledWasm } from '../../core/symbolize/wasm-addr2line.js';
import { flag, has, type ParsedArgs } from './args.js';
import type { FrameOut, StackDescriber } from './describe-stacks.js';

/**
 * The symbolizer's modules and the compiled WASM module, loaded once and only by commands that symbolize
 * (not with --no-symbols). `prepareSymbols` starts this early, so the compile overlaps reading the dumps.
 */
interface SymbolRuntime {
  io: typeof import('../io/symbol-files.js');
  perfMap: typeof import('../../core/symbolize/perf-map.js');
  symbolize: typeof import('../../core/symbolize/symbolize.js');
  wasmBytes: Uint8Array;
  wasm: CompiledWasm;
}

let runtime: Promise<SymbolRuntime> | null = null;
/** symbolAt, once the symbolizer is loaded (tables exist only after that) */
let symbolAtFn: typeof SymbolAt | null = null;

function loadRuntime(): Promise<SymbolRuntime> {
  runtime ??= (async () => {
    const [io, perfMap, symbolize, wasmMod] = await Promise.all([
      import('../io/symbol-files.js'),
      import('../../core/symbolize/perf-map.js'),
      import('../../core/symbolize/symbolize.js'),
      import('../../core/symbolize/wasm-addr2line.js'),
    ]);
    const wasmBytes = await io.readAddr2lineWasm();
    const wasm = await wasmMod.compileAddr2line(wasmBytes);
    symbolAtFn = symbolize.symbolAt;
    return { io, perfMap, symbolize, wasmBytes, wasm };
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

// Keyed by the process's stack table, which a process re-expressed for another sample type (sample-type.ts) shares.
const tables = new WeakMap<ProcessSeries['stacks'], SymbolTable>();

/** Perf maps (perf-<pid>.map) among the given paths; they are not dumps, so loadJob leaves them aside. */
async function perfMapsIn(paths: readonly string[], rt: SymbolRuntime): Promise<PerfMap[]> {
  const files = await collectInputFiles(paths);
  const out: PerfMap[] = [];
  for (const f of files) {
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    if (!rt.perfMap.isPerfMapName(name) || f.size > 256 << 20) continue;
    out.push(rt.perfMap.parsePerfMap(new TextDecoder().decode(await f.read(0, f.size)), f.path));
  }
  return out;
}

/**
 * Symbolizes every process of the job unless --no-symbols; problems (modules not found, mismatched builds)
 * go to stderr as notes, never failing the command.
 */
export async function symbolizeJob(job: Job, args: ParsedArgs, io: Messages): Promise<void> {
  if (has(args, 'no-symbols')) return;
  try {
    await symbolizeAll(job, args, io);
  } catch (e) {
    // An address-space limit (ulimit -v) can refuse the WASM module or its memory anywhere in the
    // symbolizer: the command goes on with the frames it has (module+offset), and says so.
    if (!(e instanceof RangeError)) throw e;
    io.err(
      `note: symbolization stopped, out of memory (${e.message}); frames without symbols are shown as module+offset`,
    );
  }
}

async function symbolizeAll(job: Job, args: ParsedArgs, io: Messages): Promise<void> {
  const sysroot = flag(args, 'sysroot') ?? null;
  const symbolDirs = args.flags.get('symbols') ?? [];
  const rt = await loadRuntime();
  const cacheDir = rt.io.defaultSymbolCacheDir();
  const symbolizer = new rt.symbolize.Symbolizer(new rt.io.NodeSymbolFileSource(), {
    wasm: rt.wasm,
    symbolDirs,
    sysroot,
    // On another machine's dumps the local files at the same paths are a different build; a sysroot says so.
    hostPaths: sysroot === null,
    inflate: rt.io.nodeInflate,
    cacheStore: cacheDir ? new rt.io.NodeSymbolCacheStore(cacheDir, rt.io.wasmVersion(rt.wasmBytes)) : null,
  });
  const perfMaps = await perfMapsIn(args.positional, rt);
  const quiet = has(args, 'json');
  try {
    for (const p of job.processes) {
      if (!p.maps) continue;
      const table = await symbolizer.symbolizeProcess(p, { perfMaps });
      tables.set(p.stacks, table);
      if (quiet) continue;
      for (const m of table.modules) {
        if (m.binaryPath === null)
          io.err(`note: no binary for ${m.mappingPath} (${m.addresses} addresses): ${m.reason}`);
        else if (m.binary === 'mismatch')
          io.err(
            `note: ${m.binaryPath} does not match the mapping of ${m.mappingPath} (${m.reason}); its frames are marked`,
          );
        if (m.error) io.err(`note: ${m.mappingPath}: ${m.error}`);
      }
    }
  } finally {
    await symbolizer.dispose();
  }
}

function printModuleNotes(table: SymbolTable, io: Messages): void {
  for (const m of table.modules) {
    if (m.binaryPath === null) io.err(`note: no binary for ${m.mappingPath} (${m.addresses} addresses): ${m.reason}`);
    else if (m.binary === 'mismatch')
      io.err(
        `note: ${m.binaryPath} does not match the mapping of ${m.mappingPath} (${m.reason}); its frames are marked`,
      );
    if (m.error) io.err(`note: ${m.mappingPath}: ${m.error}`);
  }
}

/**
 * Symbol tables read from a dataset (made at ingest): used as symbolizeJob's own, so a dataset needs no
 * binaries. With --symbols or --sysroot the command symbolizes again instead; with --no-symbols it shows none.
 */
export async function adoptSymbolTables(
  adopted: ReadonlyMap<ProcessSeries, SymbolTable>,
  args: ParsedArgs,
  io: Messages,
): Promise<boolean> {
  if (has(args, 'no-symbols') || has(args, 'symbols') || has(args, 'sysroot')) return false;
  symbolAtFn ??= (await import('../../core/symbolize/symbolize.js')).symbolAt;
  for (const [p, t] of adopted) {
    tables.set(p.stacks, t);
    if (!has(args, 'json')) printModuleNotes(t, io);
  }
  return true;
}

/** The symbolizer's result for a process (null with --no-symbols, without maps, or before symbolizeJob). */
export function symbolTableOf(proc: ProcessSeries): SymbolTable | null {
  return tables.get(proc.stacks) ?? null;
}

/** Adds symbols to the frames `inner` describes (native and allocator frames; Python ones pass through). */
export function symbolDescriber(inner: StackDescriber, proc: ProcessSeries): StackDescriber {
  const table = tables.get(proc.stacks);
  const symbolAt = symbolAtFn;
  if (!table || !symbolAt) return inner;
  // one symbolized frame per (frame, leaf or caller), shared as mapsDescriber shares its frames
  const made = [new Map<FrameOut, FrameOut>(), new Map<FrameOut, FrameOut>()];
  const symbolized = (f: FrameOut, address: number, i: number): FrameOut => {
    const s = symbolAt(table, address, i);
    if (!s || s.frames.length === 0) return s?.binary === 'mismatch' ? { ...f, binary: s.binary } : f;
    const outer = s.frames[s.frames.length - 1];
    const out: FrameOut = { ...f, function: outer.function, file: outer.file, line: outer.line };
    if (s.python) out.kind = 'python';
    if (s.frames.length > 1) out.inlined = s.frames.map((x) => ({ function: x.function, file: x.file, line: x.line }));
    if (s.binary) out.binary = s.binary;
    return out;
  };
  return {
    frames(stackId: number): FrameOut[] {
      const { offsets, frames } = proc.stacks;
      return inner.frames(stackId).map((f, i) => {
        if (f.kind === 'python' || offsets[stackId] + i >= offsets[stackId + 1]) return f;
        const cache = made[i === 0 ? 0 : 1];
        let out = cache.get(f);
        if (!out) {
          out = symbolized(f, frames[offsets[stackId] + i], i);
          cache.set(f, out);
        }
        return out;
      });
    },
  };
}
