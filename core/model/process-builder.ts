// Builds one process's series: interns stacks and addresses across its snapshots and stores each
// snapshot's unbiased values in typed arrays (sparse columns: only the stacks present).

import { basename } from '../formats/dump-filename.js';
import type { DumpRecord, ParsedDumpInfo, Sampling } from '../formats/heap-dump.js';
import { normalizeAddress } from '../formats/heap-dump.js';
import { framesHash } from '../formats/frame-scan.js';
import { sameBytes, viewOf } from '../formats/same-bytes.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import type { AddressTable, Counts, ProcessSeries, Snapshot, StackTable, ThreadTotals } from './model.js';
import { grown } from './grown.js';
import { newUnbiased, unbias, unbiasInto } from './unbias.js';
import { varianceAtP } from './sampling-error.js';

export interface SnapshotMeta {
  file: string;
  seq: number | null;
  trigger: Snapshot['trigger'];
  triggerSeq: number | null;
  mtimeMs: number | null;
}

/** Growable Float64 column (doubling), to avoid boxing numbers in JS arrays. */
class F64Column {
  data = new Float64Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  seal(): Float64Array {
    return this.data.slice(0, this.length);
  }
}

class U32Column {
  data = new Uint32Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  seal(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}

/** Gives each distinct stack (its frame words, see DumpRecord.frameWords) a dense id from 0. */
export interface StackInterner {
  /**
   * `hash`: the words' stackHash when the reader has it (DumpRecord.frameHash), else computed here; `entry`: the
   * words' backtrace-cache serial (DumpRecord.frameEntry), for an interner that keeps it
   */
  internStack(words: Uint32Array, hash?: number, entry?: number): number;
  /** every call gives a new id (a dump task's per-record stacks): no record's stack repeats one before it */
  readonly freshIds?: boolean;
}

/** Collects the records of one dump. */
export class SnapshotBuilder {
  private readonly ids = new U32Column();
  private readonly liveBytes = new F64Column();
  private readonly liveObjects = new F64Column();
  private readonly liveVar = new F64Column();
  private readonly accumBytes = new F64Column();
  private readonly accumObjects = new F64Column();
  /** stack id → row in this snapshot, to merge a stack that appears twice in one dump */
  private readonly rowOf = new Map<number, number>();
  private readonly threads = new Map<number, ThreadTotals>();
  private anyAccum = false;
  readonly live: Counts = { objects: 0, bytes: 0 };
  readonly accumulated: Counts = { objects: 0, bytes: 0 };

  private readonly fresh: boolean;
  /** values may be negative: a pprof delta profile (the difference of two profiles), kept as pprof keeps them */
  private readonly signed: boolean;

  /** one column per declared sample type beyond the four (a pprof profile's; DumpRecord.extra), with its total */
  private readonly extra: { type: string; unit: string; col: F64Column; total: number }[];

  constructor(
    private readonly process: StackInterner,
    extraTypes: readonly { type: string; unit: string }[] = [],
    options: { signed?: boolean } = {},
  ) {
    this.fresh = process.freshIds === true;
    this.signed = options.signed === true;
    this.extra = extraTypes.map((t) => ({ type: t.type, unit: t.unit, col: new F64Column(), total: 0 }));
  }

  /** Records left out because unbiasing gave a value that is not a finite size (the parser's range checks should stop these first). */
  nonFinite = 0;

  // scratch results of unbiasInto, reused by every record (two objects a record were a fifth of add's time)
  private readonly live1 = newUnbiased();
  private readonly acc1 = newUnbiased();
  // a thread line's, apart from the record's, so a later thread line the same as the record still finds its values
  private readonly threadLive1 = newUnbiased();
  private readonly threadAcc1 = newUnbiased();

