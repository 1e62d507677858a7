// Symbolization in Node: the one driver (core/symbolize/symbolize-job.ts) over the machine's files, with the symbol
// folders and sysroot a user names, the on-disk cache (node/io/symbol-files.ts) and the bundled addr2line
// WebAssembly. The CLI (--symbols, --sysroot, --no-symbols) and the Node engine (`heaplens open`) call it alike.

import type { Job } from '../../core/model/model.js';
import type { InputFile } from '../../core/formats/input-file.js';
import type { SymbolProblem } from '../../core/symbolize/symbolize-job.js';
import type { CompiledWasm } from '../../core/symbolize/wasm-addr2line.js';
import type { LoadProgress } from '../../core/model/vocab.js';

/** Where binaries and debug files are looked for (`--symbols`, `--sysroot`); null: no symbolization. */
export interface SymbolOptions {
  dirs: readonly string[];
  sysroot: string | null;
}

interface SymbolRuntime {
  io: typeof import('../io/symbol-files.js');
  job: typeof import('../../core/symbolize/symbolize-job.js');
  wasmBytes: Uint8Array;
  wasm: CompiledWasm;
}

let runtime: Promise<SymbolRuntime> | null = null;

/**
 * The symbolizer's modules and the compiled WASM module, loaded once and only by what symbolizes. Calling it early
 * (prepareSymbolizer) overlaps the compile with reading the dumps.
 */
function loadRuntime(beforeCompile?: () => void): Promise<SymbolRuntime> {
  runtime ??= (async () => {
    beforeCompile?.();
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

/** Starts loading the symbolizer, to overlap with reading the dumps (`beforeCompile`: V8 flags to set first). */
export function prepareSymbolizer(beforeCompile?: () => void): void {
  loadRuntime(beforeCompile).catch(() => undefined); // symbolizeOnDisk awaits it again and reports a failure
}

/**
 * Symbolizes every process of the job (ProcessSeries.symbols) from the files on this machine; returns the problems
 * (modules not found, mismatched builds, out of memory), never failing. `inputs` are the files given with the dumps
 * (their perf maps count).
 */
export async function symbolizeOnDisk(
  job: Job,
  options: SymbolOptions,
  inputs: readonly InputFile[],
  extra: { signal?: AbortSignal; onProgress?: (p: LoadProgress) => void } = {},
): Promise<SymbolProblem[]> {
  const rt = await loadRuntime();
  const cacheDir = rt.io.defaultSymbolCacheDir();
  return rt.job.symbolizeJob(job, {
    source: new rt.io.NodeSymbolFileSource(),
    wasm: rt.wasm,
    symbolDirs: [...options.dirs],
    sysroot: options.sysroot,
    // On another machine's dumps the local files at the same paths are a different build; a sysroot says so.
    hostPaths: options.sysroot === null,
    inflate: rt.io.nodeInflate,
    cacheStore: cacheDir ? new rt.io.NodeSymbolCacheStore(cacheDir, rt.io.wasmVersion(rt.wasmBytes)) : null,
    // perf maps are among the files loadJob leaves aside (not dumps)
    perfMaps: await rt.job.perfMapsAmong([...inputs]),
    ...(extra.signal ? { signal: extra.signal } : {}),
    ...(extra.onProgress ? { onProgress: extra.onProgress } : {}),
  });
}

/** The problems of symbol tables a dataset stored (made at ingest), to note as a fresh symbolization would. */
export async function storedSymbolProblems(job: Job): Promise<SymbolProblem[]> {
  const { symbolProblems } = await import('../../core/symbolize/symbolize-job.js');
  return symbolProblems(job);
}
