// The JS side of native-tools/addr2line (heaplens_addr2line.wasm): instantiation, loading compact ELF images
// straight into WASM memory, batched lookups and decoding of the binary result format.
// Uses only the WebAssembly global, so it runs the same in Node, a worker and Electron's renderer.

import { ElfError, inflateSections, planCompactImage, type ElfInfo, type InflateFn } from './elf.js';
import type { SymbolFile } from './files.js';

/** Lookup flags, mirrored from src/lib.rs. */
export const FLAG_INLINE = 1;
export const FLAG_DEMANGLE = 2;
export const FLAG_SYMTAB = 4;

/** Where a frame's function name came from (src/lib.rs SOURCE_*). */
export type FrameSource = 'dwarf' | 'symtab' | 'dwarf-line+symtab-name';

export interface RawFrame {
  function: string | null;
  file: string | null;
  /** null when unknown (DWARF line 0) */
  line: number | null;
  column: number | null;
  source: FrameSource;
}

export interface ModuleInfo {
  hasDwarf: boolean;
  compressedDebug: boolean;
  symtabFunctions: number;
  dynsymFunctions: number;
  imageBytes: number;
  inflatedBytes: number;
}

interface A2lExports {
  memory: { buffer: ArrayBuffer };
  a2l_alloc(len: number): number;
  a2l_free(ptr: number, len: number): void;
  a2l_load(ptr: number, len: number): number;
  a2l_unload(handle: number): void;
  a2l_info(handle: number): number;
  a2l_lookup(handle: number, addrs: number, n: number, flags: number): number;
  a2l_result_len(): number;
  a2l_error(): number;
  a2l_error_len(): number;
  a2l_demangle(ptr: number, len: number): number;
}

/** A compiled module, opaque here (WebAssembly.Module). */
export type CompiledWasm = object;

interface WasmGlobal {
  compile(bytes: Uint8Array): Promise<CompiledWasm>;
  instantiate(module: CompiledWasm, imports: object): Promise<{ exports: unknown }>;
  RuntimeError: new (...args: never[]) => Error;
}

// Node's type definitions do not declare WebAssembly without the DOM lib; we only need these members.
const WA = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;

export function compileAddr2line(bytes: Uint8Array): Promise<CompiledWasm> {
  return WA.compile(bytes);
}

/** The instance trapped (out of memory, or a bug reached `unreachable`); it must be replaced. */
export class WasmTrapError extends Error {
  override name = 'WasmTrapError';
}

const SOURCES: FrameSource[] = ['dwarf', 'dwarf', 'symtab', 'dwarf-line+symtab-name'];
/** Addresses per lookup call: bounds the size of one result buffer, and lets the heap reserve adapt. */
const LOOKUP_CHUNK = 4096;
/**
 * Heap headroom reserved before the first lookup, as a share of the loaded image. Parsed units take about
 * 0.6–1.2× the debug bytes. Without the reserve the allocator grows WASM memory 64 KiB at a time, and V8
 * answers every grow with GC work: on an 80 MB binary that was 300+ full GCs and 2–3× the lookup time.
 */
const RESERVE_SHARE = 1.0;
const MIN_RESERVE = 16 << 20;
const MAX_RESERVE = 512 << 20;
/** Largest single read while filling the image. */
const READ_CHUNK = 4 << 20;
/** Reads in flight while filling the image. */
const PARALLEL_READS = 4;

export class Addr2lineInstance {
  private dead = false;
  private readonly decoder = new TextDecoder();

  private constructor(private readonly x: A2lExports) {}

  static async create(module: CompiledWasm): Promise<Addr2lineInstance> {
    let inst: { exports: unknown };
    try {
      inst = await WA.instantiate(module, {});
    } catch (e) {
      // An address-space limit (ulimit -v, as clusters set) leaves no room for WASM memory: V8 throws a
      // RangeError. Symbolization is given up for this module, not the command.
      if (e instanceof RangeError)
        throw new WasmTrapError(`out of memory for the symbolizer (${e.message}); frames left unsymbolized`);
      throw e;
    }
    return new Addr2lineInstance(inst.exports as A2lExports);
  }

  get isDead(): boolean {
    return this.dead;
  }

  /** Current size of the instance's linear memory (it never shrinks). */
  get memoryBytes(): number {
    return this.x.memory.buffer.byteLength;
  }

  /** Runs a call into WASM; a trap kills the instance. */
  private call<T>(f: () => T): T {
    if (this.dead) throw new WasmTrapError('addr2line instance is no longer usable');
    try {
      return f();
    } catch (e) {
      if (e instanceof WA.RuntimeError) {
        this.dead = true;
        throw new WasmTrapError(`addr2line trapped: ${e.message}`);
      }
      throw e;
    }
  }

  private bytes(ptr: number, len: number): Uint8Array {
    return new Uint8Array(this.x.memory.buffer, ptr >>> 0, len >>> 0);
  }