  /** Adds one parsed record: intern, unbias, store. */
  add(r: DumpRecord, sampling: Sampling): void {
    const c = r.counts;
    const live = unbiasInto(this.live1, sampling, c.liveObjects, c.liveBytes);
    const acc = unbiasInto(this.acc1, sampling, c.accumObjects, c.accumBytes);
    // No NaN, Infinity or negative size may reach a total (negative values only in a delta profile, unsampled).
    const ok = this.signed
      ? Number.isFinite(live.bytes + live.objects + acc.bytes + acc.objects)
      : isSize(live.bytes) && isSize(live.objects) && isSize(acc.bytes) && isSize(acc.objects);
    if (!ok) {
      this.nonFinite++;
      return;
    }
    const id = this.process.internStack(r.frameWords, r.frameHash, r.frameEntry);
    const liveVar = varianceAtP(sampling, c.liveObjects, c.liveBytes, live.p);
    if (c.accumObjects !== 0 || c.accumBytes !== 0) this.anyAccum = true;
    // fresh ids never repeat: no row to look up (a map of every record, kept for the whole dump, was most of what
    // a dump reader's young heap had to keep)
    const row = this.fresh ? undefined : this.rowOf.get(id);
    if (row === undefined) {
      if (!this.fresh) this.rowOf.set(id, this.ids.length);
      this.ids.push(id);
      this.liveBytes.push(live.bytes);
      this.liveObjects.push(live.objects);
      this.liveVar.push(liveVar);
      this.accumBytes.push(acc.bytes);
      this.accumObjects.push(acc.objects);
      for (let k = 0; k < this.extra.length; k++) this.extra[k].col.push(r.extra?.[k] ?? 0);
    } else {
      this.liveBytes.data[row] += live.bytes;
      this.liveObjects.data[row] += live.objects;
      this.liveVar.data[row] += liveVar;
      this.accumBytes.data[row] += acc.bytes;
      this.accumObjects.data[row] += acc.objects;
      for (let k = 0; k < this.extra.length; k++) this.extra[k].col.data[row] += r.extra?.[k] ?? 0;
    }
    for (let k = 0; k < this.extra.length; k++) this.extra[k].total += r.extra?.[k] ?? 0;
    this.live.bytes += live.bytes;
    this.live.objects += live.objects;
    this.accumulated.bytes += acc.bytes;
    this.accumulated.objects += acc.objects;
    for (const t of r.threads) {
      const tc = t.counts;
      // a record of one thread has that thread's counts: the same unbiasing, already done (and checked) above
      const same =
        tc.liveObjects === c.liveObjects &&
        tc.liveBytes === c.liveBytes &&
        tc.accumObjects === c.accumObjects &&
        tc.accumBytes === c.accumBytes;
      const tl = same ? live : unbiasInto(this.threadLive1, sampling, tc.liveObjects, tc.liveBytes);
      const ta = same ? acc : unbiasInto(this.threadAcc1, sampling, tc.accumObjects, tc.accumBytes);
      if (!same && !(isSize(tl.bytes) && isSize(tl.objects) && isSize(ta.bytes) && isSize(ta.objects))) continue;
      const tt = this.thread(t.uid);
      tt.live.bytes += tl.bytes;
      tt.live.objects += tl.objects;
      tt.accumulated.bytes += ta.bytes;
      tt.accumulated.objects += ta.objects;
    }
  }

  private thread(uid: number): ThreadTotals {
    let t = this.threads.get(uid);
    if (!t) {
      t = { uid, name: null, live: { objects: 0, bytes: 0 }, accumulated: { objects: 0, bytes: 0 } };
      this.threads.set(uid, t);
    }
    return t;
  }

