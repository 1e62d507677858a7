// Symbolization for the CLI: --symbols DIR (repeatable), --sysroot DIR, --no-symbols. Runs the shared
// symbolizer (symbolize/) over each process before a command prints, then decorates described frames with
// function, file:line and inlined frames. Results are cached on disk between runs (node-io/symbol-files.ts).

import type { Job, ProcessSeries } from '../analysis/model.js';
import { collectInputFiles } from '../node-io/node-files.js';
import {
  defaultSymbolCacheDir,
  nodeInflate,
  NodeSymbolCacheStore,
  NodeSymbolFileSource,
  readAddr2lineWasm,
  wasmVersion,
} from '../node-io/symbol-files.js';
import { isPerfMapName, parsePerfMap, type PerfMap } from '../symbolize/perf-map.js';
import { symbolAt, Symbolizer, type SymbolTable } from '../symbolize/symbolize.js';
import { compileAddr2line } from '../symbolize/wasm-addr2line.js';
import { flag, has, type ParsedArgs } from './args.js';
import type { FrameOut, StackDescriber } from './describe-stacks.js';

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

const tables = new WeakMap<ProcessSeries, SymbolTable>();

/** Perf maps (perf-<pid>.map) among the given paths; they are not dumps, so loadJob leaves them aside. */
async function perfMapsIn(paths: readonly string[]): Promise<PerfMap[]> {
  const files = await collectInputFiles(paths);
  const out: PerfMap[] = [];
  for (const f of files) {
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    if (!isPerfMapName(name) || f.size > 256 << 20) continue;
    out.push(parsePerfMap(new TextDecoder().decode(await f.read(0, f.size)), f.path));
  }
  return out;
}

/**
 * Symbolizes every process of the job unless --no-symbols; problems (modules not found, mismatched builds)
 * go to stderr as notes, never failing the command.
 */
export async function symbolizeJob(job: Job, args: ParsedArgs, io: Messages): Promise<void> {
  if (has(args, 'no-symbols')) return;
  const sysroot = flag(args, 'sysroot') ?? null;
  const symbolDirs = args.flags.get('symbols') ?? [];
  const bytes = await readAddr2lineWasm();
  const cacheDir = defaultSymbolCacheDir();
  const symbolizer = new Symbolizer(new NodeSymbolFileSource(), {
    wasm: await compileAddr2line(bytes),
    symbolDirs,
    sysroot,
    // On another machine's dumps the local files at the same paths are a different build; a sysroot says so.
    hostPaths: sysroot === null,
    inflate: nodeInflate,
    cacheStore: cacheDir ? new NodeSymbolCacheStore(cacheDir, wasmVersion(bytes)) : null,
  });
  const perfMaps = await perfMapsIn(args.positional);
  const quiet = has(args, 'json');
  try {
    for (const p of job.processes) {
      if (!p.maps) continue;
      const table = await symbolizer.symbolizeProcess(p, { perfMaps });
      tables.set(p, table);
      if (quiet) continue;
      for (const m of table.modules) {
        if (m.binaryPath === null) io.err(`note: no binary for ${m.mappingPath} (${m.addresses} addresses): ${m.reason}`);
        else if (m.binary === 'mismatch') io.err(`note: ${m.binaryPath} does not match the mapping of ${m.mappingPath} (${m.reason}); its frames are marked`);
        if (m.error) io.err(`note: ${m.mappingPath}: ${m.error}`);
      }
    }
  } finally {
    await symbolizer.dispose();
  }
}

/** Adds symbols to the frames `inner` describes (native and allocator frames; Python ones pass through). */
export function symbolDescriber(inner: StackDescriber, proc: ProcessSeries): StackDescriber {
  const table = tables.get(proc);
  if (!table) return inner;
  return {
    frames(stackId: number): FrameOut[] {
      const { offsets, frames } = proc.stacks;
      return inner.frames(stackId).map((f, i) => {
        if (f.kind === 'python' || offsets[stackId] + i >= offsets[stackId + 1]) return f;
        const s = symbolAt(table, frames[offsets[stackId] + i], i);
        if (!s || s.frames.length === 0) return s?.binary === 'mismatch' ? { ...f, binary: s.binary } : f;
        const outer = s.frames[s.frames.length - 1];
        const out: FrameOut = { ...f, function: outer.function, file: outer.file, line: outer.line };
        if (s.frames.length > 1) out.inlined = s.frames.map((x) => ({ function: x.function, file: x.file, line: x.line }));
        if (s.binary) out.binary = s.binary;
        return out;
      });
    },
  };
}
