// Inputs built from their formats' structure, where byte mutation of the fixtures is blind (issue 46): pickles
// whose memo shares one container many times, values past Date's range and sums past 2^53, pprof messages with
// packed fields that claim more than they hold, codec streams of hostile blocks, names made to break exports.
// Each builder is deterministic in its Rng, so a failing case reproduces from its number.

import type { Rng } from './mutate.js';

const enc = new TextEncoder();

/** Bytes appended in order. */
class Bytes {
  private parts: number[] = [];
  byte(...b: number[]): this {
    this.parts.push(...b);
    return this;
  }
  u32le(n: number): this {
    return this.byte(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  }
  raw(b: Uint8Array): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

// ---- pickles (protocol 2 opcodes, as torch.cuda.memory._dump_snapshot writes them) ----

type Py = null | boolean | number | bigint | string | Py[] | { [k: string]: Py } | Shared;
/** A value written once into the memo and referenced (BINGET) at every later use. */
export class Shared {
  constructor(readonly value: Py) {}
}

/** A pickle of `root`: dicts, lists, str, int (BININT / LONG1 for bigint), float, None, bools, memo references. */
export function pickle(root: Py): Uint8Array {
  const out = new Bytes().byte(0x80, 2);
  const memo = new Map<Shared, number>();
  const put = () => {
    const n = memo.size;
    out.byte(0x72).u32le(n); // LONG_BINPUT
    return n;
  };
  const write = (v: Py): void => {
    if (v instanceof Shared) {
      const at = memo.get(v);
      if (at !== undefined) {
        out.byte(0x6a).u32le(at); // LONG_BINGET
        return;
      }
      write(v.value);
      memo.set(v, put());
      return;
    }
    if (v === null) out.byte(0x4e);
    else if (v === true) out.byte(0x88);
    else if (v === false) out.byte(0x89);
    else if (typeof v === 'string') {
      const b = enc.encode(v);
      out.byte(0x58).u32le(b.length).raw(b); // BINUNICODE
    } else if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) >= 2 ** 31)) {
      // LONG1: little-endian two's complement
      let x = BigInt(v);
      const bytes: number[] = [];
      for (;;) {
        bytes.push(Number(x & 0xffn));
        x >>= 8n;
        if ((x === 0n && !(bytes[bytes.length - 1] & 0x80)) || (x === -1n && bytes[bytes.length - 1] & 0x80)) break;
      }
      out.byte(0x8a, bytes.length, ...bytes);
    } else if (typeof v === 'number' && Number.isInteger(v))
      out.byte(0x4a).u32le(v | 0); // BININT
    else if (typeof v === 'number') {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setFloat64(0, v, false);
      out.byte(0x47).raw(b); // BINFLOAT
    } else if (Array.isArray(v)) {
      out.byte(0x5d); // EMPTY_LIST
      if (v.length) {
        out.byte(0x28); // MARK
        for (const x of v) write(x);
        out.byte(0x65); // APPENDS
      }
    } else {
      out.byte(0x7d); // EMPTY_DICT
      const keys = Object.keys(v);
      if (keys.length) {
        out.byte(0x28);
        for (const k of keys) {
          write(k);
          write(v[k]);
        }
        out.byte(0x75); // SETITEMS
      }
    }
  };
  write(root);
  return out.byte(0x2e).done();
}

/**
 * A PyTorch snapshot whose segments list holds `n` references to one segment, whose blocks are `n` references to
 * one block, whose frames are `n` references to one frame (issue 46 S1: 15 KB for n = 1,000 expands to 10^9 frames).
 */
export function sharedMemoSnapshot(n: number): Uint8Array {
  const frame = new Shared({ filename: 'train.py', line: 7, name: 'step' });
  const block = new Shared({
    address: 1 << 20,
    size: 512,
    requested_size: 512,
    state: 'active_allocated',
    frames: Array.from({ length: n }, () => frame),
  });
  const segment = new Shared({
    device: 0,
    address: 1 << 20,
    total_size: 2 << 20,
    allocated_size: 512,
    active_size: 512,
    stream: 0,
    segment_type: 'large',
    blocks: Array.from({ length: n }, () => block),
  });
  return pickle({ segments: Array.from({ length: n }, () => segment), device_traces: [[]] });
}

