// Job-wide identity of frames and stacks: the same code in different processes gets the same key,
// so one stack can be followed across the ranks of a job (and a forked child's inherited stacks
// match its parent's).
//
// Raw return addresses differ per process under ASLR, and Python frame ids (pseudo-addresses) are
// handed out per process, so neither can be a key. Instead:
//   native frame   "n:<module>+0x<file offset>"   module = "b:<build-id>" when known, else "p:<mapped path>"
//   Python frame   "y:" + JSON [qualname, file, line]
//   Python marker  "ym:<entry|unmerged|truncated>"  (structure the producer wrote; the same code path writes the same)
//   unresolved     "u:0x<raw address>"    an address in no file mapping, a process without maps, or a
//                  Python frame the table does not name: per process, so it only matches by chance of equal addresses
// A stack's key is a 96-bit hash of its frames' identities (three 32-bit lanes) plus its depth:
// "k<depth>-<24 hex>". Birthday bound: 10^6 distinct stacks collide with probability ~10^−17.

import {
  decodePseudoAddress,
  PY_KIND_ENTRY,
  PY_KIND_FRAME,
  PY_KIND_TRUNCATED,
  PY_KIND_UNMERGED,
  layoutOf,
} from '../formats/pyframes.js';
import { locateHex, mappingIndexAt, numericStart, type MapsEntry } from '../formats/proc-maps.js';
import { grown } from '../model/grown.js';
import type { ProcessSeries } from '../model/model.js';

export interface IdentityOptions {
  /** build-id of a mapped file, by its path as in the maps (from the symbolizer, when it read the binary) */
  buildIds?: ReadonlyMap<string, string>;
  /** the hashes of Python frames other processes of the job had (stackIdentityLanes: the same lanes, made once) */
  pythonHashes?: PythonFrameHashes;
}

const MARKER_NAME: Record<number, string> = {
  [PY_KIND_ENTRY]: 'entry',
  [PY_KIND_UNMERGED]: 'unmerged',
  [PY_KIND_TRUNCATED]: 'truncated',
};

// Default-option stack keys per process (maps, frame tables and addresses do not change after loading). The
// frame identities are not kept: a string per address (over a million in a 16 × 5,000-stack job, ~70 MB) for
// keys that are only hashed.
const stackCache = new WeakMap<ProcessSeries, string[]>();

/** The job-wide identity of every address of `proc` (index = address id). */
export function frameIdentities(proc: ProcessSeries, options: IdentityOptions = {}): string[] {
  const of = identityOf(proc, options);
  return proc.addresses.hex.map((_, a) => of(a));
}

/** The identity of an address id of `proc`, one at a time. */
function identityOf(proc: ProcessSeries, options: IdentityOptions): (addressId: number) => string {
  const table = proc.pythonFrames ?? null;
  const layout = layoutOf(table);
  const maps = proc.maps;
  return (a) => {
    const hex = proc.addresses.hex[a];
    const pa = decodePseudoAddress(hex, layout);
    if (pa) {
      if (pa.kind === PY_KIND_FRAME) {
        const e = table?.frames.get(pa.addr);
        if (e) return 'y:' + JSON.stringify([e.function, e.file, e.line]);
        return 'u:' + pa.addr;
      }
      const marker = MARKER_NAME[pa.kind];
      return marker ? 'ym:' + marker : 'u:' + pa.addr;
    }
    const at = maps ? locateHex(maps, hex) : null;
    if (!at || !at.entry.path.startsWith('/')) return 'u:' + hex;
    const id = options.buildIds?.get(at.entry.path);
    return `n:${id ? 'b:' + id : 'p:' + at.entry.path}+${at.offset}`;
  };
}

/** The job-wide identity of one frame of `proc`. */
export function frameIdentity(proc: ProcessSeries, addressId: number, options: IdentityOptions = {}): string {
  return identityOf(proc, options)(addressId);
}

/** True for an identity that is only the raw address (no mapping, or an unnamed Python frame). */
export function isUnresolvedIdentity(id: string): boolean {
  return id.startsWith('u:');
}

/** The frame identities of stack `stackId`, leaf first. */
export function stackFrameIdentities(proc: ProcessSeries, stackId: number, options: IdentityOptions = {}): string[] {
  const of = identityOf(proc, options);
  const { offsets, frames } = proc.stacks;
  const out: string[] = [];
  for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) out.push(of(frames[k]));
  return out;
}

