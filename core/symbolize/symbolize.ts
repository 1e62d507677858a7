// Symbolization of a process's return addresses: PC → mapping → (module, file offset) → ELF virtual address →
// function, file:line and inlined frames, through the bundled addr2line WebAssembly module.
// Pure: all file access goes through SymbolFileSource, so the CLI and the browser worker share this code.

import type { ProcessSeries } from '../model/model.js';
import { findMapping, isFileMapping, type MapsEntry } from '../formats/proc-maps.js';
import { ElfError, hasCompressedSections, inflateSections, planCompactImage, type InflateFn } from './elf.js';
import type { SymbolFileSource } from './files.js';
import { basename } from '../formats/dump-filename.js';
import { locateModule, pcToVaddr, type LocatedModule, type SearchOptions } from './locate.js';
import {
  LEAN_NO_BINARY,
  LEAN_UNMAPPED,
  moduleEntry,
  unmappedEntry,
  type ModuleReport,
  type SymbolFrame,
  type SymbolizedAddress,
  type SymbolStatus,
  type SymbolTable,
} from '../model/symbol-table.js';
import { findPerfSymbol, type PerfMap } from './perf-map.js';
import { parsePythonPerfName } from '../formats/perf-map.js';
import { isPythonPseudoAddress, layoutOf } from '../formats/pyframes.js';
import { Addr2lineInstance, WasmTrapError, type CompiledWasm, type RawFrame } from './wasm-addr2line.js';

// The table's types are the model's (core/model/symbol-table.ts): symbols are part of a process, as in pprof.
export type {
  BinaryCheck,
  ModuleReport,
  SymbolFrame,
  SymbolizedAddress,
  SymbolStatus,
  SymbolTable,
} from '../model/symbol-table.js';
export { symbolAt, symbolEntry } from '../model/symbol-table.js';

/** `libfoo.so+0x1234` for a frame without symbols, or the raw address when it is in no module. */
export function formatUnresolved(s: Pick<SymbolizedAddress, 'address' | 'module' | 'moduleOffset'>): string {
  return s.module && s.moduleOffset ? `${s.module}+${s.moduleOffset}` : s.address;
}

/** One line for a frame: the outermost function (with file:line when known), else `module+0xoffset`. */
export function formatFrame(s: SymbolizedAddress): string {
  const f = s.frames[s.frames.length - 1];
  if (!f || !f.function) return formatUnresolved(s);
  return f.file ? `${f.function} ${basename(f.file)}${f.line ? ':' + f.line : ''}` : f.function;
}

/** Persistent results, keyed by module identity (build-id, or path/size/mtime) then by ELF address. */
export interface SymbolCacheStore {
  load(identity: string): Promise<Map<string, RawFrame[]> | null>;
  save(identity: string, entries: Map<string, RawFrame[]>): Promise<void>;
}

export interface SymbolizerOptions extends Partial<SearchOptions> {
  /** compiled heaplens_addr2line.wasm (compileAddr2line) */
  wasm: CompiledWasm;
  /** modules whose compact image exceeds this get their own WASM instance, dropped after use */
  ownInstanceBytes?: number;
  /** refuse modules whose debug and symbol sections exceed this (WASM memory is 32-bit) */
  maxImageBytes?: number;
  cacheStore?: SymbolCacheStore | null;
  /** demangle C++/Rust names (default true) */
  demangle?: boolean;
  /** host-side zlib for compressed debug sections (much faster than the module's own); optional */
  inflate?: InflateFn;
}

export interface SymbolizeProcessOptions {
  /** perf-<pid>.map files; those whose pid differs from the process's are ignored */
  perfMaps?: PerfMap[];
  onProgress?: (done: number, total: number, module: string) => void;
}

interface LoadedModule {
  instance: Addr2lineInstance;
  handle: number;
  own: boolean;
}

