// The restricted unpickler on pickles written by CPython's own pickle module (fixtures/torch/make-torch-snapshots.py)
// and by hand for the opcodes a crafted file would use. Expected values are what Python put in, not our output.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PICKLE_LIMITS, field, PickleError, readPickle, type PickleValue } from './pickle.js';
import { FIXTURES } from '../../tools/fixtures.js';
import { memoBomb, Ops, OP } from '../../tools/fuzz/pickle-ops.js';

const TORCH = join(FIXTURES, '..', 'torch');
const file = (...p: string[]) => new Uint8Array(readFileSync(join(TORCH, ...p)));
const bytes = (...b: number[]) => new Uint8Array(b);
const expected = JSON.parse(readFileSync(join(TORCH, 'expected.json'), 'utf8')) as {
  devices: { trace_entries: number; segments: number; first_time_us: number }[];
};

describe('readPickle', () => {
  for (const name of ['snapshot-p2.pickle', 'snapshot-p4.pickle', 'snapshot-p5.pickle']) {
    it(`reads ${name} as plain data (segments, traces, epoch-µs times)`, () => {
      const v = readPickle(file(name));
      const traces = field(v, 'device_traces') as PickleValue[][];
      expect(traces.map((t) => t.length)).toEqual(expected.devices.map((d) => d.trace_entries));
      const segs = field(v, 'segments') as PickleValue[];
      expect(segs.length).toBe(expected.devices[0].segments + expected.devices[1].segments);
      expect(field(traces[0][0], 'time_us')).toBe(expected.devices[0].first_time_us);
      expect(field(segs[0], 'segment_pool_id')).toEqual([0, 0]);
      expect(field(field(v, 'allocator_settings'), 'garbage_collection_threshold')).toBe(0);
    });
  }

  it('decodes signed longs, big ints as bigint, floats big-endian, tuples, None, booleans', () => {
    // pickle.dumps([-2**40, 2**64+1, 1.5, (1, 2, 3), None, True, False], protocol=4)
    const p = bytes(
      0x80,
      0x04,
      0x5d,
      0x94,
      0x28,
      0x8a,
      0x06,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0xff,
      0x8a,
      0x09,
      0x01,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x01,
      0x47,
      0x3f,
      0xf8,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x4b,
      0x01,
      0x4b,
      0x02,
      0x4b,
      0x03,
      0x87,
      0x94,
      0x4e,
      0x88,
      0x89,
      0x65,
      0x2e,
    );
    expect(readPickle(p)).toEqual([-(2 ** 40), 2n ** 64n + 1n, 1.5, [1, 2, 3], null, true, false]);
  });

  it('keeps __proto__ as a plain key', () => {
    // pickle.dumps({'__proto__': 1}, protocol=2)
    const p = new Uint8Array([
      0x80,
      0x02,
      0x7d,
      0x71,
      0x00,
      0x58,
      0x09,
      0x00,
      0x00,
      0x00,
      ...new TextEncoder().encode('__proto__'),
      0x71,
      0x01,
      0x4b,
      0x01,
      0x73,
      0x2e,
    ]);
    const v = readPickle(p) as Map<string, PickleValue>;
    expect(v.get('__proto__')).toBe(1);
    expect(Object.getPrototypeOf(v)).toBe(Map.prototype);
  });

  it('refuses GLOBAL/REDUCE (a pickle that would run os.system) without running anything', () => {
    expect(() => readPickle(file('hostile', 'global-reduce.pickle'))).toThrow(
      /GLOBAL.*refused, nothing in the file is run/,
    );
    // STACK_GLOBAL, REDUCE, BUILD by themselves
    for (const op of [0x93, 0x52, 0x62, 0x81]) {
      expect(() => readPickle(bytes(0x80, 0x04, 0x4e, 0x4e, op, 0x2e))).toThrow(PickleError);
    }
  });

  it('refuses a cycle, a huge length, a cut file, an unknown protocol', () => {
    expect(() => readPickle(file('hostile', 'cycle.pickle'))).toThrow(/contains itself/);
    expect(() => readPickle(file('hostile', 'huge-length.pickle'))).toThrow(/ends inside an opcode/);
    const whole = file('snapshot-p4.pickle');
    expect(() => readPickle(whole.subarray(0, whole.length >> 1))).toThrow(/ends/);
    expect(() => readPickle(bytes(0x80, 0x01, 0x4e, 0x2e))).toThrow(/protocol 2–5 \(protocol 1\)/);
    expect(() => readPickle(bytes(0x80, 0x04, 0x8a, 0xff))).toThrow(/integer of 255 bytes/);
  });

  it('bounds the stack and the number of values', () => {
    const deep = new Uint8Array(2 + 3000 + 1);
    deep.set([0x80, 0x04]);
    deep.fill(0x5d, 2);
    expect(() => readPickle(deep, { maxStack: 1000 })).toThrow(/stack deeper than 1000/);
  });
});