  build(meta: SnapshotMeta, info: ParsedDumpInfo, mapsSource: Snapshot['mapsSource']): Snapshot {
    for (const h of info.headerThreads) {
      // Header thread lines carry names, and list threads that have no live records too.
      const t = this.thread(h.uid);
      if (h.name !== null) t.name = h.name;
    }
    const hdr = info.header ?? { liveObjects: 0, liveBytes: 0, accumObjects: 0, accumBytes: 0 };
    const threads = [...this.threads.values()].sort((a, b) => a.uid - b.uid);
    return {
      file: meta.file,
      seq: meta.seq,
      trigger: meta.trigger,
      triggerSeq: meta.triggerSeq,
      mtimeMs: meta.mtimeMs,
      format: info.format ?? 'heap_v2',
      samplePeriod:
        info.sampling.kind === 'none'
          ? 1
          : info.sampling.kind === 'v1'
            ? info.sampling.period * 2
            : info.sampling.period,
      live: { ...this.live },
      accumulated: { ...this.accumulated },
      header: {
        live: { objects: hdr.liveObjects, bytes: hdr.liveBytes },
        accumulated: { objects: hdr.accumObjects, bytes: hdr.accumBytes },
      },
      hasAccumulated: this.anyAccum || hdr.accumObjects !== 0,
      threads,
      truncated: info.truncated ? { byteOffset: info.truncated.byteOffset, line: info.truncated.line } : null,
      // cut inside the maps or a trailer: every record was read
      complete: info.truncated === null || info.mapsText !== null,
      headerLiveBytes: info.header ? unbias(info.sampling, info.header.liveObjects, info.header.liveBytes).bytes : null,
      stackIds: this.ids.seal(),
      liveBytes: this.liveBytes.seal(),
      liveObjects: this.liveObjects.seal(),
      liveVarBytes: this.liveVar.seal(),
      accumBytes: this.anyAccum ? this.accumBytes.seal() : null,
      accumObjects: this.anyAccum ? this.accumObjects.seal() : null,
      mapsSource,
      ...(this.extra.length > 0
        ? {
            extraSamples: this.extra.map((e) => ({ type: e.type, unit: e.unit, values: e.col.seal(), total: e.total })),
          }
        : {}),
    };
  }
}

/**
 * The hash a stack is interned by (formats/frame-scan.ts framesHash). A dump reader computes it beside the parse,
 * or its backtrace cache kept it (dump-task.ts, DumpRecord.frameHash), so the merging thread only looks it up
 * and verifies.
 */
export const stackHash = framesHash;

/** A well-mixed 32-bit hash of an address's words (a multiply alone leaves the low bits to the low bits). */
function addressSlot(hi: number, lo: number): number {
  let h = hi ^ Math.imul(lo, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

/**
 * Addresses' hex texts by their (hi, lo) words, made once and shared by every process of a load (a job's processes
 * share one code base: forked workers and ranks of one program hold the same return addresses, and each of the
 * issue-49 bench job's 1,000 processes made ~3,400 texts anew, ~140 MB kept and ~3 s of the merging thread).
 * The same open-addressing scheme as ProcessBuilder's own address ids.
 */
export class AddressTexts {
  private slots = new Int32Array(1 << 12);
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  private readonly texts: string[] = [];

  /** The normalized hex text of the address (hi, lo): "0x7f…", lowercase, no padding. */
  of(hi: number, lo: number): string {
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let j = addressSlot(hi, lo) & mask; ; j = (j + 1) & mask) {
      const s = slots[j];
      if (s === 0) {
        const id = this.texts.length;
        // joined, not concatenated: `+` of texts this long makes a V8 cons string (two more heap objects, kept for
        // the life of the job); join makes one flat string
        const hex =
          hi === 0 ? '0x' + lo.toString(16) : ['0x', hi.toString(16), lo.toString(16).padStart(8, '0')].join('');
        this.texts.push(hex);
        this.hi = grown(this.hi, id + 1);
        this.lo = grown(this.lo, id + 1);
        this.hi[id] = hi;
        this.lo[id] = lo;
        slots[j] = id + 1;
        // at most half full: probes stay short
        if (2 * (id + 1) > slots.length) this.rehash();
        return hex;
      }
      if (this.lo[s - 1] === lo && this.hi[s - 1] === hi) return this.texts[s - 1];
    }
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let id = 0; id < this.texts.length; id++) {
      let j = addressSlot(this.hi[id], this.lo[id]) & mask;
      while (slots[j] !== 0) j = (j + 1) & mask;
      slots[j] = id + 1;
    }
    this.slots = slots;
  }
}

export class ProcessBuilder implements StackInterner {
  readonly addresses: AddressTable = lazyAddressTable([]);
  /**
   * `frames` is a view of the builder's own buffer (`frameBuf`), the frames interned so far: a typed array, not a
   * JS array (a deep process's frames are tens of thousands; over the 1,000 processes of the issue-49 bench job
   * 44 M slots, ~350 MB the collector had to visit). The view is remade only when stacks were added since.
   */
  readonly stacks: StackTable;
  readonly snapshots: Snapshot[] = [];
  private frameBuf = new Uint32Array(1 << 12);
  private frameCount = 0;
  private frameView: Uint32Array = this.frameBuf.subarray(0, 0);
  // Addresses by their (hi, lo) words in an open-addressing table of ids + 1 (0 = empty): no string and no
  // boxed number per lookup; the hex text is found once, for a new address (`texts`, shared by a load's processes).
  private addrSlots = new Int32Array(1 << 12);
  private addrHi = new Uint32Array(1024);
  private addrLo = new Uint32Array(1024);
  // Stacks by stackHash; collisions chain through `nextSameHash`, verified against `stackWords` (sameBytes)
  // (every stack's words, flat: frame k of stack id is at 2·(offsets[id] + k)).
  private readonly stackByHash = new Map<number, number>();
  private readonly nextSameHash: number[] = [];
  private stackWords = new Uint32Array(1 << 12);
  // The compare is sameBytes over the words' bytes (8 a step, exact; core/formats/same-bytes.ts): `stackWords`'
  // bytes, and those of the last words given (a merge gives one task's words for all its records).
  private stackBytes = new Uint8Array(this.stackWords.buffer);
  private stackView = viewOf(this.stackBytes);
  private lastWords: Uint32Array | null = null;
  private finished = false;
  private lastBytes: Uint8Array = new Uint8Array(0);
  private lastView = viewOf(this.lastBytes);