interface ModuleState {
  located: LocatedModule | null;
  identity: string | null;
  error: string | null;
  /** the located files are still open (they are closed once the module's lookups are done, and reopened
   *  by path if it has to be loaded again: a job can map thousands of files) */
  filesOpen: boolean;
  /** compressed debug sections inflated ahead of the load (see run), dropped once loaded */
  inflated?: Promise<Map<number, Uint8Array>> | null;
  /** `inflated` has settled (run looks up a module still inflating after the others) */
  inflateDone?: boolean;
}

const DEFAULT_OWN_INSTANCE = 256 << 20;
/** Modules located ahead of the lookups (see run): at most this many ahead, this many at a time */
const LOCATE_AHEAD = 32;
const LOCATE_PARALLEL = 8;
const DEFAULT_MAX_IMAGE = 1536 << 20;

/**
 * Holds what outlives one process: located modules, loaded WASM modules and looked-up results. Keep one per
 * session; `dispose()` drops the WASM instances (their memory never shrinks otherwise).
 */
export class Symbolizer {
  private readonly search: SearchOptions;
  private shared: Addr2lineInstance | null = null;
  /** key: mapping path + the mappings' signature, so a different mapping of the same path is checked anew */
  private readonly modules = new Map<string, Promise<ModuleState>>();
  /** identity → module loaded in WASM; processes mapping the same build share it */
  private readonly loaded = new Map<string, LoadedModule>();
  /** identity → ELF address (hex) → frames */
  private readonly results = new Map<string, Map<string, RawFrame[]>>();
  private readonly dirty = new Set<string>();
  private readonly resultsLoading = new Map<string, Promise<Map<string, RawFrame[]>>>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: SymbolFileSource,
    private readonly opts: SymbolizerOptions,
  ) {
    this.search = {
      symbolDirs: opts.symbolDirs ?? [],
      sysroot: opts.sysroot ?? null,
      hostPaths: opts.hostPaths ?? true,
    };
  }

  /** Runs `f` after every earlier call finished: WASM memory views must not see a concurrent grow. */
  private exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async instance(): Promise<Addr2lineInstance> {
    if (!this.shared || this.shared.isDead) this.shared = await Addr2lineInstance.create(this.opts.wasm);
    return this.shared;
  }

  private moduleState(path: string, entries: MapsEntry[]): Promise<ModuleState> {
    const sig = entries.map((e) => `${e.start.toString(16)}-${e.end.toString(16)}@${e.offset.toString(16)}`).join(',');
    const key = `${path}\n${sig}`;
    let p = this.modules.get(key);
    if (!p) {
      p = (async (): Promise<ModuleState> => {
        try {
          const located = await locateModule(this.source, path, entries, this.search);
          if (!located) return { located: null, identity: null, error: null, filesOpen: false };
          const b = located.binary;
          const dbg = located.debug;
          const base = b.info.buildId
            ? `build-id:${b.info.buildId}`
            : `file:${b.file.path}:${b.file.size}:${b.file.mtimeMs ?? ''}`;
          return { located, identity: `${base}:${dbg ? 'debug' : 'binary'}`, error: null, filesOpen: true };
        } catch (e) {
          return { located: null, identity: null, error: e instanceof Error ? e.message : String(e), filesOpen: false };
        }
      })();
      this.modules.set(key, p);
    }
    return p;
  }

  private async ensureLoaded(state: ModuleState): Promise<LoadedModule> {
    const located = state.located;
    const identity = state.identity;
    if (!located || !identity) throw new Error('no module');
    const have = this.loaded.get(identity);
    if (have && !have.instance.isDead) return have;
    const src = located.debug ?? located.binary;
    let file = src.file;
    if (!state.filesOpen) {
      const again = await this.source.open(src.file.path);
      if (!again || again.size !== src.file.size) {
        await again?.close();
        throw new ElfError(`${src.file.path} changed or disappeared since it was checked`);
      }
      file = again;
    }
    try {
      const maxImage = this.opts.maxImageBytes ?? DEFAULT_MAX_IMAGE;
      const ownLimit = this.opts.ownInstanceBytes ?? DEFAULT_OWN_INSTANCE;
      const own = planCompactImage(src.info).size > ownLimit;
      const instance = own ? await Addr2lineInstance.create(this.opts.wasm) : await this.instance();
      const pre = state.filesOpen && state.inflated ? await state.inflated.catch(() => undefined) : undefined;
      state.inflated = null;
      const handle = await instance.load(file, src.info, maxImage, this.opts.inflate, pre);
      const loaded = { instance, handle, own };
      this.loaded.set(identity, loaded);
      return loaded;
    } finally {
      if (!state.filesOpen) await file.close().catch(() => undefined);
    }
  }

  private async closeFiles(state: ModuleState): Promise<void> {
    // Marked closed at once (callers need not wait); an inflate started ahead but never loaded (the lookup
    // failed or was answered from the cache) is dropped after its reads finish, then the files close.
    const pending = state.inflated;
    state.inflated = null;
    const located = state.filesOpen ? state.located : null;
    state.filesOpen = false;
    if (pending) await pending.catch(() => undefined);
    if (!located) return;
    await Promise.all([located.binary.file.close(), located.debug?.file.close()].map((p) => p?.catch(() => undefined)));
  }

  private async resultsFor(identity: string): Promise<Map<string, RawFrame[]>> {
    const m = this.results.get(identity);
    if (m) return m;
    // One load per identity, also when a prefetch (run) and the lookup ask at the same time.
    let p = this.resultsLoading.get(identity);
    if (!p) {
      p = (async () => {
        const loaded =
          (this.opts.cacheStore ? await this.opts.cacheStore.load(identity).catch(() => null) : null) ??
          new Map<string, RawFrame[]>();
        const had = this.results.get(identity);
        if (had) return had;
        this.results.set(identity, loaded);
        return loaded;
      })();
      this.resultsLoading.set(identity, p);
      void p.finally(() => this.resultsLoading.delete(identity)).catch(() => undefined);
    }
    return p;
  }

  /** Looks up ELF addresses of one module, using and filling the cache. */
  private async lookupModule(state: ModuleState, vaddrs: bigint[]): Promise<Map<string, RawFrame[]>> {
    const identity = state.identity;
    if (!identity) throw new Error('no module');
    const cache = await this.resultsFor(identity);
    const missing = [...new Set(vaddrs.map((v) => v.toString(16)))].filter((h) => !cache.has(h));
    if (missing.length > 0) {
      const loaded = await this.ensureLoaded(state);
      try {
        const flags = 1 | (this.opts.demangle === false ? 0 : 2) | 4;
        const frames = loaded.instance.lookup(
          loaded.handle,
          missing.map((h) => BigInt('0x' + h)),
          flags,
        );
        missing.forEach((h, i) => cache.set(h, frames[i]));
        this.dirty.add(identity);
      } finally {
        if (loaded.own) {
          // Big modules get a throw-away instance: dropping it is the only way to give the memory back.
          loaded.instance.unload(loaded.handle);
          this.loaded.delete(identity);
        }
      }
    }
    return cache;
  }

  /** Writes new results to the cache store. */
  async flush(): Promise<void> {
    const store = this.opts.cacheStore;
    if (!store) return;
    for (const id of this.dirty) {
      const m = this.results.get(id);
      if (m) await store.save(id, m);
    }
    this.dirty.clear();
  }

  /** Drops WASM instances and closes files. Results stay cached. */
  async dispose(): Promise<void> {
    await this.flush();
    for (const p of this.modules.values()) await this.closeFiles(await p);
    this.modules.clear();
    this.loaded.clear();
    this.shared = null;
  }

  symbolizeProcess(proc: ProcessSeries, options: SymbolizeProcessOptions = {}): Promise<SymbolTable> {
    return this.exclusive(() => this.run(proc, options));
  }

  private async run(proc: ProcessSeries, options: SymbolizeProcessOptions): Promise<SymbolTable> {
    const n = proc.addresses.hex.length;
    const table: SymbolTable = {
      leaf: new Array(n).fill(undefined),
      caller: new Array(n).fill(undefined),
      modules: [],
    };
    // the addresses nothing is found for are marked, not given an entry each (SymbolTable.lean)
    const lean = new Uint8Array(n);
    let leans = 0;
    const asLeaf = new Uint8Array(n);
    const asCaller = new Uint8Array(n);
    const { offsets, frames } = proc.stacks;
    for (let s = 0; s < proc.stacks.count; s++) {
      const start = offsets[s];
      const end = offsets[s + 1] ?? frames.length;
      if (start < end) asLeaf[frames[start]] = 1;
      for (let i = start + 1; i < end; i++) asCaller[frames[i]] = 1;
    }
    const maps = proc.maps ?? [];
    // Python frames are pseudo-addresses in the layout the process's table declares (python-frames.md)
    const layout = layoutOf(proc.pythonFrames ?? null);
    const perfMaps = (options.perfMaps ?? []).filter((m) => m.pid === null || proc.pid === null || m.pid === proc.pid);

    // Group lookups by mapping path.
    interface Want {
      id: number;
      caller: boolean;
      pc: bigint;
      entry: MapsEntry;
    }
    const byModule = new Map<string, Want[]>();
    for (let id = 0; id < n; id++) {
      if (!asLeaf[id] && !asCaller[id]) continue;
      const hex = proc.addresses.hex[id];
      if (isPythonPseudoAddress(hex, layout)) continue;
      let pc: bigint;
      try {
        pc = BigInt(hex);
      } catch {
        continue;
      }
      // names the profile carries (pprof, massif) come first: they are what the writer resolved at the time
      const named = proc.profileSymbols?.get(hex);
      if (named) {
        const entry = findMapping(maps, pc);
        const sym: SymbolizedAddress = {
          address: hex,
          module: entry && entry.path ? basename(entry.path) : null,
          modulePath: entry && entry.path ? entry.path : null,
          moduleOffset: entry && entry.path ? '0x' + (pc - entry.start + entry.offset).toString(16) : null,
          frames: named.map((f) => ({ function: f.function, file: f.file, line: f.line })),
          status: named.some((f) => f.line !== null) ? 'symbolized' : 'symbol-only',
          binary: null,
        };
        if (asLeaf[id]) table.leaf[id] = sym;
        if (asCaller[id]) table.caller[id] = sym;
        continue;
      }
      for (const caller of [false, true]) {
        if (!(caller ? asCaller[id] : asLeaf[id])) continue;
        const probe = caller && pc > 0n ? pc - 1n : pc;
        const entry = findMapping(maps, probe);
        const target = caller ? table.caller : table.leaf;
        if (!entry || !isFileMapping(entry)) {
          // without perf maps, the entry is what leanEntry makes of the address
          if (perfMaps.length > 0) target[id] = this.unmapped(hex, pc, probe, entry, perfMaps);
          else {
            lean[id] |= LEAN_UNMAPPED << (caller ? 2 : 0);
            leans++;
          }
          continue;
        }
        let list = byModule.get(entry.path);
        if (!list) byModule.set(entry.path, (list = []));
        list.push({ id, caller, pc, entry });
      }
    }

    let done = 0;
    const total = byModule.size;
    // Modules are located (ELF headers read, debug files searched, cached results loaded) ahead of the one
    // being looked up, several at a time, so their file reads overlap instead of running one after another.
    // Bounded: a job can map thousands of files, and located files stay open until their lookups are done.
    const paths = [...byModule.keys()];
    const entriesOf = (path: string): MapsEntry[] => maps.filter((e) => e.path === path);
    const locateAhead = async (i: number): Promise<void> => {
      await this.inflateAhead(await this.moduleState(paths[i], entriesOf(paths[i])));
    };
    let cursor = 0;
    let started = 0;
    let inFlight = 0;
    const pump = (): void => {
      while (inFlight < LOCATE_PARALLEL && started < paths.length && started < cursor + LOCATE_AHEAD) {
        inFlight++;
        locateAhead(started++)
          .catch(() => undefined) // the loop below asks again and reports
          .finally(() => {
            inFlight--;
            pump();
          });
      }
    };
    pump();
    const closing: Promise<void>[] = [];
    // Reports in the maps' order, whatever order the modules are looked up in.
    const reports: ModuleReport[] = [];
    const order = [...byModule].map(([path, wants], index) => ({ path, wants, index, deferred: false }));
    for (let k = 0; k < order.length; k++) {
      const { path, wants, index } = order[k];
      cursor = Math.max(cursor, index);
      pump();
      const entries = entriesOf(path);
      const state = await this.moduleState(path, entries);
      // (the prefetch above may not have got this far yet)
      await this.inflateAhead(state);
      // A module whose debug sections are still inflating on the I/O threads (libc's 6 MB of DWARF: ~20 ms) is
      // looked up after the others, whose lookups then run on this thread meanwhile instead of after the wait.
      if (state.inflated && !state.inflateDone && !order[k].deferred && k < order.length - 1) {
        order.push({ ...order[k], deferred: true });
        continue;
      }
      options.onProgress?.(done, total, path);
      const located = state.located;
      const report: ModuleReport = {
        mappingPath: path,
        binaryPath: located?.binary.file.path ?? null,
        debugPath: located?.debug?.file.path ?? null,
        buildId: located?.binary.info.buildId ?? null,
        mappingBuildId: entries.find((e) => e.buildId)?.buildId ?? null,
        binary: located?.check ?? null,
        reason: located ? located.checkReason : (state.error ?? `not found (tried ${this.candidatesNote(path)})`),
        addresses: wants.length,
        error: state.error,
      };
      reports[index] = report;
      const vaddrs: (bigint | null)[] = located
        ? wants.map((w) => pcToVaddr(located.binary.info, w.entry, w.caller ? w.pc - 1n : w.pc))
        : [];
      let results: Map<string, RawFrame[]> | null = null;
      if (located && state.identity) {
        try {
          results = await this.lookupModule(
            state,
            vaddrs.filter((v): v is bigint => v !== null),
          );
        } catch (e) {
          // RangeError: an ArrayBuffer or WASM memory grow refused (address-space limit): frames stay unsymbolized.
          const memory = e instanceof RangeError;
          report.error = memory
            ? `out of memory for the symbolizer (${e.message}); frames left unsymbolized`
            : e instanceof Error
              ? e.message
              : String(e);
          if (!(e instanceof ElfError || e instanceof WasmTrapError || memory)) throw e;
        }
      }
      // Closing needs no waiting here (a round trip to the I/O threads per file); run() waits for all at the end.
      closing.push(this.closeFiles(state));
      if (!located) {
        // the binary is not here: every entry is the address and its module (leanEntry's 'no-binary')
        for (const w of wants) lean[w.id] |= LEAN_NO_BINARY << (w.caller ? 2 : 0);
        leans += wants.length;
        done++;
        continue;
      }
      wants.forEach((w, i) => {
        const base = moduleEntry(proc.addresses.hex[w.id], w.pc, w.entry, 'unresolved', located.check);
        const v = vaddrs[i];
        const raw = v !== null && results ? results.get(v.toString(16)) : undefined;
        if (raw && raw.length > 0) {
          const c = converted(raw);
          base.frames = c.frames;
          base.status = c.status;
        }
        (w.caller ? table.caller : table.leaf)[w.id] = base;
      });
      done++;
    }
    options.onProgress?.(done, total, '');
    table.modules.push(...reports);
    if (leans > 0) table.lean = lean;
    await Promise.all(closing);
    await this.flush();
    return table;
  }

  /**
   * Nothing cached for a module with compressed debug sections (Debian's /usr/lib/debug files): start inflating
   * them now, on the host's I/O threads, while other modules are looked up. Once per module; none once loaded.
   */
  private async inflateAhead(st: ModuleState): Promise<void> {
    if (!st.identity || this.loaded.has(st.identity) || st.inflated !== undefined) return;
    const cached = await this.resultsFor(st.identity);
    const src = st.located ? (st.located.debug ?? st.located.binary) : null;
    const inflate = this.opts.inflate;
    if (cached.size > 0 || !src || !inflate || !st.filesOpen || st.inflated !== undefined) return;
    if (!hasCompressedSections(src.info)) return;
    const inflated = inflateSections(src.file, src.info, inflate, this.opts.maxImageBytes ?? DEFAULT_MAX_IMAGE);
    st.inflated = inflated;
    const done = (): void => {
      st.inflateDone = true;
    };
    inflated.then(done, done);
  }

  private candidatesNote(path: string): string {
    const parts: string[] = [];
    if (this.search.symbolDirs.length) parts.push(`${this.search.symbolDirs.length} symbol folder(s)`);
    if (this.search.sysroot) parts.push('the sysroot');
    if (this.search.hostPaths) parts.push(path);
    return parts.join(', ') || 'nothing: no symbol folders given';
  }

  private unmapped(
    hex: string,
    pc: bigint,
    probe: bigint,
    entry: MapsEntry | null,
    perfMaps: PerfMap[],
  ): SymbolizedAddress {
    for (const m of perfMaps) {
      const sym = findPerfSymbol(m, probe);
      if (sym) {
        const py = parsePythonPerfName(sym.name);
        if (py) {
          // Python 3.12's perf trampolines name the Python function run by that eval call (no line).
          return {
            address: hex,
            module: basename(m.path),
            modulePath: m.path,
            moduleOffset: null,
            frames: [{ function: py.function, file: py.file, line: null }],
            status: 'symbol-only',
            binary: null,
            python: true,
          };
        }
        return {
          address: hex,
          module: basename(m.path),
          modulePath: m.path,
          moduleOffset: null,
          frames: [{ function: sym.name, file: null, line: null }],
          status: 'symbol-only',
          binary: null,
        };
      }
    }
    return unmappedEntry(hex, pc, entry);
  }
}

