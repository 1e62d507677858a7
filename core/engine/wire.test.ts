// The wire codec carries what a worker's structured clone would: a message decoded equals the one encoded, typed
// arrays included (values and types), and bytes that are not a message are refused with what is wrong.
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, WireError } from './wire.js';

describe('engine wire', () => {
  it('round-trips what JSON alone would lose', () => {
    const msg = {
      id: 7,
      values: new Float64Array([1.5, -2, Number.NaN, Number.POSITIVE_INFINITY]),
      ids: new Uint32Array([0, 4294967295]),
      small: new Int8Array([-128, 127]),
      view: new Uint16Array(new Uint16Array([9, 8, 7, 6]).buffer, 2, 2),
      buffer: new Uint8Array([1, 2, 3]).buffer,
      big: 12345678901234567890n,
      nums: [Number.NaN, Number.NEGATIVE_INFINITY, -0, 1e308],
      holes: [1, undefined, 3],
      when: new Date(1_700_000_000_000),
      map: new Map<string, number[]>([['a', [1]]]),
      set: new Set(['x', 'y']),
      text: 'tab\there \u202e and a NUL \u0000 inside',
      nested: { deep: [{ f: new Float32Array([0.5]) }] },
    };
    const back = decodeMessage(encodeMessage(msg)) as typeof msg;
    expect(back).toEqual(msg);
    expect(back.values).toBeInstanceOf(Float64Array);
    expect(Array.from(back.view)).toEqual([8, 7]);
    expect(back.ids).toBeInstanceOf(Uint32Array);
    expect(back.buffer).toBeInstanceOf(ArrayBuffer);
    expect(Object.is(back.nums[2], -0)).toBe(true);
    expect(back.holes).toHaveLength(3);
    expect(back.when).toBeInstanceOf(Date);
  });

  it('revives tagged values at every depth, in arrays, objects, maps and sets alike', () => {
    const msg = {
      rows: Array.from({ length: 50 }, (_, i) => ({
        i,
        deep: [[[{ at: new Int32Array([i, -i]), gone: [undefined, i] }]]],
        when: i % 2 ? new Date(i) : null,
        n: i % 3 ? -0 : Number.NaN,
      })),
      map: new Map<string, unknown>([
        ['a', { f: new Float64Array([1, 2]) }],
        ['b', new Set([new Uint8Array([3]), 1n])],
      ]),
      empty: { a: [], o: {}, s: '', z: 0, f: false, nul: null },
    };
    const back = decodeMessage(encodeMessage(msg)) as typeof msg;
    expect(back).toStrictEqual(msg);
    expect(back.rows[7].deep[0][0][0].at).toBeInstanceOf(Int32Array);
    expect(Object.is(back.rows[1].n, -0)).toBe(true);
    expect(back.rows[3].deep[0][0][0].gone).toEqual([undefined, 3]);
  });

  it("keeps a message's own `__proto__` key as data: it sets no object's prototype", () => {
    const msg = JSON.parse('{"a":{"__proto__":{"polluted":true},"x":[{"__proto__":[1]}]}}') as Record<string, unknown>;
    const back = decodeMessage(encodeMessage(msg)) as { a: Record<string, unknown> & { x: object[] } };
    expect(Object.getPrototypeOf(back.a)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(back.a.x[0])).toBe(Object.prototype);
    expect(Object.keys(back.a)).toEqual(['__proto__', 'x']);
    expect(Object.getOwnPropertyDescriptor(back.a, '__proto__')?.value).toEqual({ polluted: true });
    expect((back.a as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('aligns every binary part so the page can view it', () => {
    const bytes = encodeMessage({ a: new Uint8Array([1]), b: new Float64Array([2]) });
    // header + JSON, then parts at 8-byte offsets
    expect(bytes.byteLength % 8).toBe(0);
    expect(decodeMessage(bytes)).toEqual({ a: new Uint8Array([1]), b: new Float64Array([2]) });
  });

  it('refuses bytes that are not a message, saying what is wrong', () => {
    expect(() => decodeMessage(new Uint8Array([1, 2]))).toThrow(WireError);
    const cut = encodeMessage({ a: new Float64Array(16) }).slice(0, 40);
    expect(() => decodeMessage(cut)).toThrow(/outside the message|past the message/);
    const head = new Uint8Array(8);
    new DataView(head.buffer).setUint32(0, 1000, true);
    expect(() => decodeMessage(head)).toThrow(/JSON of 1000 bytes past the message's 8/);
    const bad = new TextEncoder().encode('{"x":{"\\u0000t":"Float64Array","o":0,"n":1000000}}');
    const msg = new Uint8Array(8 + bad.byteLength);
    new DataView(msg.buffer).setUint32(0, bad.byteLength, true);
    msg.set(bad, 4);
    expect(() => decodeMessage(msg)).toThrow(/outside the message/);
    const tag = new TextEncoder().encode('{"\\u0000t":"Function"}');
    const m2 = new Uint8Array(8 + tag.byteLength);
    new DataView(m2.buffer).setUint32(0, tag.byteLength, true);
    m2.set(tag, 4);
    expect(() => decodeMessage(m2)).toThrow(/unknown tag "Function"/);
  });
});
