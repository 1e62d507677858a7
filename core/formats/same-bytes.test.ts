import { describe, expect, it } from 'vitest';
import { sameBytes, viewOf } from './same-bytes.js';

/** The definition: every byte equal. */
function equalByBytes(a: Uint8Array, as: number, b: Uint8Array, bs: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (a[as + k] !== b[bs + k]) return false;
  return true;
}

const same = (a: Uint8Array, as: number, b: Uint8Array, bs: number, len: number) =>
  sameBytes(a, viewOf(a), as, b, viewOf(b), bs, len);

describe('sameBytes', () => {
  it('tells equal ranges from ranges that differ in any one byte, at any length and alignment', () => {
    let seed = 7;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24) & 0xff;
    for (let len = 0; len <= 40; len++) {
      for (const [as, bs] of [
        [0, 0],
        [1, 3],
        [5, 2],
        [7, 0],
      ]) {
        const a = new Uint8Array(as + len + 9).map(rnd);
        const b = new Uint8Array(bs + len + 9).map(rnd);
        b.set(a.subarray(as, as + len), bs);
        expect(same(a, as, b, bs, len)).toBe(true);
        for (let k = 0; k < len; k++) {
          for (const flip of [0x01, 0x80]) {
            b[bs + k] ^= flip;
            expect(same(a, as, b, bs, len)).toBe(false);
            b[bs + k] ^= flip;
          }
        }
      }
    }
  });

  it('is exact where doubles are not: +0 and −0 differ, and equal NaN bits are equal', () => {
    const le = (x: number) => {
      const u = new Uint8Array(8);
      new DataView(u.buffer).setFloat64(0, x, true);
      return u;
    };
    // +0 and −0 compare equal as doubles, but their bytes differ (the sign bit)
    const zero = le(0);
    const minusZero = le(-0);
    expect(equalByBytes(zero, 0, minusZero, 0, 8)).toBe(false);
    expect(same(zero, 0, minusZero, 0, 8)).toBe(false);
    expect(same(minusZero, 0, zero, 0, 8)).toBe(false);
    expect(same(zero, 0, le(0), 0, 8)).toBe(true);
    // a NaN never equals itself as a double, but the same bytes are the same bytes
    const nan = new Uint8Array([1, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0x41, 0x42]);
    expect(Number.isNaN(new DataView(nan.buffer).getFloat64(0, true))).toBe(true);
    expect(same(nan, 0, nan.slice(), 0, 10)).toBe(true);
    const otherNan = nan.slice();
    otherNan[0] = 2;
    expect(same(nan, 0, otherNan, 0, 10)).toBe(false);
    // after a zero or NaN step, the rest is still compared
    const tail = new Uint8Array([...zero, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69]);
    const tail2 = tail.slice();
    tail2[16] = 0x6a;
    expect(same(tail, 0, tail2, 0, 17)).toBe(false);
    expect(same(tail, 0, tail.slice(), 0, 17)).toBe(true);
  });
});