/**
 * Frames and status for one cached lookup result, made once and shared by every address (and process) that
 * hits it: a second pass over a process is then Map lookups only. Callers must not mutate them.
 */
const convertedFrames = new WeakMap<RawFrame[], { frames: SymbolFrame[]; status: SymbolStatus }>();

function converted(raw: RawFrame[]): { frames: SymbolFrame[]; status: SymbolStatus } {
  let c = convertedFrames.get(raw);
  if (!c) {
    const frames = raw.map(toFrame);
    c = frames.some((f) => f.function !== null || f.file !== null)
      ? { frames, status: raw.some((f) => f.source !== 'symtab' && f.line !== null) ? 'symbolized' : 'symbol-only' }
      : { frames: [], status: 'unresolved' };
    convertedFrames.set(raw, c);
  }
  return c;
}

function toFrame(f: RawFrame): SymbolFrame {
  const out: SymbolFrame = { function: f.function, file: f.file, line: f.line };
  if (f.column !== null) out.column = f.column;
  return out;
}

/** Convenience wrapper: symbolizes one process with a Symbolizer (which keeps caches between calls). */
export function symbolizeProcess(
  proc: ProcessSeries,
  symbolizer: Symbolizer,
  options: SymbolizeProcessOptions = {},
): Promise<SymbolTable> {
  return symbolizer.symbolizeProcess(proc, options);
}