  /**
   * `sizes`: what the process read before this one came to (a job's processes run the same code): its frame count
   * sizes the frames and stack words at once instead of by doubling from 4 K entries (each doubling a fresh,
   * zeroed buffer and a copy: 0.6 s of the merging thread at 1,000 processes), and its stack-words buffer, which
   * nothing reads once it finished (handOverWords), is taken over as it is.
   */
  constructor(
    private readonly texts: AddressTexts = new AddressTexts(),
    sizes: { frames: number; words: Uint32Array<ArrayBuffer> | null } | null = null,
  ) {
    if (sizes && sizes.frames > this.frameBuf.length) this.frameBuf = new Uint32Array(sizes.frames);
    const want = Math.max(2 * (sizes?.frames ?? 0), this.stackWords.length);
    // the buffer handed over when it fits (a large process's, passed on from one small one to the next, would be
    // held for the whole load)
    const given = sizes?.words;
    const words = given && given.length >= want && given.length <= 4 * want ? given : null;
    if (words || want > this.stackWords.length) this.useStackWords(words ?? new Uint32Array(want));
    const frames = (): Uint32Array => {
      if (this.frameView.length !== this.frameCount) this.frameView = this.frameBuf.subarray(0, this.frameCount);
      return this.frameView;
    };
    this.stacks = {
      count: 0,
      offsets: [0],
      get frames() {
        return frames();
      },
      allocatorDepth: [],
    };
  }

  /** The stack id of a record's frames (see DumpRecord.frameWords), interning it when new. */
  internStack(words: Uint32Array, hash?: number): number {
    return this.internRange(words, 0, words.length, hash);
  }