/** One stable key per stack id of `proc` (index = stack id); equal keys mean the same code path. */
export function stackIdentityKeys(proc: ProcessSeries, options: IdentityOptions = {}): string[] {
  const cacheable = options.buildIds === undefined;
  const cached = cacheable ? stackCache.get(proc) : undefined;
  if (cached && cached.length === proc.stacks.count) return cached;
  const lanes = stackIdentityLanes(proc, options);
  const out = new Array<string>(proc.stacks.count);
  for (let s = 0; s < out.length; s++) out[s] = identityKeyText(lanes, 4 * s);
  if (cacheable) stackCache.set(proc, out);
  return out;
}

/**
 * Each stack's key as numbers, 4 per stack id: its depth and the three lanes of its hash (stackIdentityKeys prints
 * them, identityKeyText). A job's ranking interns these (core/stats/suspects.ts StackKeyTable) and prints each
 * distinct key once: printing 10^6 keys of a 1,000-process job took ~0.7 s.
 */
export function stackIdentityLanes(proc: ProcessSeries, options: IdentityOptions = {}): Uint32Array {
  const fh = frameHashes(proc, options);
  const { offsets, frames, count } = proc.stacks;
  const out = new Uint32Array(4 * count);
  for (let s = 0; s < count; s++) {
    let h1 = 0x811c9dc5;
    let h2 = 0x27d4eb2f;
    let h3 = 0x165667b1;
    for (let k = offsets[s]; k < offsets[s + 1]; k++) {
      const a = 3 * frames[k];
      h1 = Math.imul(h1 ^ fh[a], 0x01000193);
      h1 ^= h1 >>> 16;
      h2 = Math.imul(h2 ^ fh[a + 1], 0x85ebca6b);
      h2 ^= h2 >>> 13;
      h3 = Math.imul(h3 ^ fh[a + 2], 0xc2b2ae35);
      h3 ^= h3 >>> 16;
    }
    out[4 * s] = offsets[s + 1] - offsets[s];
    out[4 * s + 1] = h1;
    out[4 * s + 2] = h2;
    out[4 * s + 3] = h3;
  }
  return out;
}

/** The key text of the stack whose depth and lanes start at `at` in `lanes`: "k<depth>-<24 hex>". */
export function identityKeyText(lanes: Uint32Array, at: number): string {
  return `k${lanes[at]}-${hex8(lanes[at + 1])}${hex8(lanes[at + 2])}${hex8(lanes[at + 3])}`;
}

/**
 * A job's stack keys, each distinct one numbered (in the order first seen) and printed once: what a job-wide ranking
 * groups by. Keyed by the numbers (stackIdentityLanes) in an open-addressing table: the same grouping as by the key
 * strings (a key's text is its numbers), without a string per (process, stack).
 */
export class StackKeyTable {
  /** the key text by number */
  readonly keys: string[] = [];
  private lanes = new Uint32Array(4 * 1024);
  /** a number per slot, -1 when free; at most half full */
  private slots = new Int32Array(2048).fill(-1);

  get size(): number {
    return this.keys.length;
  }

  /** The number of the key whose depth and lanes start at `at` in `l` (stackIdentityLanes). */
  intern(l: Uint32Array, at: number): number {
    const slot = this.find(l, at);
    const known = this.slots[slot];
    if (known >= 0) return known;
    const id = this.keys.length;
    this.lanes = grown(this.lanes, 4 * id + 4);
    this.lanes.set(l.subarray(at, at + 4), 4 * id);
    this.keys.push(identityKeyText(l, at));
    this.slots[slot] = id;
    if (2 * this.keys.length > this.slots.length) this.rehash();
    return id;
  }

  /** The slot that holds the key at `at` in `l`, or the free slot where it goes. */
  private find(l: Uint32Array, at: number): number {
    const mask = this.slots.length - 1;
    // the lanes are hashes already: one of them, mixed with the depth, spreads the slots
    let i = (l[at + 1] ^ Math.imul(l[at], 0x9e3779b1)) & mask;
    for (;;) {
      const id = this.slots[i];
      if (id < 0) return i;
      const o = 4 * id;
      const t = this.lanes;
      if (t[o + 1] === l[at + 1] && t[o + 2] === l[at + 2] && t[o + 3] === l[at + 3] && t[o] === l[at]) return i;
      i = (i + 1) & mask;
    }
  }

  private rehash(): void {
    this.slots = new Int32Array(2 * this.slots.length).fill(-1);
    for (let id = 0; id < this.keys.length; id++) this.slots[this.find(this.lanes, 4 * id)] = id;
  }
}

// Each frame identity's hash: three 32-bit lanes over its text's UTF-16 code units (a stack's key then mixes its
// frames' hashes in order). The text is not made where it need not be: a Python frame's identity is hashed from its
// name, file and line as the JSON text would be written, and a native frame's module prefix is hashed once per
// mapping: making a string per address was two thirds of the keys' time at 1,000 processes (3.4 M addresses).
let lane1 = 0;
let lane2 = 0;
let lane3 = 0;

