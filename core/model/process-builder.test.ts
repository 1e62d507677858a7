import { describe, expect, it } from 'vitest';
import { AddressTexts, ProcessBuilder, stackHash } from './process-builder.js';

/** A stack's words from 64-bit frame addresses, (hi, lo) per frame. */
const words = (...frames: bigint[]) =>
  Uint32Array.from(frames.flatMap((f) => [Number(f >> 32n), Number(f & 0xffffffffn)]));

describe('ProcessBuilder.internRange', () => {
  it('gives equal stacks one id and different ones their own, where frames read as doubles are ±0 or NaN', () => {
    const b = new ProcessBuilder();
    // A frame's (hi, lo) words read as one little-endian double: hi is its low half, lo its high half.
    const asDouble = (f: bigint) => new Float64Array(words(f).buffer)[0];
    const minusZero = 0x80000000n; // lo = 0x80000000, hi = 0: the bits of −0
    const nan = 0x000000017ff80000n; // lo = 0x7ff80000, hi = 1: a NaN
    expect(Object.is(asDouble(0n), 0)).toBe(true);
    expect(Object.is(asDouble(minusZero), -0)).toBe(true);
    expect(Number.isNaN(asDouble(nan))).toBe(true);
    const stacks = [
      words(0x7f0000001000n, 0x7f0000002000n),
      words(0n, 0x7f0000002000n), // +0 as a double
      words(minusZero, 0x7f0000002000n), // equal to +0 as doubles
      words(nan, 0x7f0000002000n), // unequal to itself as a double
      words(nan + 1n, 0x7f0000002000n), // another NaN
      words(0x7f0000001000n, 0x7f0000002000n, 0n),
      words(0x7f0000001000n, 0x7f0000002000n, minusZero),
    ];
    // each first in one flat buffer (as a merge passes a task's words), then again from another, shifted by a frame
    const flat = (shift: number) => {
      const all = new Uint32Array(2 * shift + stacks.reduce((n, s) => n + s.length, 0));
      const at: number[] = [];
      let k = 2 * shift;
      for (const s of stacks) {
        at.push(k);
        all.set(s, k);
        k += s.length;
      }
      return { all, at };
    };
    const ids = (shift: number) => {
      const { all, at } = flat(shift);
      // every hash made equal: the compare alone must tell the stacks apart
      return stacks.map((s, j) => b.internRange(all, at[j], at[j] + s.length, 0));
    };
    const first = ids(0);
    expect(first).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(ids(1)).toEqual(first);
    // and one stack through internStack, its own hash
    expect(b.internStack(stacks[3].slice(), stackHash(stacks[3], 0, stacks[3].length))).toBe(7);
    expect(b.internStack(stacks[3].slice(), stackHash(stacks[3], 0, stacks[3].length))).toBe(7);
    // a task's words that start between two doubles (4-byte aligned only) compare as well
    const odd = new Uint32Array(1 + stacks[2].length);
    odd.set(stacks[2], 1);
    const view = odd.subarray(1);
    expect(view.byteOffset % 8).toBe(4);
    expect(b.internRange(view, 0, view.length, 0)).toBe(2);
  });
});

describe('ProcessBuilder sized by the process before', () => {
  // stacks of 3-40 frames over 300 addresses; the same list interned twice, equal hashes forced every 7th stack
  const many = Array.from({ length: 2000 }, (_, s) =>
    words(...Array.from({ length: 3 + (s % 38) }, (_, k) => 0x7f0000000000n + BigInt(((s * 31 + k * 17) % 300) * 16))),
  );
  const build = (b: ProcessBuilder) => [...many, ...many].map((w, s) => b.internStack(w, s % 7 === 0 ? 1 : undefined));
  const table = (b: ProcessBuilder) => ({
    offsets: [...b.stacks.offsets],
    frames: [...b.stacks.frames],
    hex: [...b.addresses.hex],
  });

  it('interns as a builder from nothing does, with the last one’s frame count and its stack-words buffer', () => {
    const texts = new AddressTexts();
    const first = new ProcessBuilder(texts);
    const fresh = build(first);
    expect(first.handOverWords()).toBeNull(); // not finished: it may intern more
    const one = first.finish('a', { pid: 1, pidNamespace: null, prefix: 'a' }, null);
    const handed = first.handOverWords();
    expect(handed).not.toBeNull();
    const next = new ProcessBuilder(texts, { frames: one.stacks.frames.length, words: handed });
    const ids = build(next);
    expect(ids).toEqual(fresh);
    expect(table(next)).toEqual(table(first));
    next.finish('b', { pid: 2, pidNamespace: null, prefix: 'b' }, null);
    // it worked in the buffer handed to it (as large as two words a frame needs), and hands it on
    expect(next.handOverWords()).toBe(handed);
  });

  it('leaves a handed buffer over four times what it needs (a large process’s, passed on) and makes its own', () => {
    const big = new Uint32Array(1 << 20);
    const b = new ProcessBuilder(new AddressTexts(), { frames: 10_000, words: big });
    const ids = build(b);
    b.finish('c', { pid: 3, pidNamespace: null, prefix: 'c' }, null);
    const own = b.handOverWords();
    expect(own).not.toBe(big);
    expect(own!.length).toBeGreaterThanOrEqual(20_000);
    const plain = new ProcessBuilder(new AddressTexts());
    expect(build(plain)).toEqual(ids);
    expect(table(plain)).toEqual(table(b));
  });
});

