// Backtrace lines already read, recognised by comparing their bytes, so a line seen before is not scanned
// again. A process's stacks recur in every one of its dumps, and jemalloc writes them in the same order each
// time (its gctx tree is sorted by backtrace), so the line after a known line is first tried as the line that
// followed it last time: one byte compare, no hash, no newline search. A line that is not the predicted one is
// scanned as before and then found by a hash of its words (or added), which re-joins the chain after a stack
// comes or goes.
//
// Exact by construction: a hit needs every byte of the line equal to a line the scanner read, and returns the
// words the scanner gave for those bytes. Only lines scanned without a problem are kept.
//
// The compare (same-bytes.ts) is about 4× faster than the scanner.

import { sameBytes, viewOf } from './same-bytes.js';
import { FAST_SERIAL_BASE } from './fast-records.js';

/** Line bytes kept at most; past it the cache starts over (the next process's lines refill it). */
export const BACKTRACE_CACHE_BYTES = 32 * 1024 * 1024;

export class BacktraceCache {
  private keys = new Uint8Array(1 << 16);
  private keyView = viewOf(this.keys);
  private keysUsed = 0;
  private words = new Uint32Array(1 << 14);
  private wordsUsed = 0;
  /**
   * per entry: a view of its words, made once. A parser's record holds it instead of a copy (the copy was ~10 %
   * of a cached dump's parse). Safe because no entry's words are ever written over: an entry's words are written
   * once, past those in use; a growth copies them to a new buffer (and moves the views there) and leaves the old
   * one as it was; and a restart takes new buffers. So a view stays right for as long as anyone holds it, even
   * a record another parser of this thread has pending while this one restarts the cache.
   */
  private views: Uint32Array[] = [];
  // per entry: where its line bytes are, the entry that followed it last time, its words' hash
  private keyAt = new Uint32Array(256);
  private keyLen = new Uint32Array(256);
  private after = new Int32Array(256);
  private hashOf = new Int32Array(256);
  private count = 0;
  /** entries given out before the last restart: an entry's serial is this plus its index (see `serial`) */
  private serialBase = 0;
  /** open addressing by words hash: entry + 1, 0 = empty */
  private slots = new Int32Array(512);

  constructor(private readonly maxBytes = BACKTRACE_CACHE_BYTES) {}

  /** Entries kept (for tests). */
  get size(): number {
    return this.count;
  }

  /** The entry that followed `entry` last time, or -1 (also for entry -1 and entries gone in a restart). */
  successor(entry: number): number {
    return entry >= 0 && entry < this.count ? this.after[entry] : -1;
  }

  /**
   * Whether b[s, s + len) is `entry`'s line exactly, where len is the entry's line length (keyLength). `view`
   * is a DataView over the same bytes as `b`.
   */
  matches(entry: number, b: Uint8Array, view: DataView, s: number, e: number): boolean {
    const len = this.keyLen[entry];
    if (s + len > e) return false;
    const a = this.keyAt[entry];
    // the last byte first: lines of one dump share long prefixes (jemalloc sorts them) and end alike less often
    if (len > 0 && b[s + len - 1] !== this.keys[a + len - 1]) return false;
    return sameBytes(b, view, s, this.keys, this.keyView, a, len);
  }

  /**
   * A number for `entry` that no other entry of this cache ever has, across restarts: the entry's words are
   * those of this serial for good (they are never written over), so a merge that interned them once may map the
   * serial to that stack (mergeDumpTask) instead of comparing the words again.
   */
  serial(entry: number): number {
    const s = this.serialBase + entry;
    // the thread's WASM record reader numbers its lines from FAST_SERIAL_BASE up: past it, none (compared instead)
    return s < FAST_SERIAL_BASE ? s : -1;
  }

  keyLength(entry: number): number {
    return this.keyLen[entry];
  }

  /** `entry`'s words, (hi, lo) per frame: a view that is never written to again (see `views`); do not write to it. */
  wordsOf(entry: number): Uint32Array {
    return this.views[entry];
  }

  /** `entry`'s words' framesHash (frame-scan.ts). */
  hash(entry: number): number {
    return this.hashOf[entry];
  }