function hashStart(): void {
  lane1 = 0x811c9dc5;
  lane2 = 0x9e3779b9;
  lane3 = 0x85ebca6b;
}

/** Feeds the code units of `s` to the lanes. */
function hashText(s: string): void {
  let h1 = lane1;
  let h2 = lane2;
  let h3 = lane3;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
    h3 = Math.imul(h3 + c, 0xc2b2ae35);
    h3 ^= h3 >>> 13;
  }
  lane1 = h1;
  lane2 = h2;
  lane3 = h3;
}

/** Feeds 'u:' + hex (an address in no file mapping). */
function hashUnresolved(hex: string): void {
  hashText('u:');
  hashText(hex);
}

/** Feeds a native frame's identity as locateHex gives its mapping and offset (from the lanes' start). */
function hashLocated(maps: readonly MapsEntry[], hex: string, options: IdentityOptions): void {
  hashStart();
  const at = locateHex(maps, hex);
  if (!at || !at.entry.path.startsWith('/')) hashUnresolved(hex);
  else {
    const id = options.buildIds?.get(at.entry.path);
    hashText(`n:${id ? 'b:' + id : 'p:' + at.entry.path}+${at.offset}`);
  }
}

/** Feeds "0x" and the lowercase hex digits of `v` (an integer, 0 ≤ v < 2^53) as `'0x' + v.toString(16)` writes them. */
function hashHex(v: number): void {
  const hi = Math.floor(v / 4294967296);
  const lo = v >>> 0;
  let h1 = lane1;
  let h2 = lane2;
  let h3 = lane3;
  // up to 14 digits, most significant first: hi's without leading zeros, then lo's 8 (or lo's alone, at least one)
  let digits = 0;
  const buf = HEX_DIGITS_BUF;
  buf[digits++] = 48; // 0
  buf[digits++] = 120; // x
  if (hi > 0) {
    let k = 7;
    while (k > 0 && ((hi >>> (4 * k)) & 15) === 0) k--;
    for (; k >= 0; k--) buf[digits++] = HEX_CODE[(hi >>> (4 * k)) & 15];
    for (k = 7; k >= 0; k--) buf[digits++] = HEX_CODE[(lo >>> (4 * k)) & 15];
  } else {
    let k = 7;
    while (k > 0 && ((lo >>> (4 * k)) & 15) === 0) k--;
    for (; k >= 0; k--) buf[digits++] = HEX_CODE[(lo >>> (4 * k)) & 15];
  }
  // hashText's mixing, over the digits' code units (a string made for them was what this replaces)
  for (let i = 0; i < digits; i++) {
    const c = buf[i];
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
    h3 = Math.imul(h3 + c, 0xc2b2ae35);
    h3 ^= h3 >>> 13;
  }
  lane1 = h1;
  lane2 = h2;
  lane3 = h3;
}

/**
 * parseInt(hex, 16) of an address text ("0x…"), as locateHex reads it, exact below 2^53 (above, a value above
 * 2^53 all the same); NaN for a text that is not one. A loop over the digits: parseInt was a quarter of the native
 * frames' time.
 */
function hexValue(hex: string): number {
  const from = hex.charCodeAt(0) === 48 && (hex.charCodeAt(1) | 32) === 120 ? 2 : 0;
  if (from === hex.length) return Number.NaN;
  let v = 0;
  for (let i = from; i < hex.length; i++) {
    const c = hex.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1;
    if (d < 0) return Number.NaN;
    v = v * 16 + d;
  }
  return v;
}

/** The code units of the hex digits 0–f. */
const HEX_CODE = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const HEX_DIGITS_BUF = new Uint8Array(16);

/**
 * Feeds `s` as JSON.stringify writes it between its quotes, when that is `s` itself (no quote, backslash, control
 * character or surrogate to escape); false, and nothing fed, otherwise.
 */
function hashJsonPlain(s: string): boolean {
  // a scan first (names rarely need escaping), then the one hashing loop
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  hashText(s);
  return true;
}

/** Feeds a Python frame's identity, 'y:' + JSON.stringify([function, file, line]), to the lanes (from their start). */
function hashPythonFrame(e: PythonFrameName): void {
  hashText('y:["');
  const plain = hashJsonPlain(e.function) && (hashText('","'), hashJsonPlain(e.file));
  if (plain) hashText(e.line === null || !Number.isFinite(e.line) ? '",null]' : `",${e.line}]`);
  else {
    hashStart();
    hashText('y:' + JSON.stringify([e.function, e.file, e.line]));
  }
}

interface PythonFrameName {
  function: string;
  file: string;
  line: number | null;
}

