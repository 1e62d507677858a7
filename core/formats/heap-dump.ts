// Push parser for jemalloc heap profiles, fed raw bytes in chunks (never one string of the whole file:
// V8 caps strings near 512 MB and dumps can be larger).
//
// Formats:
//   heap_v2/<period>                          jemalloc 4.0–5.3 (per-thread "tN:" lines, "@ 0x…" records)
//   heap profile: … @ heap_v2/N | heapprofile | heap/N   jemalloc 3.x and gperftools (one line per record)
// Both may end with "MAPPED_LIBRARIES:" and a copy of /proc/<pid>/maps. See docs/formats.md.

import type { DumpFormat, RawCounts } from './dump-types.js';
import { countsProblem, MAX_FRAMES_PER_STACK, MAX_LINE_BYTES, periodProblem } from './limits.js';
import { framesHash, scanFrameWords } from './frame-scan.js';
import type { BacktraceCache } from './backtrace-cache.js';
import { viewOf } from './same-bytes.js';
import { FAST_INPUT_BYTES, FAST_STOP_FORM, fastRecords, type FastRecords } from './fast-records.js';

/** How the file says its samples must be scaled back to estimated totals. */
export type Sampling =
  | { kind: 'poisson'; period: number } // heap_v2/N: P(sampled) = 1 - exp(-size/N)
  | { kind: 'v1'; period: number } // jeprof's remote-heap version 1 (no file format read here uses it: see samplingFor)
  | { kind: 'none' }; // every allocation recorded (heapprofile)

export interface RecordThread {
  uid: number;
  counts: RawCounts;
}

export interface DumpRecord {
  /**
   * The frame addresses after '@', leaf first, as 64-bit values split in 32-bit words: frame k is
   * (hi, lo) = (frameWords[2k], frameWords[2k+1]). Empty for an '@' line with no frames; a 3.x
   * trailing 0x0 is removed. With an onRecord callback this is a reused buffer or the backtrace cache's own
   * words, valid only during the call and never to be written to: copy it to keep it. (Words, not strings:
   * building strings per record was the parser's cost.) With a callback the whole record (its counts and
   * threads too) is reused for the next one.
   */
  frameWords: Uint32Array;
  /** framesHash of frameWords (frame-scan.ts), when the reader computed or kept it (with an onRecord callback) */
  frameHash?: number;
  /**
   * the backtrace cache's serial (BacktraceCache.serial) of the line these words are kept under, -1 (or absent)
   * when the line is not in a cache: equal serials of one cache mean equal words
   */
  frameEntry?: number;
  counts: RawCounts;
  /** a pprof sample's values of the profile's other declared sample types (PprofHeap.extraTypes' order) */
  extra?: number[];
  /** per-thread split (heap_v2 only); the same uid may repeat after prof.reset */
  threads: RecordThread[];
  /** 1-based line of the '@' line */
  line: number;
}

export interface HeaderThread {
  uid: number;
  name: string | null;
  counts: RawCounts;
}

export interface ParseProblem {
  line: number;
  byteOffset: number;
  message: string;
}

export interface ParsedDumpInfo {
  format: DumpFormat | null;
  sampling: Sampling;
  header: RawCounts | null;
  headerThreads: HeaderThread[];
  recordCount: number;
  /** text of the MAPPED_LIBRARIES section, null when the dump has none */
  mapsText: string | null;
  /** 1-based line number of the first maps line */
  mapsFirstLine: number;
  /** true when the maps section reached the end of the file intact (not cut mid-line) */
  mapsComplete: boolean;
  /** text after the maps that starts with a known trailer header (e.g. a PYFRAMES/1 table), else null */
  trailerText: string | null;
  /**
   * Where the records stop being trusted (`byteOffset`: the start of the cut line or the missing section) and
   * where the file ends (`fileBytes`: a multiple of jemalloc's write buffer is the clue of a kill mid-write).
   */
  truncated: { byteOffset: number; line: number; reason: string; fileBytes: number } | null;
  /** a fatal problem: the file is not a heap profile at all */
  fatal: ParseProblem | null;
  problems: ParseProblem[];
  /** problems past MAX_PROBLEMS, counted but not kept (so a summary can say how many records went) */
  problemsOmitted: number;
  /** leading lines that were skipped before the header (e.g. "<jemalloc>: Leak …") */
  skippedLeadingLines: number;
  /**
   * A Go runtime heap profile (runtime/pprof debug=1: "heap/N" records followed by "#" comment lines and a
   * "# runtime.MemStats" block). Every heap/N file is unsampled as pprof does, Poisson at rate N/2.
   */
  goRuntime: boolean;
  bytes: number;
  lines: number;
}

const NL = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const AT = 64;
const T = 116;
const STAR = 42;
const COLON = 58;
const LBRACK = 91;
const RBRACK = 93;
const MINUS = 45;
const HASH = 35;
const D0 = 48;
const D9 = 57;