describe('ProcessBuilder frames and address texts', () => {
  it('keeps frame ids in a typed table as it grows, and processes that share address texts get the same ones', () => {
    const texts = new AddressTexts();
    const [a, b] = [new ProcessBuilder(texts), new ProcessBuilder(texts)];
    const alone = new ProcessBuilder();
    // 600 stacks of 1–9 frames over 700 addresses: the frame buffer and both address tables grow past their start
    const stack = (i: number) =>
      Array.from(
        { length: 1 + (i % 9) },
        (_, k) => (k % 3 === 0 ? 0x7f0000000000n : 0n) + BigInt(((i * 7 + k) % 700) * 16),
      );
    const want: string[][] = [];
    for (let i = 0; i < 600; i++) {
      const w = words(...stack(i));
      for (const p of [a, b, alone]) expect(p.internStack(w)).toBe(i);
      // jemalloc's hex: lowercase, no padding, the high word's digits then the low word's 8
      want.push(stack(i).map((f) => '0x' + f.toString(16)));
    }
    // the other process meets the addresses in its own order: its ids differ, its texts do not
    const c = new ProcessBuilder(texts);
    for (let i = 599; i >= 0; i--) c.internStack(words(...stack(i)));
    for (const p of [a, b, alone, c]) {
      const s = p.finish('k', { pid: 1, pidNamespace: null, prefix: 'jeprof' }, null);
      expect(s.stacks.frames).toBeInstanceOf(Uint32Array);
      expect(s.stacks.frames.length).toBe(s.stacks.offsets[s.stacks.count]);
      const got = (id: number) =>
        Array.from(s.stacks.frames.subarray(s.stacks.offsets[id], s.stacks.offsets[id + 1]), (x) => s.addresses.hex[x]);
      for (let i = 0; i < 600; i++) expect(got(p === c ? 599 - i : i)).toEqual(want[i]);
    }
  });

  it("shows the frames interned so far while loading, and a finished series holds no view of the builder's buffer", () => {
    const p = new ProcessBuilder();
    p.internStack(words(0x7f0000001000n, 0x7f0000002000n));
    expect(Array.from(p.stacks.frames)).toEqual([0, 1]);
    const early = p.finish('k', { pid: 1, pidNamespace: null, prefix: 'jeprof' }, null);
    p.internStack(words(0x7f0000003000n, 0x7f0000001000n, 0x7f0000004000n));
    expect(Array.from(p.stacks.frames)).toEqual([0, 1, 2, 0, 3]);
    // what was handed out before stays as it was (its count and frames)
    expect(early.stacks.count).toBe(1);
    expect(Array.from(early.stacks.frames)).toEqual([0, 1]);
    const done = p.finish('k', { pid: 1, pidNamespace: null, prefix: 'jeprof' }, null);
    expect(Object.getOwnPropertyDescriptor(done.stacks, 'frames')?.get).toBeUndefined();
    expect(done.stacks.frames.buffer.byteLength).toBe(5 * 4);
  });
});

