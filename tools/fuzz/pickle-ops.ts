// Crafted pickles built on the fly for the reproducers of issue 46 (never stored: a bomb is a few KB, a flood
// is megabytes): the restricted unpickler's tests and the loader's.

/** A pickle written opcode by opcode (pickletools' encodings), for the crafted files below. */
export class Ops {
  readonly out: number[] = [0x80, 0x04];
  get at(): number {
    return this.out.length;
  }
  op(...b: number[]): this {
    this.out.push(...b);
    return this;
  }
  str(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.op(0x8c, b.length, ...b);
  }
  int(n: number): this {
    return this.op(0x4a, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff);
  }
  times(n: number, f: (o: this) => void): this {
    for (let i = 0; i < n; i++) f(this);
    return this;
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.out);
  }
}
/** Opcodes by pickletools' names. */
export const OP = {
  DICT: 0x7d,
  LIST: 0x5d,
  MARK: 0x28,
  BINPUT: 0x71,
  BINGET: 0x68,
  SETITEM: 0x73,
  SETITEMS: 0x75,
  APPENDS: 0x65,
  APPEND: 0x61,
  STOP: 0x2e,
  TUPLE1: 0x85,
  MEMOIZE: 0x94,
} as const;
const { DICT, LIST, MARK, BINPUT, BINGET, SETITEM, SETITEMS, APPENDS, STOP } = OP;

/**
 * Issue 46 S1: segments that are one segment referenced `n` times, whose blocks are one block referenced `blocks`
 * times, whose frames are one frame referenced `frames` times (~2(n + blocks + frames) bytes; 1000 of each
 * expands to 7·10^9 values).
 */
export function memoBomb(n: number, blocks = n, frames = n): { bytes: Uint8Array; segmentAt: number } {
  const o = new Ops().op(DICT).str('segments').op(LIST, MARK);
  const segmentAt = o.at;
  o.op(DICT, BINPUT, 0, MARK)
    .str('device')
    .int(0)
    .str('total_size')
    .int(2 ** 30)
    .str('blocks')
    .op(LIST, MARK);
  o.op(DICT, BINPUT, 1, MARK).str('size').int(512).str('state').str('active_allocated').str('address').int(0);
  o.str('frames').op(LIST, MARK, DICT, BINPUT, 2, MARK).str('name').str('f').str('filename').str('x.py');
  o.str('line').int(1).op(SETITEMS);
  o.times(frames - 1, (x) => x.op(BINGET, 2)).op(APPENDS, SETITEMS);
  o.times(blocks - 1, (x) => x.op(BINGET, 1)).op(APPENDS, SETITEMS);
  o.times(n - 1, (x) => x.op(BINGET, 0)).op(APPENDS, SETITEM, STOP);
  return { bytes: o.bytes(), segmentAt };
}