const MAPS_HEADER = 'MAPPED_LIBRARIES:';
const OLD_MAPS_HEADER = '--- Memory map:';
const TRAILER_PREFIXES = ['PYFRAMES/'];
// jemalloc writes through a 65,535-byte buffer: a dump killed mid-write has a multiple of it as length.
export const JEMALLOC_DUMP_CHUNK = 65535;
/** Problems listed one by one per file; the rest are counted (problemsOmitted): a damaged file stays readable. */
const MAX_PROBLEMS = 50;
/** count lines ("  t*: 1: 64 [0: 0]") are searched for their newline by a loop up to this length */
const SHORT_LINE = 96;

type Phase = 'start' | 'v2' | 'legacy' | 'maps' | 'trailer' | 'fatal';

const asciiDecoder = new TextDecoder('utf-8');

function zeroCounts(): RawCounts {
  // Fields made doubles from the start (0.5, then 0): counts past 2^31 came later and turned them from small
  // integers to doubles, which threw away the optimized code of every function reading them (recompiled each time)
  const c = { liveObjects: 0.5, liveBytes: 0.5, accumObjects: 0.5, accumBytes: 0.5 };
  c.liveObjects = c.liveBytes = c.accumObjects = c.accumBytes = 0;
  return c;
}

function copyCounts(from: RawCounts, to: RawCounts): void {
  to.liveObjects = from.liveObjects;
  to.liveBytes = from.liveBytes;
  to.accumObjects = from.accumObjects;
  to.accumBytes = from.accumBytes;
}

/** what follows each of a count line's four numbers: "a: b [c: d]" */
const COUNT_SEPARATORS = [COLON, LBRACK, COLON, RBRACK];

/** Cursor over one line's bytes for the hand-written number scanner (regexes on strings cost 3–5× more). */
class Scan {
  b!: Uint8Array;
  i = 0;
  end = 0;
  ok = true;

  reset(b: Uint8Array, start: number, end: number): void {
    this.b = b;
    this.i = start;
    this.end = end;
    this.ok = true;
  }

  skipSpaces(): void {
    while (this.i < this.end && (this.b[this.i] === SPACE || this.b[this.i] === TAB)) this.i++;
  }

  expect(c: number): void {
    this.skipSpaces();
    if (this.i < this.end && this.b[this.i] === c) this.i++;
    else this.ok = false;
  }

  /** decimal integer, optionally negative (3.x prints signed live counts) */
  int(): number {
    this.skipSpaces();
    let neg = false;
    if (this.i < this.end && this.b[this.i] === MINUS) {
      neg = true;
      this.i++;
    }
    const start = this.i;
    let v = 0;
    while (this.i < this.end) {
      const c = this.b[this.i];
      if (c < D0 || c > D9) break;
      v = v * 10 + (c - D0);
      this.i++;
    }
    if (this.i === start) this.ok = false;
    return neg ? -v : v;
  }

  /**
   * "a: b [c: d]", into `out` (a record's counts are scanned into reused objects: none made per line). The same
   * steps as int() and expect() four times, over locals: three count lines a record made the cursor's field
   * loads and stores a fifth of the parse.
   */
  counts(out: RawCounts): RawCounts {
    const b = this.b;
    const e = this.end;
    let i = this.i;
    let ok = this.ok;
    for (let k = 0; k < 4; k++) {
      while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
      let neg = false;
      if (i < e && b[i] === MINUS) {
        neg = true;
        i++;
      }
      const start = i;
      let v = 0;
      while (i < e) {
        const c = b[i];
        if (c < D0 || c > D9) break;
        v = v * 10 + (c - D0);
        i++;
      }
      if (i === start) ok = false;
      const value = neg ? -v : v;
      while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
      if (i < e && b[i] === COUNT_SEPARATORS[k]) i++;
      else ok = false;
      if (k === 0) out.liveObjects = value;
      else if (k === 1) out.liveBytes = value;
      else if (k === 2) out.accumObjects = value;
      else out.accumBytes = value;
    }
    this.i = i;
    this.ok = ok;
    return out;
  }
}

export interface HeapDumpParserOptions {
  /** called once per complete record; when absent, records are collected in `records` */
  onRecord?: (r: DumpRecord) => void;
  /** backtrace lines read before (by this thread's earlier dumps too): such a line is matched, not scanned */
  backtraces?: BacktraceCache;
  /** false: every line through this parser, not the thread's WASM record reader (fast-records.ts; tests) */
  fastRecords?: boolean;
}

/** Records the WASM reader turns back for their form before a dump stops asking it (a CRLF file, say). */
const FAST_REFUSALS = 8;