  /** internStack of words[from, to) (a merge passes a task's words in place, with the hash its reader computed). */
  internRange(words: Uint32Array, from: number, to: number, hash: number = stackHash(words, from, to)): number {
    const n = (to - from) >>> 1;
    const offsets = this.stacks.offsets;
    if (words !== this.lastWords) {
      this.lastWords = words;
      this.lastBytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
      this.lastView = viewOf(this.lastBytes);
    }
    for (let id = this.stackByHash.get(hash) ?? -1; id >= 0; id = this.nextSameHash[id]) {
      const o = offsets[id];
      if (offsets[id + 1] - o !== n) continue;
      if (sameBytes(this.lastBytes, this.lastView, 4 * from, this.stackBytes, this.stackView, 8 * o, 4 * (to - from)))
        return id;
    }
    const id = this.stacks.count++;
    this.nextSameHash.push(this.stackByHash.get(hash) ?? -1);
    this.stackByHash.set(hash, id);
    const first = this.frameCount;
    const at = 2 * first;
    const next = grown(this.stackWords, at + 2 * n);
    if (next !== this.stackWords) this.useStackWords(next);
    // word by word, not set(subarray): no view object per new stack
    for (let k = 0; k < 2 * n; k++) next[at + k] = words[from + k];
    const frames = (this.frameBuf = grown(this.frameBuf, first + n));
    for (let k = 0; k < n; k++) frames[first + k] = this.internWords(words[from + 2 * k], words[from + 2 * k + 1]);
    this.frameCount = first + n;
    offsets.push(this.frameCount);
    this.stacks.allocatorDepth.push(0);
    return id;
  }

  private internWords(hi: number, lo: number): number {
    const slots = this.addrSlots;
    const mask = slots.length - 1;
    for (let j = addressSlot(hi, lo) & mask; ; j = (j + 1) & mask) {
      const s = slots[j];
      if (s === 0) {
        const id = this.newAddress(hi, lo);
        slots[j] = id + 1;
        // at most half full: probes stay short
        if (2 * (id + 1) > slots.length) this.rehashAddresses();
        return id;
      }
      if (this.addrLo[s - 1] === lo && this.addrHi[s - 1] === hi) return s - 1;
    }
  }

  private rehashAddresses(): void {
    const slots = new Int32Array(2 * this.addrSlots.length);
    const mask = slots.length - 1;
    const count = this.addresses.hex.length;
    for (let id = 0; id < count; id++) {
      let j = addressSlot(this.addrHi[id], this.addrLo[id]) & mask;
      while (slots[j] !== 0) j = (j + 1) & mask;
      slots[j] = id + 1;
    }
    this.addrSlots = slots;
  }

  private newAddress(hi: number, lo: number): number {
    const id = this.addresses.hex.length;
    this.addresses.hex.push(this.texts.of(hi, lo));
    this.addrHi = grown(this.addrHi, id + 1);
    this.addrLo = grown(this.addrLo, id + 1);
    this.addrHi[id] = hi;
    this.addrLo[id] = lo;
    return id;
  }

  /** Interns an address given as hex text (for callers outside the parser path). */
  internAddress(token: string): number {
    const [hi, lo] = wordsOf(BigInt(normalizeAddress(token)));
    return this.internWords(hi, lo);
  }

  snapshotBuilder(): SnapshotBuilder {
    return new SnapshotBuilder(this);
  }

  /** Marks, per stack, the leading frames that lie in the allocator library's mappings. */
  markAllocatorFrames(maps: readonly MapsEntry[] | null): void {
    const ranges = (maps ?? []).filter((m) => isAllocatorPath(m.path));
    // none: every depth 0 (as interned), also where a process read in part was marked with other maps
    if (ranges.length === 0) return void this.stacks.allocatorDepth.fill(0);
    // on the addresses' (hi, lo) words, compared as pairs: exact for any 64-bit address, without a BigInt per
    // address (that was ~10 ms a deep process, and most of `top`'s marking of a small dump)
    const bounds = ranges.flatMap((r) => [...wordsOf(r.start), ...wordsOf(r.end)]);
    const count = this.addresses.hex.length;
    const inAllocator = new Uint8Array(count);
    const { addrHi, addrLo } = this;
    for (let i = 0; i < count; i++) {
      const hi = addrHi[i];
      const lo = addrLo[i];
      for (let b = 0; b < bounds.length; b += 4) {
        const geStart = hi > bounds[b] || (hi === bounds[b] && lo >= bounds[b + 1]);
        const ltEnd = hi < bounds[b + 2] || (hi === bounds[b + 2] && lo < bounds[b + 3]);
        if (geStart && ltEnd) {
          inAllocator[i] = 1;
          break;
        }
      }
    }
    const { offsets, frames, allocatorDepth } = this.stacks;
    for (let s = 0; s < this.stacks.count; s++) {
      let d = 0;
      for (let k = offsets[s]; k < offsets[s + 1] && inAllocator[frames[k]]; k++) d++;
      allocatorDepth[s] = d;
    }
  }

