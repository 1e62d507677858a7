// The engine's messages as bytes, for transports that cannot structured-clone (a WebSocket between `heaplens open`
// and its page). One binary message: a 4-byte length, the message as JSON, then every typed array's bytes, each
// 8-aligned. What JSON cannot carry as structured clone would (typed arrays, ArrayBuffers, Maps, Sets, NaN, ±∞,
// undefined in arrays, bigints) is tagged, so a decoded message equals what a worker's postMessage would deliver:
// the parity test (node/engine/parity.test.ts) holds the Node engine's answers to the in-page engine's.
// Written here rather than taken from a library: msgpack and CBOR packages carry typed arrays as plain bytes or
// need extensions per type, and the page's decoder must stay in the pure core (no Node Buffer).

/** The tag key: a NUL-prefixed name no object of the engine's answers has. */
const TAG = '\u0000t';

type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

const ARRAYS = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
type ArrayName = keyof typeof ARRAYS;

/** A message's bytes past this many are refused by the decoder (a hostile or broken peer). */
export const MAX_WIRE_BYTES = 1 << 30;

export class WireError extends Error {
  constructor(message: string) {
    super(`engine message: ${message}`);
    this.name = 'WireError';
  }
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Encodes a message (any value the engine sends or receives). */
export function encodeMessage(msg: unknown): Uint8Array<ArrayBuffer> {
  const chunks: Uint8Array[] = [];
  let at = 0;
  const add = (bytes: Uint8Array): number => {
    const off = at;
    chunks.push(bytes);
    at = align8(at + bytes.byteLength);
    return off;
  };
  const json = JSON.stringify(msg, function (this: unknown, key: string, value: unknown) {
    // JSON.stringify has called toJSON already; the holder still has the original (Dates)
    const original = (this as Record<string, unknown>)[key];
    if (original instanceof Date) return { [TAG]: 'Date', v: original.getTime() };
    if (typeof value === 'number') {
      if (Number.isFinite(value)) return Object.is(value, -0) ? { [TAG]: 'num', v: '-0' } : value;
      return { [TAG]: 'num', v: String(value) };
    }
    if (typeof value === 'bigint') return { [TAG]: 'bigint', v: value.toString() };
    if (value === undefined && Array.isArray(this)) return { [TAG]: 'undefined' };
    if (value instanceof ArrayBuffer)
      return { [TAG]: 'ArrayBuffer', o: add(new Uint8Array(value.slice(0))), n: value.byteLength };
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const a = value as TypedArray;
      const name = a.constructor.name as ArrayName;
      if (!(name in ARRAYS)) throw new WireError(`cannot carry a ${name}`);
      return { [TAG]: name, o: add(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)), n: a.length };
    }
    if (value instanceof Map) return { [TAG]: 'Map', v: [...value.entries()] };
    if (value instanceof Set) return { [TAG]: 'Set', v: [...value.values()] };
    return value;
  });
  const text = new TextEncoder().encode(json ?? 'null');
  const head = align8(4 + text.byteLength);
  const out = new Uint8Array(head + at);
  new DataView(out.buffer).setUint32(0, text.byteLength, true);
  out.set(text, 4);
  let off = head;
  for (const c of chunks) {
    out.set(c, off);
    off = align8(off + c.byteLength);
  }
  return out;
}

/** Decodes a message; a WireError names what is wrong with bytes that are not one. */
export function decodeMessage(bytes: Uint8Array): unknown {
  if (bytes.byteLength > MAX_WIRE_BYTES) throw new WireError(`${bytes.byteLength} bytes, more than ${MAX_WIRE_BYTES}`);
  if (bytes.byteLength < 4) throw new WireError(`${bytes.byteLength} bytes, too short for its header`);
  const len = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + len > bytes.byteLength) throw new WireError(`JSON of ${len} bytes past the message's ${bytes.byteLength}`);
  const base = align8(4 + len);
  const slice = (o: unknown, byteLength: number): Uint8Array => {
    if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || base + o + byteLength > bytes.byteLength)
      throw new WireError(`binary part at ${String(o)} (${byteLength} bytes) outside the message`);
    return bytes.slice(base + o, base + o + byteLength);
  };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(4, 4 + len)));
  } catch (e) {
    throw new WireError(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return revive(json, slice);
}

/**
 * JSON.parse's value with its tagged objects turned back into what they stand for, filled in place: JSON.parse's
 * arrays and objects are fresh and this decoder's alone, and copying each was a third of a large summary's decoding
 * (a synthetic 5.8 MB summary in the page: 35.6 ms with copies, 24.7 ms in place, 19.3 ms the parse alone).
 */
function revive(v: unknown, slice: (o: unknown, n: number) => Uint8Array): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === 'object') v[i] = revive(x, slice);
    }
    return v;
  }
  const o = v as Record<string, unknown>;
  const tag = o[TAG];
  if (typeof tag === 'string') return tagged(tag, o, slice);
  // JSON.parse's objects have no inherited enumerable keys; a "__proto__" key of the message is an own data
  // property there (JSON.parse defines it), so assigning it sets that property, not the object's prototype
  for (const k in o) {
    const x = o[k];
    if (x !== null && typeof x === 'object') o[k] = revive(x, slice);
  }
  return o;
}

function tagged(tag: string, o: Record<string, unknown>, slice: (o: unknown, n: number) => Uint8Array): unknown {
  switch (tag) {
    case 'Date':
      return new Date(Number(o.v));
    case 'num':
      return o.v === '-0' ? -0 : Number(o.v);
    case 'bigint':
      return BigInt(String(o.v));
    case 'undefined':
      return undefined;
    case 'ArrayBuffer':
      return slice(o.o, count(o.n)).buffer;
    case 'Map':
      return new Map((revive(o.v, slice) as [unknown, unknown][]).map(([k, x]) => [k, x]));
    case 'Set':
      return new Set(revive(o.v, slice) as unknown[]);
  }
  if (!(tag in ARRAYS)) throw new WireError(`unknown tag ${JSON.stringify(tag)}`);
  const Ctor = ARRAYS[tag as ArrayName];
  const n = count(o.n);
  return new Ctor(slice(o.o, n * Ctor.BYTES_PER_ELEMENT).buffer as ArrayBuffer);
}

function count(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new WireError(`bad length ${String(n)}`);
  return n;
}