describe('readPickle bounds (issue 46)', () => {
  it('S1: a memo-reference bomb is refused at once, naming the shared segment at its offset', () => {
    const { bytes: b, segmentAt } = memoBomb(1000);
    expect(b.length).toBeLessThan(16_000);
    const t0 = performance.now();
    let err: unknown;
    try {
      readPickle(b);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PickleError);
    expect((err as PickleError).byteOffset).toBe(segmentAt);
    // one segment's slots: a frame dict 6 (3 keys, 3 values); frames 1000 × (1 + 6); a block 8 + frames;
    // blocks 1000 × (1 + block); the segment 6 (device, total_size, blocks) + blocks
    const frames = 1000 * (1 + 6);
    const segment = 6 + 1000 * (1 + 8 + frames);
    expect((err as PickleError).message).toMatch(
      new RegExp(
        `expands to more than ${DEFAULT_PICKLE_LIMITS.maxExpanded} values.*the dict made here \\(${segment} values\\).*\\(at byte ${segmentAt}\\)`,
      ),
    );
    // the walk visits each distinct container once: milliseconds, not the 18–43 s of following every reference
    expect(performance.now() - t0).toBeLessThan(2000);
    // the same shape, small, is read whole: 4 segments × 4 blocks × 4 frames
    const small = readPickle(memoBomb(4).bytes);
    const segs = field(small, 'segments') as PickleValue[];
    expect(segs.length).toBe(4);
    expect((field(segs[3], 'blocks') as PickleValue[]).length).toBe(4);
    expect(segs[3]).toBe(segs[0]);
  });

  it('S2: floods of dicts, memo entries and containers, and deep nesting, stop at their limits with offsets', () => {
    const dicts = new Ops()
      .op(OP.MARK)
      .times(20_000, (o) => o.op(OP.DICT))
      .bytes();
    expect(() => readPickle(dicts, { maxBytes: 1 << 20 })).toThrow(
      /more than 1048576 bytes of memory.*\(at byte \d+\)/,
    );
    expect(() => readPickle(dicts, { maxContainers: 1000 })).toThrow(
      /more than 1000 lists and dicts.*\(at byte 1003\)/,
    );
    const memo = new Ops()
      .op(0x4e)
      .times(200, (o) => o.op(OP.MEMOIZE))
      .bytes();
    expect(() => readPickle(memo, { maxMemo: 100 })).toThrow(/more than 100 memo entries \(at byte 103\)/);
    // 2,000 tuples each holding the last: the stack stays one deep, the nesting does not
    const deep = new Ops()
      .op(OP.LIST)
      .times(2000, (o) => o.op(OP.TUPLE1))
      .op(OP.STOP)
      .bytes();
    expect(() => readPickle(deep)).toThrow(/nested deeper than 1000; refused/);
    expect(DEFAULT_PICKLE_LIMITS.maxMemo).toBe(2 ** 24);
  });

  it('S8: an opcode taking the MARK as a value is refused with its offset, as CPython refuses it', () => {
    // ] ( TUPLE1 APPEND POP_MARK .   (CPython 3.11: "unexpected MARK found")
    expect(() => readPickle(bytes(0x80, 0x04, OP.LIST, OP.MARK, OP.TUPLE1, 0x61, 0x31, OP.STOP))).toThrow(
      /takes a value from an empty stack \(or the MARK\) \(at byte 4\)/,
    );
    // the values above a MARK are still taken: ( 1 TUPLE1 TUPLE → ((1,),)
    expect(readPickle(bytes(0x80, 0x04, OP.MARK, 0x4b, 0x01, OP.TUPLE1, 0x74, OP.STOP))).toEqual([[1]]);
  });
});
