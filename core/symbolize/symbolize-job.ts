// The one symbolization driver: every process of a job with maps through one Symbolizer, each table written onto
// the model (ProcessSeries.symbols), and what could not be found or trusted returned as data, worded once. The CLI
// prints the problems as notes, the app shows them as warnings; neither words them again.

import { basename } from '../formats/dump-filename.js';
import type { InputFile } from '../formats/input-file.js';
import type { Job, ProcessSeries } from '../model/model.js';
import type { ModuleReport } from '../model/symbol-table.js';
import type { LoadProgress } from '../model/vocab.js';
import { isPerfMapName, parsePerfMap, type PerfMap } from './perf-map.js';
import { Symbolizer, type SymbolizerOptions } from './symbolize.js';
import type { SymbolFile, SymbolFileSource } from './files.js';

/** Perf maps larger than this are not read (a JIT's map is a few MB; this bounds a mistaken file). */
const MAX_PERF_MAP_BYTES = 256 << 20;

/** Perf maps (perf-<pid>.map) among the files given with the dumps: loadJob leaves them aside as not dumps. */
export async function perfMapsAmong(files: readonly InputFile[]): Promise<PerfMap[]> {
  const out: PerfMap[] = [];
  for (const f of files) {
    if (!isPerfMapName(f.path.slice(f.path.lastIndexOf('/') + 1)) || f.size >= MAX_PERF_MAP_BYTES) continue;
    out.push(parsePerfMap(new TextDecoder().decode(await f.read(0, f.size)), f.path));
  }
  return out;
}

/**
 * Files given with the dumps (dropped in the app: binaries and debug files beside the dumps) as a symbol source,
 * with every folder on their way as a symbol folder: a folder may be a sysroot (usr/lib/…) or flat.
 */
export function inputFileSource(files: readonly InputFile[]): { source: SymbolFileSource; dirs: string[] } {
  const byPath = new Map<string, InputFile>();
  const dirs = new Set<string>();
  for (const f of files) {
    const p = f.path.replace(/^\/+/, '');
    byPath.set(p, f);
    dirs.add('');
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) dirs.add(p.slice(0, i));
  }
  const source: SymbolFileSource = {
    open(path: string): Promise<SymbolFile | null> {
      const f = byPath.get(path.replace(/^\/+/, ''));
      if (!f) return Promise.resolve(null);
      return Promise.resolve({
        path: f.path,
        size: f.size,
        mtimeMs: f.mtimeMs,
        read: (o, l) => f.read(o, l),
        close: () => Promise.resolve(),
      });
    },
  };
  return { source, dirs: [...dirs] };
}

/**
 * Something symbolization could not do for a module or a process. `missing`: no binary found (its frames stay
 * module+offset); `mismatch`: the binary found is another build (its names are marked "binary mismatch");
 * `unverified`: the binary could not be checked against the mapping; `error`: the module could not be read;
 * `stopped`: symbolization of a process failed or ran out of memory.
 */
export interface SymbolProblem {
  kind: 'missing' | 'mismatch' | 'unverified' | 'error' | 'stopped';
  /** the file the problem is shown against: the newest dump of the (first) process */
  file: string;
  /** the mapping's path, null for a process-wide problem */
  mappingPath: string | null;
  binaryPath: string | null;
  message: string;
}

function problemFile(p: ProcessSeries): string {
  return p.snapshots[p.snapshots.length - 1]?.file ?? p.key;
}

/** The problems of one module report, worded once (none for a verified, readable module). */
function moduleProblems(m: ModuleReport, file: string): SymbolProblem[] {
  const at = { file, mappingPath: m.mappingPath, binaryPath: m.binaryPath };
  const out: SymbolProblem[] = [];
  if (m.binaryPath === null)
    out.push({
      ...at,
      kind: 'missing',
      message: `no binary for ${m.mappingPath} (${m.addresses} addresses): ${m.reason}; copy ${basename(m.mappingPath)} (or its debug file) from the job's machine and pass its folder with --symbols <dir>`,
    });
  else if (m.binary === 'mismatch')
    out.push({
      ...at,
      kind: 'mismatch',
      message: `binary ${m.binaryPath} does not match the mapping of ${m.mappingPath} (${m.reason}); its frames are marked "binary mismatch"`,
    });
  else if (m.binary === 'unverified')
    out.push({
      ...at,
      kind: 'unverified',
      message: `unverified binary ${m.binaryPath} for ${m.mappingPath}: ${m.reason}`,
    });
  // e.g. out of memory: its frames stay module+offset
  if (m.error) out.push({ ...at, kind: 'error', message: `${m.mappingPath}: ${m.error}` });
  return out;
}

/**
 * The problems of the symbol tables on a job's processes, once per module (processes mapping the same file share
 * one problem): after symbolizeJob, or for tables read back from a dataset.
 */
export function symbolProblems(job: Job): SymbolProblem[] {
  const seen = new Set<string>();
  const out: SymbolProblem[] = [];
  for (const p of job.processes) {
    for (const m of p.symbols?.modules ?? []) {
      const key = `${m.mappingPath}|${m.binaryPath}|${m.binary}|${m.error}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(...moduleProblems(m, problemFile(p)));
    }
  }
  return out;
}

export interface SymbolizeJobOptions extends Omit<SymbolizerOptions, 'symbolDirs'> {
  /** where binaries and debug files are (the Symbolizer's source) */
  source: SymbolFileSource;
  symbolDirs: string[];
  perfMaps?: PerfMap[];
  signal?: AbortSignal;
  /** per process, before it is symbolized (phase 'symbolize') */
  onProgress?: (p: LoadProgress) => void;
}

/**
 * Symbolizes every process of the job that has maps, writing `p.symbols`, and returns the problems (symbolProblems
 * plus processes whose symbolization stopped). A failure never fails the load: the process keeps module+offset
 * frames; running out of memory (an address-space limit, ulimit -v) stops the remaining processes too.
 */
export async function symbolizeJob(job: Job, options: SymbolizeJobOptions): Promise<SymbolProblem[]> {
  const { source, perfMaps = [], signal, onProgress, ...symbolizerOptions } = options;
  const stopped: SymbolProblem[] = [];
  if (!job.processes.some((p) => p.maps)) return stopped;
  const symbolizer = new Symbolizer(source, symbolizerOptions);
  try {
    const n = job.processes.length;
    for (let k = 0; k < n; k++) {
      const p = job.processes[k];
      if (!p.maps) continue;
      signal?.throwIfAborted();
      onProgress?.({ phase: 'symbolize', filesDone: k, filesTotal: n, bytesDone: k, bytesTotal: n, file: p.key });
      try {
        p.symbols = await symbolizer.symbolizeProcess(p, { perfMaps });
      } catch (e) {
        signal?.throwIfAborted();
        const at = { file: problemFile(p), mappingPath: null, binaryPath: null, kind: 'stopped' as const };
        if (e instanceof RangeError) {
          stopped.push({
            ...at,
            message: `symbolization stopped, out of memory (${e.message}); frames without symbols are shown as module+offset`,
          });
          break;
        }
        stopped.push({ ...at, message: `symbolization failed: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
  } finally {
    await symbolizer.dispose();
  }
  return [...symbolProblems(job), ...stopped];
}