/** Figures past every sane bound, for the fields that hold sizes, times and devices. */
export const ABSURD_NUMBERS: readonly (number | bigint)[] = [
  2 ** 53 - 1,
  2 ** 53 + 2,
  1e20,
  -1e18,
  1e300,
  8.64e15 + 1, // one past Date's range in ms
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 64n,
];

/** A snapshot with one absurd figure in a segment, a block or a trace entry (issue 46 S3, S6). */
export function absurdSnapshot(rng: Rng): { what: string; bytes: Uint8Array } {
  const x = rng.pick(ABSURD_NUMBERS);
  const where = rng.pick(['total_size', 'device', 'size', 'time_us', 'oom time_us', 'sum'] as const);
  const seg = (size: Py, device: Py = 0): { [k: string]: Py } => ({
    device,
    address: 1 << 20,
    total_size: size,
    allocated_size: 0,
    active_size: 0,
    stream: 0,
    segment_type: 'large',
    blocks: [
      {
        address: 1 << 20,
        size: where === 'size' ? x : 512,
        requested_size: 512,
        state: 'active_allocated',
        frames: [],
      },
    ],
  });
  const segments =
    where === 'sum'
      ? Array.from({ length: 4 }, () => seg(2 ** 52)) // 4 × 2^52 = 2^54 reserved
      : [seg(where === 'total_size' ? x : 2 << 20, where === 'device' ? x : 0)];
  const trace: Py[] = [
    {
      action: 'alloc',
      addr: 1 << 20,
      size: 512,
      stream: 0,
      time_us: where === 'time_us' ? x : 1_700_000_000_000_000,
      frames: [],
    },
    {
      action: 'oom',
      device_free: 0,
      size: 1 << 30,
      stream: 0,
      time_us: where === 'oom time_us' ? x : 1_700_000_000_000_001,
      frames: [],
    },
  ];
  const what = where === 'sum' ? 'four segments of 2^52 bytes' : `${where} = ${String(x)}`;
  return { what, bytes: pickle({ segments, device_traces: [trace] }) };
}

// ---- protobuf (pprof) ----

function varint(n: number | bigint): number[] {
  let x = BigInt(n);
  if (x < 0n) x += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}
const field = (no: number, wire: number) => varint((no << 3) | wire);
const lenField = (no: number, body: number[]) => [...field(no, 2), ...varint(body.length), ...body];
const numField = (no: number, v: number | bigint) => [...field(no, 0), ...varint(v)];

/**
 * A pprof Profile (profile.proto) with one sample type, one location, one function and one sample, then `damage`:
 * a packed field whose length claims more than the message holds, a nested message cut short, a time of 2^63−1,
 * or a location id the profile lacks (issue 46 S6, S12).
 */
export function pprofWith(damage: 'packed length' | 'nested cut' | 'time' | 'missing location'): Uint8Array {
  const strings = ['', 'inuse_space', 'bytes', 'main', 'main.go'];
  const valueType = lenField(1, [...numField(1, 1), ...numField(2, 2)]);
  let sampleBody = [...lenField(1, varint(1)), ...lenField(2, varint(4096))];
  if (damage === 'packed length')
    // location_id packed: claims 65,535 bytes, holds 5
    sampleBody = [...field(1, 2), ...varint(65535), 1, 2, 3, 4, 5, ...lenField(2, varint(4096))];
  if (damage === 'missing location') sampleBody = [...lenField(1, varint(99)), ...lenField(2, varint(4096))];
  let sample = lenField(2, sampleBody);
  if (damage === 'nested cut') sample = [...field(2, 2), ...varint(sampleBody.length + 40), ...sampleBody];
  const location = lenField(4, [
    ...numField(1, 1),
    ...numField(3, 0x401000),
    ...lenField(4, [...numField(1, 1), ...numField(2, 3)]),
  ]);
  const fn = lenField(5, [...numField(1, 1), ...numField(2, 3), ...numField(4, 4)]);
  const table = strings.flatMap((s) => lenField(6, [...enc.encode(s)]));
  const time = numField(9, damage === 'time' ? 2n ** 63n - 1n : 1_700_000_000_000_000_000n);
  const body =
    damage === 'nested cut'
      ? [...valueType, ...location, ...fn, ...table, ...time, ...sample]
      : [...valueType, ...sample, ...location, ...fn, ...table, ...time];
  return Uint8Array.from(body);
}

// ---- massif ----