export class HeapDumpParser {
  private phase: Phase = 'start';
  // The partial last line, as the pieces it arrived in: joined once when its newline comes (copying
  // it on every chunk made a file without newlines quadratic).
  private carryParts: Uint8Array[] = [];
  private carryLen = 0;
  /** byte offset where a line longer than MAX_LINE_BYTES began; its bytes are dropped until its end */
  private longLineAt = -1;
  private offset = 0; // bytes consumed before the current chunk
  private lineNo = 0;
  private pending: DumpRecord | null = null;
  private pendingHasTotal = false;
  private skipping = false;
  private pendingStartOffset = 0;
  private mapsParts: string[] = [];
  private trailerParts: string[] = [];
  private readonly scan = new Scan();
  private readonly onRecord: (r: DumpRecord) => void;
  private problemsDropped = 0;
  readonly records: DumpRecord[] = [];
  readonly info: ParsedDumpInfo = {
    format: null,
    sampling: { kind: 'none' },
    header: null,
    headerThreads: [],
    recordCount: 0,
    mapsText: null,
    mapsFirstLine: 0,
    mapsComplete: false,
    trailerText: null,
    truncated: null,
    fatal: null,
    problems: [],
    problemsOmitted: 0,
    skippedLeadingLines: 0,
    goRuntime: false,
    bytes: 0,
    lines: 0,
  };

  private readonly copyFrames: boolean;
  /** the header says "@ heap/N" (Go's runtime and old gperftools write it); "#" lines then mark Go's runtime */
  private goHeader = false;
  /** room for the most frames a stack keeps (scanFrameWords stores at most that many) */
  private readonly words = new Uint32Array(2 * MAX_FRAMES_PER_STACK);
  /** views words[0, 2n) by n, made once per buffer: a new view per record was an allocation per record */
  private wordViews: Uint32Array[] = [];
  /** the record being read, reused from one record to the next when records go to a callback */
  private readonly current: DumpRecord = {
    frameWords: new Uint32Array(0),
    frameHash: 0,
    frameEntry: -1,
    counts: zeroCounts(),
    threads: [],
    line: 0,
  };
  /** per-thread entries of `current`, reused */
  private readonly threadPool: RecordThread[] = [];
  /** the count line being read */
  private readonly lineCounts = zeroCounts();

  private readonly cache: BacktraceCache | null;
  /** the cache's entry for the last backtrace line, -1 when it has none: the next line is first tried as its successor */
  private lastLine = -1;
  /** the last scanFrames call gave every frame without a problem */
  private scanClean = false;

  /** the thread's WASM record reader (null: none, or this dump stopped asking it) */
  private fast: FastRecords | null;
  /** the byte offset of the record it last turned back (read here, then asked again at the next record) */
  private fastRefused = -1;
  private fastRefusals = 0;

  constructor(options: HeapDumpParserOptions = {}) {
    this.onRecord = options.onRecord ?? ((r) => this.records.push(r));
    this.copyFrames = options.onRecord === undefined;
    this.cache = options.backtraces ?? null;
    this.fast = options.fastRecords === false ? null : fastRecords();
    this.fast?.newDump();
  }

  /** Hex addresses "0x…" separated by blanks → (hi, lo) word pairs in the scratch buffer; null if malformed. */
  private scanFrames(b: Uint8Array, s: number, e: number, at: number): Uint32Array | null {
    let n = scanFrameWords(b, s, e, this.words, MAX_FRAMES_PER_STACK);
    this.scanClean = n >= 0 && n <= MAX_FRAMES_PER_STACK;
    if (n < 0) {
      this.problem(this.lineNo, at, `malformed address in backtrace: ${clip(this.text(b, s, e))}`);
      return null;
    }
    if (n > MAX_FRAMES_PER_STACK) {
      this.problem(
        this.lineNo,
        at,
        `backtrace of ${n} frames cut to its ${MAX_FRAMES_PER_STACK} leaf-most (jemalloc writes at most 128)`,
      );
      n = MAX_FRAMES_PER_STACK;
    }
    return (this.wordViews[n] ??= this.words.subarray(0, 2 * n));
  }