describe('ProcessBuilder.markAllocatorFrames', () => {
  it('counts each stack’s leading frames inside the allocator’s mappings exactly, at any 64-bit bound', () => {
    // bounds around 2^32 words, past 2^53 (where doubles are not exact) and at the top of the range
    const je = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
    const map = (start: bigint, end: bigint, path: string) => ({
      start,
      end,
      perms: 'r-xp',
      offset: 0n,
      dev: '08:01',
      inode: 1,
      path,
      deleted: false,
    });
    const maps = [
      map(0xfffff000n, 0x1_00001000n, je),
      map(0x7f00_0000_0000n, 0x7f00_0000_1000n, '/usr/lib/libc.so.6'),
      map(0x20_0000_0000_0001n, 0x20_0000_0000_0003n, je),
      map(0xffff_ffff_ffff_f000n, 1n << 64n, je),
    ];
    const inJe = (a: bigint) => maps.some((m) => m.path === je && a >= m.start && a < m.end);
    const probes = [
      0xffffefffn,
      0xfffff000n,
      0xffffffffn,
      0x1_00000000n,
      0x1_00000fffn,
      0x1_00001000n,
      0x7f00_0000_0800n,
      0x20_0000_0000_0000n,
      0x20_0000_0000_0001n,
      0x20_0000_0000_0002n,
      0x20_0000_0000_0003n,
      0xffff_ffff_ffff_efffn,
      0xffff_ffff_ffff_f000n,
      0xffff_ffff_ffff_ffffn,
    ];
    const b = new ProcessBuilder();
    const stacks: bigint[][] = [];
    // every probe as a leaf, followed by each other probe and then a frame outside any mapping
    for (const leaf of probes)
      for (const next of probes) {
        const s = [leaf, next, 0x10n];
        stacks.push(s);
        b.internStack(Uint32Array.from(s.flatMap((a) => [Number(a >> 32n), Number(a & 0xffffffffn)])));
      }
    b.markAllocatorFrames(maps);
    const want = stacks.map((s) => {
      let d = 0;
      while (d < s.length && inJe(s[d])) d++;
      return d;
    });
    expect(b.stacks.allocatorDepth).toEqual(want);
    expect(new Set(want)).toEqual(new Set([0, 1, 2]));
  });
});

describe('SnapshotBuilder: thread totals', () => {
  it('unbias each thread line on its own, also when one has the record’s own counts', async () => {
    const { HeapDumpParser } = await import('../formats/heap-dump.js');
    const { SnapshotBuilder } = await import('./process-builder.js');
    const period = 1 << 19;
    const text = [
      `heap_v2/${period}`,
      '  t*: 30: 3000000 [0: 0]',
      '  t0: 10: 1000000 [0: 0]',
      '  t1: 20: 2000000 [0: 0]',
      '@ 0x1 0x2',
      '  t*: 10: 1000000 [0: 0]',
      '  t0: 10: 1000000 [0: 0]', // the record's own counts
      '@ 0x1 0x3',
      '  t*: 12: 600000 [0: 0]',
      '  t0: 2: 100000 [0: 0]',
      '  t1: 12: 600000 [0: 0]', // after another thread: the record's counts again
      '@ 0x1 0x4',
      '  t*: 8: 1400000 [0: 0]',
      '  t0: 0: 0 [0: 0]',
      '  t1: 8: 1400000 [0: 0]',
      '',
      'MAPPED_LIBRARIES:',
      '',
    ].join('\n');
    // jemalloc's unbiasing, written out: a record of n objects and b bytes stands for n / p and b / p, p = 1 − e^(−b/n/period)
    const up = (n: number, b: number) => (n === 0 ? [0, 0] : [n, b].map((v) => v / (1 - Math.exp(-b / n / period))));
    const b = new SnapshotBuilder(new ProcessBuilder());
    const p = new HeapDumpParser({ onRecord: (r) => b.add(r, p.info.sampling) });
    p.push(new TextEncoder().encode(text));
    const info = p.finish();
    const s = b.build({ file: 'a.heap', seq: 0, trigger: 'unknown', triggerSeq: null, mtimeMs: null }, info, null);
    const sum = (rows: number[][]) => rows.reduce((a, r) => [a[0] + r[0], a[1] + r[1]], [0, 0]);
    const t0 = sum([up(10, 1000000), up(2, 100000), up(0, 0)]);
    const t1 = sum([up(12, 600000), up(8, 1400000)]);
    const got = Object.fromEntries(s.threads.map((t) => [t.uid, [t.live.objects, t.live.bytes]]));
    expect(got[0]![0]).toBeCloseTo(t0[0], 6);
    expect(got[0]![1]).toBeCloseTo(t0[1], 3);
    expect(got[1]![0]).toBeCloseTo(t1[0], 6);
    expect(got[1]![1]).toBeCloseTo(t1[1], 3);
  });
});