/** A massif file whose detailed tree holds a node of `bytes` (1e29, 400 digits) above its snapshot's heap. */
export function massifWith(bytes: string): Uint8Array {
  return enc.encode(
    [
      'desc: (none)',
      'cmd: ./app',
      'time_unit: i',
      '#-----------',
      'snapshot=0',
      '#-----------',
      'time=0',
      'mem_heap_B=1000',
      'mem_heap_extra_B=8',
      'mem_stacks_B=0',
      'heap_tree=detailed',
      `n1: ${bytes} (heap allocation functions) malloc/new/new[], --alloc-fns, etc.`,
      ` n0: ${bytes} 0x400500: main (app.c:3)`,
      '',
    ].join('\n'),
  );
}

// ---- zstd ----

/**
 * A zstd stream of random frames (window descriptor, single-segment, checksum and skippable frames) whose blocks
 * are random RLE, raw and reserved-type headers with sizes around the format's maximum: the structure the decoder
 * and zstd-frames.ts trust.
 */
export function zstdStructured(rng: Rng): Uint8Array {
  const out = new Bytes();
  const frames = 1 + rng.int(3);
  for (let f = 0; f < frames; f++) {
    if (rng.int(6) === 0) {
      const len = rng.int(64);
      out.u32le(0x184d2a50 + rng.int(16)).u32le(len);
      for (let i = 0; i < len; i++) out.byte(rng.int(256));
      continue;
    }
    const single = rng.int(3) === 0;
    const checksum = rng.int(2);
    const fhd = (single ? 0x20 : 0) | (checksum << 2) | (single ? 0 : 0);
    out.u32le(0xfd2fb528).byte(fhd);
    if (single) out.byte(rng.int(256));
    else out.byte(rng.pick([(10 << 3) | 0, (17 << 3) | 0, (23 << 3) | 0, (27 << 3) | 0, (28 << 3) | 0, (31 << 3) | 7]));
    const blocks = 1 + rng.int(rng.int(2) ? 8 : 4000);
    for (let b = 0; b < blocks; b++) {
      const last = b === blocks - 1 ? 1 : 0;
      const type = rng.pick([0, 1, 1, 1, 3]);
      const size = rng.pick([0, 1, 255, 131071, 131072, 131073, (1 << 21) - 1]);
      const h = last | (type << 1) | (Math.min(size, (1 << 21) - 1) << 3);
      out.byte(h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff);
      if (type === 1) out.byte(rng.int(256));
      else if (type === 0) for (let i = 0; i < Math.min(size, 64); i++) out.byte(rng.int(256));
    }
    if (checksum) out.u32le(rng.next());
  }
  return out.done();
}

// ---- names ----

/** Characters that act on a display or break a format's syntax. */
const HOSTILE_CHARS = [
  '\u001b[2J',
  '\u001b]0;t\u0007',
  '\u0007',
  '\u0000',
  '\r',
  '\n',
  '\t',
  ';',
  ' ',
  '"',
  "'",
  '<',
  '\\',
  '\u202e',
  '\u2066',
  '\u2069',
  '\u200f',
  '\u061c',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\u0085',
  '\u009b',
  '\ud800', // a lone surrogate
];

/** A name made of ordinary text and hostile characters. */
export function hostileName(rng: Rng): string {
  let s = 'lib';
  const n = 1 + rng.int(6);
  for (let i = 0; i < n; i++) s += rng.pick(HOSTILE_CHARS) + rng.pick(['a', 'x.so', 'ffi', '-', '']);
  return s;
}

// ---- heads for the sniffer ----

/** Pieces of the text formats' first lines and the blanks around them. */
const HEAD_PIECES = [
  '\n',
  ' ',
  '\t',
  '\r\n',
  '\r',
  'heap_v2/',
  'heap profile:',
  '<jemalloc>:',
  'desc:',
  'cmd:',
  'time_unit:',
  'v 1 2',
  '@ 0x1',
  '# pid: 1',
  'Attaching to pid',
  '[10:00:00] Top 10 stacks',
  '{"',
  '00400000-00401000 r-xp',
  'snapshot=0',
  '\u0000',
];

/** A head of `size` bytes made of long runs of those pieces (the shapes that make a pattern backtrack). */
export function textHead(rng: Rng, size: number): string {
  let s = '';
  while (s.length < size) s += rng.pick(HEAD_PIECES).repeat(1 + rng.int(rng.int(2) ? 4 : 4000));
  return s.slice(0, size);
}