/**
 * Python frames' lanes by function, file and line, for the processes of one job: its ranks run one code base, so
 * most frames recur in every process, and each is hashed once (a look-up by the texts V8 hashes natively, instead of
 * feeding their code units to the lanes again: half of the stack keys' time at 1,000 processes).
 */
export class PythonFrameHashes {
  /** the frames of each function name (most have a few lines): indexes into `files`, `lines` and the lanes */
  private readonly byName = new Map<string, number[]>();
  private readonly files: string[] = [];
  private readonly lines: (number | null)[] = [];
  private lanes = new Uint32Array(3 * 1024);

  /** Sets the lanes to the frame's hash, as hashPythonFrame from their start makes it. */
  hash(e: PythonFrameName): void {
    let known = this.byName.get(e.function);
    if (!known) this.byName.set(e.function, (known = []));
    for (const i of known) {
      // Object.is: a NaN line is the same line (and hashes as null, like ±Infinity)
      if (this.files[i] !== e.file || !Object.is(this.lines[i], e.line)) continue;
      lane1 = this.lanes[3 * i];
      lane2 = this.lanes[3 * i + 1];
      lane3 = this.lanes[3 * i + 2];
      return;
    }
    hashPythonFrame(e);
    const i = this.files.length;
    this.lanes = grown(this.lanes, 3 * i + 3);
    this.files.push(e.file);
    this.lines.push(e.line);
    this.lanes[3 * i] = lane1;
    this.lanes[3 * i + 1] = lane2;
    this.lanes[3 * i + 2] = lane3;
    known.push(i);
  }
}

/** The lanes of `identityOf(proc)(a)` for every address id `a` (3 per address), as hashing that text gives them. */
function frameHashes(proc: ProcessSeries, options: IdentityOptions): Uint32Array {
  const table = proc.pythonFrames ?? null;
  const layout = layoutOf(table);
  const maps = proc.maps;
  const hexes = proc.addresses.hex;
  const python = options.pythonHashes;
  const fh = new Uint32Array(hexes.length * 3);
  // the lanes after a native frame's text up to its offset (`n:<module>+`), and the mapping's start and file offset
  // as doubles, per file mapping
  const modulePrefix = new Map<object, Float64Array>();
  for (let a = 0; a < hexes.length; a++) {
    const hex = hexes[a];
    const pa = decodePseudoAddress(hex, layout);
    hashStart();
    if (pa) {
      // the address text itself when it is the table's key (most are: a look-up by a text shared job-wide, whose
      // hash V8 keeps, not by a copy made per call)
      const e = pa.kind === PY_KIND_FRAME ? table?.frames.get(pa.addr === hex ? hex : pa.addr) : undefined;
      if (e) {
        if (python) python.hash(e);
        else hashPythonFrame(e);
      } else if (pa.kind === PY_KIND_FRAME) hashText('u:' + pa.addr);
      else {
        const marker = MARKER_NAME[pa.kind];
        hashText(marker ? 'ym:' + marker : 'u:' + pa.addr);
      }
    } else if (!maps) hashUnresolved(hex);
    else {
      // locateHex's mapping and offset, the offset's text hashed from its number (no string, no object per address:
      // most of the native frames' time); an address or offset past 2^53 takes locateHex itself
      const n = hexValue(hex);
      if (n <= Number.MAX_SAFE_INTEGER) {
        const m = mappingIndexAt(maps, n);
        const entry = m >= 0 ? maps[m] : null;
        let pre = entry ? modulePrefix.get(entry) : undefined;
        if (entry && !pre && entry.path.startsWith('/')) {
          const id = options.buildIds?.get(entry.path);
          hashText(`n:${id ? 'b:' + id : 'p:' + entry.path}+`);
          pre = Float64Array.of(lane1, lane2, lane3, numericStart(maps, m), Number(entry.offset));
          modulePrefix.set(entry, pre);
        }
        const off = pre ? n - pre[3] + pre[4] : 0;
        if (!pre) {
          hashStart();
          hashUnresolved(hex);
        } else if (off <= Number.MAX_SAFE_INTEGER) {
          lane1 = pre[0];
          lane2 = pre[1];
          lane3 = pre[2];
          hashHex(off);
        } else hashLocated(maps, hex, options);
      } else hashLocated(maps, hex, options);
    }
    fh[3 * a] = lane1 >>> 0;
    fh[3 * a + 1] = lane2 >>> 0;
    fh[3 * a + 2] = lane3 >>> 0;
  }
  return fh;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** 8 lowercase hex digits of a 32-bit value (by bytes from a table: twice as fast as toString(16) and padStart). */
function hex8(h: number): string {
  return HEX_BYTE[h >>> 24] + HEX_BYTE[(h >>> 16) & 255] + HEX_BYTE[(h >>> 8) & 255] + HEX_BYTE[h & 255];
}