  /**
   * The line b[s, e) was scanned into words[0, 2·frames) without a problem, `h` their framesHash: returns its
   * entry (the one already kept for these bytes, else a new one), recorded as the line that follows `previous`
   * (an entry or -1).
   */
  remember(
    b: Uint8Array,
    s: number,
    e: number,
    words: Uint32Array,
    frames: number,
    h: number,
    previous: number,
  ): number {
    const len = e - s;
    const nw = 2 * frames;
    if (len + this.keysUsed > this.maxBytes) this.clear();
    const view = viewOf(b);
    const mask = this.slots.length - 1;
    let j = mix(h) & mask;
    for (let id = this.slots[j] - 1; id >= 0; j = (j + 1) & mask, id = this.slots[j] - 1) {
      if (this.hashOf[id] === h && this.keyLen[id] === len && this.matches(id, b, view, s, e)) {
        this.link(previous, id);
        return id;
      }
    }
    const id = this.add(b, s, len, words, nw, h);
    this.link(previous, id);
    return id;
  }

  private link(previous: number, id: number): void {
    if (previous >= 0 && previous < this.count && previous !== id) this.after[previous] = id;
  }

  private add(b: Uint8Array, s: number, len: number, words: Uint32Array, nw: number, h: number): number {
    if (this.count === this.keyAt.length) this.growEntries();
    if (2 * (this.count + 1) > this.slots.length) this.rehash(2 * this.slots.length);
    if (this.keysUsed + len > this.keys.length) {
      const next = new Uint8Array(Math.max(2 * this.keys.length, this.keysUsed + len));
      next.set(this.keys.subarray(0, this.keysUsed));
      this.keys = next;
      this.keyView = viewOf(next);
    }
    if (this.wordsUsed + nw > this.words.length) {
      const next = new Uint32Array(Math.max(2 * this.words.length, this.wordsUsed + nw));
      next.set(this.words.subarray(0, this.wordsUsed));
      this.words = next;
      // the views move to the new buffer, so the old one goes once no record holds a view of it
      const views = this.views;
      for (let id = 0; id < this.count; id++) {
        const at = views[id].byteOffset >>> 2;
        views[id] = next.subarray(at, at + views[id].length);
      }
    }
    const id = this.count++;
    this.keys.set(b.subarray(s, s + len), this.keysUsed);
    this.keyAt[id] = this.keysUsed;
    this.keyLen[id] = len;
    this.keysUsed += len;
    this.words.set(words.subarray(0, nw), this.wordsUsed);
    this.views[id] = this.words.subarray(this.wordsUsed, this.wordsUsed + nw);
    this.wordsUsed += nw;
    this.after[id] = -1;
    this.hashOf[id] = h;
    this.place(id);
    return id;
  }

  private place(id: number): void {
    const mask = this.slots.length - 1;
    let j = mix(this.hashOf[id]) & mask;
    while (this.slots[j] !== 0) j = (j + 1) & mask;
    this.slots[j] = id + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let id = 0; id < this.count; id++) this.place(id);
  }

  private growEntries(): void {
    const n = 2 * this.keyAt.length;
    const u = (a: Uint32Array) => {
      const x = new Uint32Array(n);
      x.set(a);
      return x;
    };
    const i = (a: Int32Array) => {
      const x = new Int32Array(n);
      x.set(a);
      return x;
    };
    this.keyAt = u(this.keyAt);
    this.keyLen = u(this.keyLen);
    this.after = i(this.after);
    this.hashOf = i(this.hashOf);
  }

  /** Forgets every line (a parser's remembered entry then predicts nothing, or a line it fails to match). */
  clear(): void {
    this.serialBase += this.count;
    this.count = 0;
    this.keysUsed = 0;
    // a new buffer: views of the old words may still be held (see `views`)
    this.words = new Uint32Array(this.words.length);
    this.wordsUsed = 0;
    this.views = [];
    this.slots.fill(0);
  }
}

/** A well-mixed slot from the words' framesHash (its low bits alone follow the last word's low bits). */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}
