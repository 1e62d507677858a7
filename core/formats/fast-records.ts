// The record section of a heap_v2 dump through a small WASM module (native-tools/dump-lines/src/lib.rs): its
// backtrace lines matched against those this thread read before or scanned into words, its count lines into
// numbers. Only lines in the exact form jemalloc writes; at any other the record goes back whole to the
// JavaScript parser (heap-dump.ts), which reads it as it always did.
//
// Why WASM: a reader thread's first dumps ran its JavaScript parser before V8 had optimized it (a process's 25
// dumps took 230–285 ms of parse in a fresh thread against 70–120 ms warm); WASM code runs at full speed
// from its first call, and each reader thread (a worker, a Web Worker) starts cold again.
//
// One instance per thread (module state, like the thread's BacktraceCache). Its memory never grows (fixed
// tables, no allocator), so the views made once per entry stay valid; a restart of its tables (32 MiB of
// lines) happens only at the start of a call, when no record given out still points into them.

import { DUMP_LINES_WASM_BASE64 } from './dump-lines-wasm.js';

/** Bytes one call reads at most (the module's INPUT). */
export const FAST_INPUT_BYTES = 1 << 20;
/** Records and thread lines one call gives out at most (the module's OUT_RECORDS, OUT_THREADS). */
const OUT_RECORDS = 1 << 16;
const OUT_THREADS = 1 << 17;
/** Entries the module's tables hold at most before they restart (its ENTRY_CAP). */
const ENTRIES = 1 << 18;
/**
 * The module's serials start here, above any the thread's BacktraceCache gives: the merge maps a (reader,
 * serial) pair to a stack, so the two must never share a number.
 */
export const FAST_SERIAL_BASE = 2 ** 30;

/**
 * Why a call stopped (the module's REASON): at the end of its input (0: the record there may go on in the next
 * piece), at a line not in jemalloc's form or a record without its total line (FAST_STOP_FORM), or with its
 * output full or its tables needing a restart (2: the next call goes on).
 */
export const FAST_STOP_FORM = 1;

// Node's type definitions do not declare WebAssembly without the DOM lib; only these members are used.
interface WasmGlobal {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const WA = (globalThis as unknown as { WebAssembly?: WasmGlobal }).WebAssembly;

interface Exports {
  memory: { buffer: ArrayBuffer };
  input_ptr(): number;
  words_ptr(): number;
  out_u32_ptr(): number;
  out_f64_ptr(): number;
  thread_u32_ptr(): number;
  thread_f64_ptr(): number;
  read(len: number): void;
  stop(): number;
  lines(): number;
  records(): number;
  reason(): number;
  entry_words(entry: number): number;
  entry_frames(entry: number): number;
  entry_hash(entry: number): number;
  serial_base(): number;
  forget_last(): void;
}

export class FastRecords {
  private readonly x: Exports;
  private readonly input: Uint8Array;
  private readonly words: Uint32Array;
  /** per record: entry, line (from the call's first, 0-based), byte offset in the input, thread lines */
  readonly recordU32: Uint32Array;
  /** per record: live objects, live bytes, accumulated objects, accumulated bytes */
  readonly recordF64: Float64Array;
  /** per thread line: its uid; and its four counts */
  readonly threadU32: Uint32Array;
  readonly threadF64: Float64Array;
  // Per entry, made on its first record: its words' view and its hash. Each read through these saves the
  // two JavaScript-to-WASM calls a record would cost (Node 20 calls an export through a generic wrapper).
  private views: Uint32Array[] = [];
  private readonly hashes = new Int32Array(ENTRIES);
  private viewsOfBase = 0;

  constructor(exports: unknown) {
    this.x = exports as Exports;
    const buf = this.x.memory.buffer;
    this.input = new Uint8Array(buf, this.x.input_ptr(), FAST_INPUT_BYTES);
    this.words = new Uint32Array(buf);
    this.recordU32 = new Uint32Array(buf, this.x.out_u32_ptr(), 4 * OUT_RECORDS);
    this.recordF64 = new Float64Array(buf, this.x.out_f64_ptr(), 4 * OUT_RECORDS);
    this.threadU32 = new Uint32Array(buf, this.x.thread_u32_ptr(), OUT_THREADS);
    this.threadF64 = new Float64Array(buf, this.x.thread_f64_ptr(), 4 * OUT_THREADS);
  }

  /**
   * Reads the records of b[s, s + len) (len ≤ FAST_INPUT_BYTES; b[s] a backtrace line's '@'). Afterwards:
   * `stop()` bytes were read (0: none; the record there goes back to the caller), `lines()` lines, `records()`
   * records in the output columns, `reason()` why it stopped.
   */
  read(b: Uint8Array, s: number, len: number): void {
    this.input.set(len === b.length - s ? b.subarray(s) : b.subarray(s, s + len));
    this.x.read(len);
    const base = this.x.serial_base();
    if (base !== this.viewsOfBase) {
      // the tables restarted at the call's start: the old entries' views are of other lines now
      this.views = [];
      this.viewsOfBase = base;
    }
  }

  stop(): number {
    return this.x.stop();
  }
  lines(): number {
    return this.x.lines();
  }
  records(): number {
    return this.x.records();
  }
  reason(): number {
    return this.x.reason();
  }

  /** The words of an entry, (hi, lo) per frame: a view, made once per entry. */
  wordsOf(entry: number): Uint32Array {
    let v = this.views[entry];
    if (v === undefined) {
      const at = (this.x.words_ptr() >>> 2) + this.x.entry_words(entry);
      v = this.words.subarray(at, at + 2 * this.x.entry_frames(entry));
      this.views[entry] = v;
      this.hashes[entry] = this.x.entry_hash(entry);
    }
    return v;
  }

  hash(entry: number): number {
    if (this.views[entry] === undefined) this.wordsOf(entry);
    return this.hashes[entry]!;
  }

  /** A number for the entry no other entry of this thread (this module's or the BacktraceCache's) ever has. */
  serial(entry: number): number {
    return FAST_SERIAL_BASE + this.viewsOfBase + entry;
  }

  /** A new dump starts: its first backtrace line is not predicted from the last dump's last one. */
  newDump(): void {
    this.x.forget_last();
  }
}

let enabled = true;
let shared: FastRecords | null | undefined;

/**
 * This thread's instance, or null where WASM cannot be compiled synchronously (a browser's main thread refuses
 * modules over 4 KB) or it is switched off: the JavaScript parser then reads every line.
 */
export function fastRecords(): FastRecords | null {
  if (!enabled) return null;
  if (shared !== undefined) return shared;
  try {
    if (WA === undefined) throw new Error('no WebAssembly');
    const bin = atob(DUMP_LINES_WASM_BASE64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    shared = new FastRecords(new WA.Instance(new WA.Module(bytes), {}).exports);
  } catch {
    shared = null;
  }
  return shared;
}

/** Off: every line through the JavaScript parser (tests compare the two; benchmarks measure them). */
export function setFastRecords(on: boolean): void {
  enabled = on;
}