  /**
   * The stack-words buffer, for the next process's builder, once this one finished: only interning reads it, and a
   * finished builder interns no more (null before finish, or when handed over already).
   */
  handOverWords(): Uint32Array<ArrayBuffer> | null {
    if (!this.finished) return null;
    const w = this.stackWords;
    this.useStackWords(new Uint32Array(0));
    return w.length > 0 ? w : null;
  }

  /** `words` as the stack-words buffer, with the views sameBytes compares through. */
  private useStackWords(words: Uint32Array<ArrayBuffer>): void {
    this.stackWords = words;
    this.stackBytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
    this.stackView = viewOf(this.stackBytes);
  }

  finish(
    key: string,
    meta: Pick<ProcessSeries, 'pid' | 'pidNamespace' | 'prefix'>,
    maps: MapsEntry[] | null,
  ): ProcessSeries {
    this.finished = true;
    this.markAllocatorFrames(maps);
    // the buffer cut to the frames it holds (doubling leaves up to as many again spare)
    if (this.frameBuf.length > this.frameCount) {
      this.frameBuf = this.frameBuf.slice(0, this.frameCount);
      this.frameView = this.frameBuf;
    }
    const last = this.snapshots[this.snapshots.length - 1];
    const { count, offsets, allocatorDepth } = this.stacks;
    return {
      key,
      ...meta,
      snapshots: this.snapshots,
      // a plain table (the builder's own reads its buffer through a getter, which would keep the builder alive)
      stacks: { count, offsets, frames: this.frameView, allocatorDepth },
      addresses: this.addresses,
      maps,
      // only jemalloc writes a final dump (prof_final): other captures (pprof, massif, memleak, PyTorch) lacking
      // one say nothing of how the process ended
      endedWithoutFinalDump: last !== undefined && last.trigger !== 'final' && writesFinalDump(last.format),
      symbols: null,
    };
  }
}

/**
 * An address table whose hex → id index is made when first asked for (and brought up to date with the addresses
 * added since): the builder finds addresses by their words, and a command that never looks one up by its text
 * (`summary`) does not keep a Map of every address of every process (~110 MB over the 1,000 processes of the
 * issue-49 bench job). The getter is enumerable: a structured clone (postMessage) copies the index as a Map.
 */
function lazyAddressTable(hex: string[]): AddressTable {
  let index: Map<string, number> | null = null;
  return {
    hex,
    get index(): Map<string, number> {
      index ??= new Map();
      // addresses are only appended while loading; a caller that renames one (systing-frames.ts) keeps the count
      for (let i = index.size; i < hex.length; i++) index.set(hex[i], i);
      return index;
    },
  };
}

/** A 64-bit value (an address, or a mapping's bound, at most 2^64) as its high and low 32-bit words. */
function wordsOf(v: bigint): [number, number] {
  return [Number(v >> 32n), Number(v & 0xffffffffn)];
}

/** A format whose writer ends with a final dump when the process exits (jemalloc's prof_final). */
export function writesFinalDump(format: Snapshot['format']): boolean {
  return format === 'heap_v2' || format === 'heap_profile';
}

function isSize(v: number): boolean {
  return v >= 0 && v < Infinity;
}

/**
 * The allocator libraries whose frames top every sampled stack (jemalloc, also built as libje_malloc; tcmalloc for
 * gperftools dumps), as shared objects on Linux or dylibs on macOS. The one rule: it sets `allocatorDepth` and the
 * frames' 'allocator' kind (core/frames/).
 */
export function isAllocatorPath(path: string): boolean {
  return /^lib(jemalloc|tcmalloc|je_malloc)[^/]*\.(so|dylib)/.test(basename(path));
}