  /** Feeds the next piece of the (decompressed) file. */
  push(bytes: Uint8Array): void {
    // One kind of array in the parse, whatever the source gives (Node's zlib gives Buffers, file reads plain
    // Uint8Arrays): each kind seen by its inner loops threw away their optimized code and made V8 compile them
    // again, dump after dump (half of the readers' CPU in a job of plain and gzipped dumps)
    const chunk = Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : plainBytes(bytes);
    const base = this.offset;
    this.offset += chunk.length;
    if (this.phase === 'fatal') return;
    let pos = 0;
    if (this.carryLen > 0 || this.longLineAt >= 0) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        this.hold(chunk, 0, base);
        return;
      }
      if (this.longLineAt >= 0) {
        this.endLongLine();
      } else {
        // Only the partial line is joined, once, never the whole history.
        const line = new Uint8Array(this.carryLen + nl + 1);
        let k = 0;
        for (const part of this.carryParts) {
          line.set(part, k);
          k += part.length;
        }
        line.set(chunk.subarray(0, nl + 1), k);
        const lineBase = base - this.carryLen;
        this.carryParts = [];
        this.carryLen = 0;
        if (line.length > MAX_LINE_BYTES) {
          this.longLineAt = lineBase;
          this.endLongLine();
        } else {
          this.lines(line, 0, lineBase);
        }
      }
      pos = nl + 1;
    }
    if (this.isFatal()) return;
    pos = this.lines(chunk, pos, base);
    if (pos < chunk.length && !this.isFatal()) this.hold(chunk, pos, base);
  }

  /** Complete lines of buf from pos (buf[0] is at byte offset base); returns where the unfinished rest starts. */
  private lines(buf: Uint8Array, pos: number, base: number): number {
    const n = buf.length;
    let view: DataView | null = null;
    while (pos < n) {
      if (this.phase === 'maps' || this.phase === 'trailer') {
        // Bulk: all complete lines at once; the partial last line waits for the next chunk.
        const last = buf.lastIndexOf(NL);
        if (last < pos) break;
        pos = this.textLines(buf, pos, last + 1);
        continue;
      }
      if (this.fast !== null && buf[pos] === AT && this.phase === 'v2' && base + pos !== this.fastRefused) {
        const next = this.fastLines(this.fast, buf, pos, base);
        if (next > pos) {
          pos = next;
          continue;
        }
        this.fastRefused = base + pos;
      }
      if (this.cache !== null && buf[pos] === AT && this.phase === 'v2') {
        view ??= viewOf(buf);
        const next = this.cachedBacktrace(this.cache, buf, view, pos, base);
        if (next >= 0) {
          pos = next;
          continue;
        }
      }
      let nl = -1;
      if (buf[pos] === SPACE) {
        // a count line: short, so a loop finds its end sooner than a native indexOf call costs
        for (let j = pos, lim = Math.min(n, pos + SHORT_LINE); j < lim; j++)
          if (buf[j] === NL) {
            nl = j;
            break;
          }
      }
      if (nl < 0) nl = buf.indexOf(NL, pos);
      if (nl < 0) break;
      if (nl - pos > MAX_LINE_BYTES) {
        this.longLineAt = base + pos;
        this.endLongLine();
      } else {
        let end = nl;
        if (end > pos && buf[end - 1] === CR) end--;
        this.lineNo++;
        this.line(buf, pos, end, base + pos);
      }
      pos = nl + 1;
      if (this.isFatal()) break;
    }
    return pos;
  }

  /**
   * A backtrace line at buf[pos] that is the cache's prediction (the line that followed the last one before):
   * read as v2Line reads it, its words the cache's own (a view, not a copy). Returns where the next line
   * starts, or -1 (not the predicted line, or its end is not in buf) for the ordinary path.
   */
  private cachedBacktrace(cache: BacktraceCache, buf: Uint8Array, view: DataView, pos: number, base: number): number {
    const entry = cache.successor(this.lastLine);
    if (entry < 0) return -1;
    const end = pos + cache.keyLength(entry);
    let nl = end;
    if (nl < buf.length && buf[nl] === CR) nl++;
    if (nl >= buf.length || buf[nl] !== NL || nl - pos > MAX_LINE_BYTES) return -1;
    if (!cache.matches(entry, buf, view, pos, end)) return -1;
    this.lineNo++;
    this.flushPending(false);
    this.skipping = false;
    this.pending = this.startRecord(cache.wordsOf(entry), cache.hash(entry), this.lineNo, cache.serial(entry));
    this.pendingHasTotal = false;
    this.pendingStartOffset = base + pos;
    this.lastLine = entry;
    return nl + 1;
  }

  /**
   * Records from buf[pos] (a backtrace line) through the WASM reader, each given out as v2Line and countLine
   * would have made it (flushPending checks and hands it on). Returns where the first record it did not read
   * starts (pos: none), which this parser then reads line by line.
   */
  private fastLines(f: FastRecords, buf: Uint8Array, pos: number, base: number): number {
    f.read(buf, pos, Math.min(buf.length - pos, FAST_INPUT_BYTES));
    const stop = f.stop();
    if (stop === 0) {
      if (f.reason() === FAST_STOP_FORM && ++this.fastRefusals >= FAST_REFUSALS) this.fast = null;
      return pos;
    }
    this.flushPending(false);
    const ru = f.recordU32;
    const rf = f.recordF64;
    const tu = f.threadU32;
    const tf = f.threadF64;
    let t = 0;
    for (let k = 0, n = f.records(); k < n; k++) {
      const entry = ru[4 * k];
      const r = this.startRecord(f.wordsOf(entry), f.hash(entry), this.lineNo + ru[4 * k + 1] + 1, f.serial(entry));
      const c = r.counts;
      c.liveObjects = rf[4 * k];
      c.liveBytes = rf[4 * k + 1];
      c.accumObjects = rf[4 * k + 2];
      c.accumBytes = rf[4 * k + 3];
      for (let j = 0, nt = ru[4 * k + 3]; j < nt; j++, t++) {
        const th = (this.threadPool[j] ??= { uid: 0, counts: zeroCounts() });
        th.uid = tu[t];
        const tc = th.counts;
        tc.liveObjects = tf[4 * t];
        tc.liveBytes = tf[4 * t + 1];
        tc.accumObjects = tf[4 * t + 2];
        tc.accumBytes = tf[4 * t + 3];
        r.threads.push(th);
      }
      this.pending = r;
      this.pendingHasTotal = true;
      this.pendingStartOffset = base + pos + ru[4 * k + 2];
      this.flushPending(false);
    }
    this.lineNo += f.lines();
    this.skipping = false;
    // the thread's BacktraceCache has not seen these lines in order: its next line is not predicted
    this.lastLine = -1;
    return pos + stop;
  }

  /** Keeps buf[from…] (no newline in it) for the next chunk, or drops it once the line is too long. */
  private hold(buf: Uint8Array, from: number, base: number): void {
    if (this.longLineAt >= 0) return;
    const len = buf.length - from;
    if (this.carryLen + len > MAX_LINE_BYTES) {
      this.longLineAt = base + from - this.carryLen;
      this.carryParts = [];
      this.carryLen = 0;
      // No header is that long: say so now rather than after reading the rest.
      if (this.phase === 'start') this.endLongLine();
      return;
    }
    this.carryParts.push(buf.slice(from));
    this.carryLen += len;
  }

  /** A line longer than MAX_LINE_BYTES ended: skip it, with what it may have held. */
  private endLongLine(): void {
    const at = this.longLineAt;
    this.longLineAt = -1;
    this.lineNo++;
    const what = `line longer than ${MAX_LINE_BYTES} bytes`;
    switch (this.phase) {
      case 'start':
        this.phase = 'fatal';
        this.info.fatal = {
          line: this.lineNo,
          byteOffset: at,
          message: `not a heap profile: the first line is a ${what}`,
        };
        return;
      case 'v2':
        // It was most likely a backtrace: its record and count lines go with it.
        this.flushPending(false);
        this.skipping = true;
        this.problem(this.lineNo, at, `${what} skipped, with its record`);
        return;
      default:
        this.problem(this.lineNo, at, `${what} skipped`);
    }
  }

  private isFatal(): boolean {
    return this.phase === 'fatal';
  }

  /** Ends the input; returns what was read. */
  finish(): ParsedDumpInfo {
    const info = this.info;
    info.bytes = this.offset;
    if (this.phase === 'fatal') return info;
    let carry: Uint8Array | null = null;
    if (this.carryLen > 0) {
      carry = new Uint8Array(this.carryLen);
      let k = 0;
      for (const part of this.carryParts) {
        carry.set(part, k);
        k += part.length;
      }
    }
    this.carryParts = [];
    this.carryLen = 0;
    if (this.longLineAt >= 0) {
      this.lineNo++;
      if (this.phase === 'start')
        info.fatal = {
          line: this.lineNo,
          byteOffset: this.longLineAt,
          message: `not a heap profile: the first line is a line longer than ${MAX_LINE_BYTES} bytes`,
        };
      else
        this.markTruncated(
          this.longLineAt,
          this.lineNo,
          `the last line is longer than ${MAX_LINE_BYTES} bytes and has no end`,
        );
      this.longLineAt = -1;
      if (info.fatal) {
        this.phase = 'fatal';
        return info;
      }
    }
    if (this.phase === 'maps' || this.phase === 'trailer') {
      this.finishText(carry);
    } else if (carry && carry.length > 0) {
      // The last line has no newline: the writer was stopped mid-line. Its content cannot be trusted.
      this.lineNo++;
      this.markTruncated(this.offset - carry.length, this.lineNo, 'the last line is cut off');
    }
    this.flushPending(true);
    info.lines = this.lineNo;
    if (info.truncated) info.truncated.fileBytes = this.offset;
    if (info.format === null) {
      if (this.offset === 0) {
        info.fatal = {
          line: 0,
          byteOffset: 0,
          message: 'empty file (zero bytes): a dump whose writer was stopped before its first write',
        };
      } else if (!info.truncated) {
        info.fatal = { line: 1, byteOffset: 0, message: 'no heap profile header ("heap_v2/…" or "heap profile: …")' };
      } else {
        info.fatal = { line: 1, byteOffset: 0, message: 'the file ends inside its header' };
      }
    } else if (info.mapsText === null && !info.truncated && info.format === 'heap_v2') {
      if (this.offset > 0 && this.offset % JEMALLOC_DUMP_CHUNK === 0) {
        this.markTruncated(
          this.offset,
          this.lineNo,
          `no MAPPED_LIBRARIES section and the size is a multiple of jemalloc's ${JEMALLOC_DUMP_CHUNK}-byte write buffer`,
        );
        const t = this.info.truncated as ParsedDumpInfo['truncated'];
        if (t) t.fileBytes = this.offset;
      }
    }
    return info;
  }

  private problem(line: number, byteOffset: number, message: string): void {
    if (this.info.problems.length < MAX_PROBLEMS) this.info.problems.push({ line, byteOffset, message });
    else this.info.problemsOmitted = ++this.problemsDropped;
  }

  /** Number of problems not kept because there were too many. */
  get droppedProblems(): number {
    return this.problemsDropped;
  }

  private markTruncated(byteOffset: number, line: number, reason: string): void {
    if (!this.info.truncated) this.info.truncated = { byteOffset, line, reason, fileBytes: -1 };
  }

  private text(b: Uint8Array, s: number, e: number): string {
    return asciiDecoder.decode(b.subarray(s, e));
  }

  private line(b: Uint8Array, s: number, e: number, at: number): void {
    switch (this.phase) {
      case 'start':
        return this.headerLine(b, s, e, at);
      case 'v2':
        return this.v2Line(b, s, e, at);
      case 'legacy':
        return this.legacyLine(b, s, e, at);
      default:
        return;
    }
  }

  private startsWith(b: Uint8Array, s: number, e: number, prefix: string): boolean {
    if (e - s < prefix.length) return false;
    for (let k = 0; k < prefix.length; k++) if (b[s + k] !== prefix.charCodeAt(k)) return false;
    return true;
  }

  private headerLine(b: Uint8Array, s: number, e: number, at: number): void {
    let i = s;
    while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
    if (i === e) return; // blank line before the header
    const line = this.text(b, i, e);
    let m = /^heap_v2\/(\d+)\s*$/.exec(line);
    if (m) {
      if (this.badPeriod(Number(m[1]), at)) return;
      this.info.format = 'heap_v2';
      this.info.sampling = samplingFor('heap_v2', Number(m[1]));
      this.phase = 'v2';
      return;
    }
    m = /^heap profile:\s*(-?\d+):\s*(-?\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@\s*([a-z_0-9]+)(?:\/(\d+))?/.exec(line);
    if (m) {
      const period = m[6] === undefined ? 0 : Number(m[6]);
      if (this.badPeriod(period, at)) return;
      this.info.format = 'heap_profile';
      const header = {
        liveObjects: Number(m[1]),
        liveBytes: Number(m[2]),
        accumObjects: Number(m[3]),
        accumBytes: Number(m[4]),
      };
      const bad = countsProblem(header);
      if (bad) this.problem(this.lineNo, at, `header totals ignored: ${bad}`);
      else this.info.header = header;
      this.info.sampling = samplingFor(m[5], period);
      this.goHeader = m[5] === 'heap';
      this.phase = 'legacy';
      return;
    }
    if (line.startsWith('<jemalloc>:') || line.startsWith('%')) {
      // jemalloc's leak report can land at the top of a final dump (jemalloc issue #1977).
      this.info.skippedLeadingLines++;
      this.problem(this.lineNo, at, `skipped a leading non-profile line: ${clip(line)}`);
      return;
    }
    this.phase = 'fatal';
    this.info.fatal = {
      line: this.lineNo,
      byteOffset: at,
      message: `not a heap profile: expected "heap_v2/<period>" or "heap profile: …", found ${clip(line)}`,
    };
  }

  /** A period no jemalloc can write makes every total of the file unknowable: the file is skipped. */
  private badPeriod(period: number, at: number): boolean {
    const bad = periodProblem(period);
    if (!bad) return false;
    this.phase = 'fatal';
    this.info.fatal = { line: this.lineNo, byteOffset: at, message: `${bad}; no total of this file can be trusted` };
    return true;
  }

  private v2Line(b: Uint8Array, s: number, e: number, at: number): void {
    let i = s;
    while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
    if (i === e) return; // the blank line before MAPPED_LIBRARIES
    const c = b[i];
    if (c === T) {
      this.countLine(b, i, e, at);
      return;
    }
    if (c === AT) {
      this.flushPending(false);
      const words = this.scanFrames(b, i + 1, e, at);
      // A record whose backtrace cannot be read is skipped with its count lines.
      this.skipping = words === null;
      const hash = words === null ? 0 : framesHash(words, 0, words.length);
      // only a line read without a problem, from its first byte, may be matched instead of read next time
      this.lastLine =
        this.cache !== null && words !== null && this.scanClean && i === s
          ? this.cache.remember(b, s, e, words, words.length >>> 1, hash, this.lastLine)
          : -1;
      if (words === null) return;
      this.pending = this.startRecord(
        words,
        hash,
        this.lineNo,
        this.cache !== null && this.lastLine >= 0 ? this.cache.serial(this.lastLine) : -1,
      );
      this.pendingHasTotal = false;
      this.pendingStartOffset = at;
      return;
    }
    if (this.startsWith(b, i, e, MAPS_HEADER) || this.startsWith(b, i, e, OLD_MAPS_HEADER)) {
      this.enterMaps();
      return;
    }
    this.problem(this.lineNo, at, `unrecognized line skipped: ${clip(this.text(b, s, e))}`);
  }

  private countLine(b: Uint8Array, i: number, e: number, at: number): void {
    // "t*: a: b [c: d]" or "tN: a: b [c: d][ name]"
    if (this.skipping) return;
    const sc = this.scan;
    sc.reset(b, i + 1, e);
    let uid = -1;
    if (sc.i < e && b[sc.i] === STAR) sc.i++;
    else uid = sc.int();
    sc.expect(COLON);
    const counts = sc.counts(this.lineCounts);
    if (!sc.ok) {
      this.problem(this.lineNo, at, `malformed count line: ${clip(this.text(b, i, e))}`);
      if (this.pending && uid < 0) {
        // A record without a trustworthy total is dropped rather than guessed.
        this.problem(this.pending.line, this.pendingStartOffset, 'record dropped: its total line is malformed');
        this.pending = null;
      }
      return;
    }
    const p = this.pending;
    if (p === null) {
      if (this.info.recordCount > 0) {
        this.problem(this.lineNo, at, 'count line outside any record skipped');
        return;
      }
      const bad = countsProblem(counts);
      if (bad) {
        this.problem(this.lineNo, at, `header count line ignored: ${bad}`);
        return;
      }
      if (uid < 0) {
        if (this.info.header === null) this.info.header = { ...counts };
      } else {
        sc.skipSpaces();
        const name = sc.i < e ? this.text(b, sc.i, e).trimEnd() : '';
        this.info.headerThreads.push({ uid, name: name === '' ? null : name, counts: { ...counts } });
      }
      return;
    }
    if (uid < 0) {
      if (this.pendingHasTotal) {
        this.problem(this.lineNo, at, 'second total line in one record ignored');
        return;
      }
      copyCounts(counts, p.counts);
      this.pendingHasTotal = true;
    } else {
      if (!this.pendingHasTotal) {
        this.problem(this.lineNo, at, 'per-thread line before the record total ignored');
        return;
      }
      const k = p.threads.length;
      const t = (this.threadPool[k] ??= { uid: 0, counts: zeroCounts() });
      t.uid = uid;
      copyCounts(counts, t.counts);
      p.threads.push(t);
    }
  }

  private flushPending(atEnd: boolean): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    if (!this.pendingHasTotal) {
      if (atEnd) this.markTruncated(this.pendingStartOffset, p.line, 'the last record has no count line');
      else this.problem(p.line, this.pendingStartOffset, 'record without a count line skipped');
      return;
    }
    let bad = countsProblem(p.counts);
    for (let k = 0; bad === null && k < p.threads.length; k++) bad = countsProblem(p.threads[k].counts);
    if (bad) {
      this.problem(p.line, this.pendingStartOffset, `record dropped: ${bad}`);
      return;
    }
    this.info.recordCount++;
    this.onRecord(
      this.copyFrames
        ? {
            frameWords: p.frameWords.slice(),
            counts: { ...p.counts },
            threads: p.threads.map((t) => ({ uid: t.uid, counts: { ...t.counts } })),
            line: p.line,
          }
        : p,
    );
  }

  /** `current`, emptied for a new record (its thread entries go back to the pool). */
  private startRecord(words: Uint32Array, hash: number, line: number, entry = -1): DumpRecord {
    const r = this.current;
    r.frameWords = words;
    r.frameHash = hash;
    r.frameEntry = entry;
    const c = r.counts;
    c.liveObjects = c.liveBytes = c.accumObjects = c.accumBytes = 0;
    r.threads.length = 0;
    r.line = line;
    return r;
  }

  private legacyLine(b: Uint8Array, s: number, e: number, at: number): void {
    let i = s;
    while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
    if (i === e) return;
    if (this.startsWith(b, i, e, MAPS_HEADER) || this.startsWith(b, i, e, OLD_MAPS_HEADER)) {
      this.enterMaps();
      return;
    }
    if (b[i] === HASH) {
      // comments (pprof skips them); Go's runtime writes one per frame after each record
      if (this.info.recordCount > 0 && this.goHeader) this.info.goRuntime = true;
      return;
    }
    const sc = this.scan;
    sc.reset(b, i, e);
    const counts = sc.counts(this.lineCounts);
    sc.expect(AT);
    if (!sc.ok) {
      this.problem(this.lineNo, at, `unrecognized line skipped: ${clip(this.text(b, s, e))}`);
      return;
    }
    let words = this.scanFrames(b, sc.i, e, at);
    if (words === null) return;
    // The libgcc unwinder leaves a terminating 0x0 frame in 3.x traces; it is not a call site.
    const n = words.length;
    if (n >= 2 && words[n - 2] === 0 && words[n - 1] === 0) words = words.subarray(0, n - 2);
    this.pending = this.startRecord(words, framesHash(words, 0, words.length), this.lineNo);
    copyCounts(counts, this.pending.counts);
    this.pendingHasTotal = true;
    this.pendingStartOffset = at;
    this.flushPending(false);
  }

  private enterMaps(): void {
    this.flushPending(false);
    this.skipping = false;
    this.phase = 'maps';
    this.info.mapsText = '';
    this.info.mapsFirstLine = this.lineNo + 1;
  }

  /** Maps and trailer text over complete lines [s, e): decoded in bulk; only line starts are looked at,
   * for a trailer header. Returns where it stopped (e, or the start of a trailer header line). */
  private textLines(b: Uint8Array, s: number, e: number): number {
    if (this.phase === 'trailer') {
      this.trailerParts.push(this.text(b, s, e));
      this.lineNo += countNewlines(b, s, e);
      return e;
    }
    let i = s;
    while (i < e) {
      const nl = b.indexOf(NL, i);
      if (b[i] === 80 /* P */ && TRAILER_PREFIXES.some((p) => this.startsWith(b, i, nl, p))) {
        if (i > s) this.mapsParts.push(this.text(b, s, i));
        this.phase = 'trailer';
        return i;
      }
      this.lineNo++;
      i = nl + 1;
    }
    this.mapsParts.push(this.text(b, s, e));
    return e;
  }

  private finishText(carry: Uint8Array | null): void {
    if (carry && carry.length > 0) {
      const startsTrailer =
        this.phase === 'maps' && TRAILER_PREFIXES.some((p) => this.startsWith(carry, 0, carry.length, p));
      if (!startsTrailer) {
        // A maps or trailer line cut off mid-write: drop the partial line and say so.
        this.lineNo++;
        this.markTruncated(
          this.offset - carry.length,
          this.lineNo,
          'the file ends inside the MAPPED_LIBRARIES section',
        );
      }
    }
    this.info.mapsText = this.mapsParts.join('');
    this.info.mapsComplete = !this.info.truncated;
    if (this.trailerParts.length > 0) this.info.trailerText = this.trailerParts.join('');
  }
}