  /**
   * Makes the allocator take `bytes` from the system in one piece and give them back: they stay in its
   * free space (WASM memory cannot shrink), so later small allocations need no memory.grow.
   */
  reserve(bytes: number): void {
    const n = Math.min(Math.max(0, Math.floor(bytes)), MAX_RESERVE);
    if (n === 0 || this.dead) return;
    const p = this.call(() => this.x.a2l_alloc(n)) >>> 0;
    if (p !== 0) this.call(() => this.x.a2l_free(p, n));
  }

  private lastError(): string {
    const p = this.call(() => this.x.a2l_error());
    const n = this.call(() => this.x.a2l_error_len());
    return this.decoder.decode(this.bytes(p, n).slice());
  }

  /**
   * Builds the compact image of `file` (only its debug and symbol sections) inside WASM memory and loads it.
   * Callers must not run other calls on this instance until it resolves: the memory view is re-taken after
   * every read, but a concurrent call could grow memory in between.
   */
  async load(
    file: SymbolFile,
    info: ElfInfo,
    maxImageBytes: number,
    inflate?: InflateFn,
    preInflated?: ReadonlyMap<number, Uint8Array>,
  ): Promise<number> {
    // Compressed debug sections are inflated by the host when it can (a native zlib, in parallel), and
    // written plain into the image; the module inflates only what the host left. `preInflated`: the caller
    // already did that (inflateSections), for example while other modules were being looked up.
    const inflated = preInflated ?? (inflate ? await inflateSections(file, info, inflate, maxImageBytes) : undefined);
    const layout = planCompactImage(info, inflated);
    if (layout.size > maxImageBytes) {
      throw new ElfError(
        `debug and symbol sections of ${file.path} need ${layout.size} bytes, over the ${maxImageBytes} limit`,
      );
    }
    // The heap reserve (see below) and the image come from one memory grow: V8 may answer each grow with GC work.
    const loadReserve = layout.size * RESERVE_SHARE;
    this.reserve(layout.size + loadReserve);
    const ptr = this.call(() => this.x.a2l_alloc(layout.size)) >>> 0;
    if (ptr === 0) throw new WasmTrapError(`cannot allocate ${layout.size} bytes in WASM memory`);
    let owned = true;
    try {
      this.bytes(ptr, layout.header.length).set(layout.header);
      // Reads go straight into WASM memory, several at once (positioned reads on one file; a 50 MB image
      // is mostly page-cache copies and page faults, which overlap on the host's I/O threads). Memory cannot
      // grow meanwhile: nothing calls into the module until all reads are done.
      const reads: { fileOffset: number; imageOffset: number; size: number; name: string }[] = [];
      for (const piece of layout.pieces) {
        if (piece.data) {
          this.bytes(ptr + piece.imageOffset, piece.data.length).set(piece.data);
          continue;
        }
        for (let done = 0; done < piece.size; done += READ_CHUNK) {
          const n = Math.min(READ_CHUNK, piece.size - done);
          reads.push({
            fileOffset: piece.fileOffset + done,
            imageOffset: piece.imageOffset + done,
            size: n,
            name: piece.name,
          });
        }
      }
      const readOne = async (r: (typeof reads)[number]): Promise<void> => {
        let got: number;
        if (file.readInto) {
          got = await file.readInto(r.fileOffset, this.bytes(ptr + r.imageOffset, r.size));
        } else {
          const data = await file.read(r.fileOffset, r.size);
          this.bytes(ptr + r.imageOffset, data.length).set(data);
          got = data.length;
        }
        if (got < r.size) throw new ElfError(`short read in section ${r.name} of ${file.path}`);
      };
      // On a failure the other reads stop too, and all have settled before the buffer is freed.
      let next = 0;
      let failure: unknown = null;
      const worker = async (): Promise<void> => {
        while (failure === null && next < reads.length) {
          try {
            await readOne(reads[next++]);
          } catch (e) {
            failure ??= e;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, reads.length) }, worker));
      if (failure !== null) throw failure;
      // The heap reserve goes in before a2l_load: loading makes many small allocations (the unit list, the
      // symbol table; units themselves are parsed on first use, native-tools/addr2line/README.md), and growing
      // memory 64 KiB at a time for them is slow. Whatever a2l_load used of it is given back as headroom for the
      // lookups afterwards.
      const before = this.memoryBytes;
      this.reserve(loadReserve); // no-op in memory when the reserve above is still free
      owned = false; // a2l_load takes ownership, also on failure
      const handle = this.call(() => this.x.a2l_load(ptr, layout.size)) >>> 0;
      if (handle === 0) throw new ElfError(`${file.path}: ${this.lastError()}`);
      const grew = this.memoryBytes - before;
      if (grew > 0) this.reserve(Math.max(grew, MIN_RESERVE));
      return handle;
    } finally {
      if (owned && !this.dead) this.x.a2l_free(ptr, layout.size);
    }
  }

  info(handle: number): ModuleInfo {
    const p = this.call(() => this.x.a2l_info(handle));
    if (p >>> 0 === 0) throw new Error(this.lastError());
    const n = this.call(() => this.x.a2l_result_len());
    return JSON.parse(this.decoder.decode(this.bytes(p, n).slice())) as ModuleInfo;
  }

  unload(handle: number): void {
    if (!this.dead) this.call(() => this.x.a2l_unload(handle));
  }

  /** Frames per address (innermost inlined first). Addresses are ELF virtual addresses. */
  lookup(handle: number, addrs: readonly bigint[], flags = FLAG_INLINE | FLAG_DEMANGLE | FLAG_SYMTAB): RawFrame[][] {
    const out: RawFrame[][] = [];
    for (let i = 0; i < addrs.length; i += LOOKUP_CHUNK) {
      const before = this.memoryBytes;
      for (const r of this.lookupChunk(handle, addrs.slice(i, i + LOOKUP_CHUNK), flags)) out.push(r);
      // Memory grew during this chunk: give the next one as much headroom again, in one piece.
      const grew = this.memoryBytes - before;
      if (grew > 0 && i + LOOKUP_CHUNK < addrs.length) this.reserve(Math.max(grew, MIN_RESERVE));
    }
    return out;
  }

  private lookupChunk(handle: number, addrs: readonly bigint[], flags: number): RawFrame[][] {
    const n = addrs.length;
    if (n === 0) return [];
    const inLen = n * 8;
    const inPtr = this.call(() => this.x.a2l_alloc(inLen)) >>> 0;
    if (inPtr === 0) throw new WasmTrapError('cannot allocate the address buffer');
    let resPtr: number;
    let resLen: number;
    try {
      const dv = new DataView(this.x.memory.buffer, inPtr, inLen);
      for (let i = 0; i < n; i++) dv.setBigUint64(i * 8, BigInt.asUintN(64, addrs[i]), true);
      resPtr = this.call(() => this.x.a2l_lookup(handle, inPtr, n, flags)) >>> 0;
      if (resPtr === 0) throw new Error(this.lastError());
      resLen = this.call(() => this.x.a2l_result_len()) >>> 0;
    } finally {
      if (!this.dead) this.x.a2l_free(inPtr, inLen);
    }
    return this.decode(resPtr, resLen, n);
  }

  private decode(ptr: number, len: number, expected: number): RawFrame[][] {
    const buf = this.x.memory.buffer;
    if (len < 16) throw new Error('short lookup result');
    const dv = new DataView(buf, ptr, len);
    const u32 = (word: number): number => dv.getUint32(word * 4, true);
    const nAddrs = u32(0);
    const nFrames = u32(1);
    const nStrings = u32(2);
    const blobLen = u32(3);
    const words = 4 + nAddrs + nFrames * 5 + nStrings + 1;
    if (nAddrs !== expected || words * 4 + blobLen !== len) throw new Error('malformed lookup result');
    const blobStart = ptr + words * 4;
    const strings: string[] = new Array<string>(nStrings);
    const offBase = 4 + nAddrs + nFrames * 5;
    for (let i = 0; i < nStrings; i++) {
      const a = u32(offBase + i);
      const b = u32(offBase + i + 1);
      strings[i] = this.decoder.decode(new Uint8Array(buf, blobStart + a, b - a));
    }
    const str = (id: number): string | null => (id === 0xffffffff ? null : (strings[id] ?? null));
    const result: RawFrame[][] = [];
    let frameWord = 4 + nAddrs;
    for (let a = 0; a < nAddrs; a++) {
      const count = u32(4 + a);
      const frames: RawFrame[] = [];
      for (let k = 0; k < count; k++) {
        const line = u32(frameWord + 2);
        const column = u32(frameWord + 3);
        frames.push({
          function: str(u32(frameWord)),
          file: str(u32(frameWord + 1)),
          line: line === 0 ? null : line,
          column: column === 0 ? null : column,
          source: SOURCES[u32(frameWord + 4)] ?? 'dwarf',
        });
        frameWord += 5;
      }
      result.push(frames);
    }
    return result;
  }

  demangle(name: string): string {
    const raw = new TextEncoder().encode(name);
    if (raw.length === 0) return name;
    const p = this.call(() => this.x.a2l_alloc(raw.length)) >>> 0;
    if (p === 0) return name;
    try {
      this.bytes(p, raw.length).set(raw);
      const r = this.call(() => this.x.a2l_demangle(p, raw.length));
      const n = this.call(() => this.x.a2l_result_len());
      return this.decoder.decode(this.bytes(r, n).slice());
    } finally {
      if (!this.dead) this.x.a2l_free(p, raw.length);
    }
  }
}