/** "0x7f…" text of frame k of a record's words. */
export function frameHex(words: Uint32Array, k: number): string {
  const hi = words[2 * k];
  const lo = words[2 * k + 1];
  return '0x' + (hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0'));
}

/** All frames of a record as normalized hex text separated by single spaces (for tests and messages). */
export function framesText(words: Uint32Array): string {
  const out: string[] = [];
  for (let k = 0; k < words.length / 2; k++) out.push(frameHex(words, k));
  return out.join(' ');
}

/** The same bytes as a plain Uint8Array (no copy). */
function plainBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function countNewlines(b: Uint8Array, s: number, e: number): number {
  let c = 0;
  for (let i = b.indexOf(NL, s); i >= 0 && i < e; i = b.indexOf(NL, i + 1)) c++;
  return c;
}

function samplingFor(type: string, period: number): Sampling {
  switch (type) {
    case 'heap_v2':
    case 'heapz_v2':
      return period > 1 ? { kind: 'poisson', period } : { kind: 'none' };
    // pprof (profile/legacy_profile.go, parseHeapHeader: `case "heap": return "v2", period / 2`) reads every
    // heap/N file as Poisson-sampled at N/2, with or without Go's "#" lines; so does heaplens.
    case 'heap':
      return period > 1 ? { kind: 'poisson', period: period / 2 } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}

/** Single spaces, lowercase, no zero padding: the same address always reads the same. */
export function normalizeFramesText(raw: string): string {
  const t = raw.trim();
  if (t === '') return '';
  // Fast path: jemalloc already writes "%#x" lowercase, unpadded, single-spaced.
  if (!/[A-F\s]{2}|[A-F]|0x0[0-9a-f]|\t/.test(t) && !t.includes('  ')) return t;
  return t.split(/\s+/).map(normalizeAddress).join(' ');
}

/** "0x00007F12" → "0x7f12"; "0x0" stays "0x0". */
export function normalizeAddress(token: string): string {
  let h = token.toLowerCase();
  if (h.startsWith('0x')) h = h.slice(2);
  h = h.replace(/^0+/, '');
  return '0x' + (h === '' ? '0' : h);
}

function clip(s: string): string {
  const t = s.length > 80 ? s.slice(0, 80) + '…' : s;
  return JSON.stringify(t);
}

/**
 * What a cut dump's warning says: where the file ends (the figure to compare with jemalloc's write buffer) before
 * where the cut record starts, and a kill mid-write as likely — not as fact — when the length is a multiple of
 * the buffer (a copy cut short, a full disk or a process still writing end a file elsewhere).
 */
export function truncationText(t: { byteOffset: number; line: number; reason: string; fileBytes: number }): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const chunks = t.fileBytes > 0 && t.fileBytes % JEMALLOC_DUMP_CHUNK === 0 ? t.fileBytes / JEMALLOC_DUMP_CHUNK : 0;
  const clue =
    chunks > 0
      ? ` = ${chunks === 1 ? 'one' : n(chunks)} jemalloc write buffer${chunks === 1 ? '' : 's'} (${n(JEMALLOC_DUMP_CHUNK)} B): likely stopped while jemalloc wrote it`
      : '';
  const where = t.fileBytes >= 0 ? `file ends at byte ${n(t.fileBytes)}${clue}; ` : '';
  return `truncated: ${where}${t.reason}, from byte ${n(t.byteOffset)} (line ${t.line})`;
}
