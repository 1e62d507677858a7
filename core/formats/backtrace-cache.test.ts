import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BacktraceCache } from './backtrace-cache.js';
import { framesText, HeapDumpParser, type DumpRecord } from './heap-dump.js';
import { MAX_FRAMES_PER_STACK } from './limits.js';
import { fixturePath } from '../../tools/fixtures.js';

// The JavaScript parser's own cache, so the WASM record reader is off here (fast-records.ts takes the lines it
// can; fast-records.test.ts checks it against this path).
const enc = new TextEncoder();

/** FNV-1a over 32-bit words, seeded with the frame count: the hash as its definition reads */
function fnv(words: Uint32Array): number {
  let h = (2166136261 ^ (words.length / 2)) >>> 0;
  for (const w of words) h = Number((BigInt(h ^ w) * 16777619n) & 0xffffffffn) >>> 0;
  return h | 0;
}

function parse(bytes: Uint8Array, cache: BacktraceCache | null, chunk = bytes.length) {
  const records: { frames: string; line: number; live: number }[] = [];
  const p = new HeapDumpParser({
    fastRecords: false,
    onRecord: (r: DumpRecord) => {
      // the hash a record carries (kept by the cache or computed) is its words' own
      if (r.frameHash !== fnv(r.frameWords)) throw new Error(`line ${r.line}: frameHash is not its words' hash`);
      records.push({ frames: framesText(r.frameWords), line: r.line, live: r.counts.liveBytes });
    },
    ...(cache ? { backtraces: cache } : {}),
  });
  for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, Math.min(bytes.length, i + chunk)));
  return { info: p.finish(), records };
}

const dump = (...records: string[]) =>
  enc.encode(
    ['heap_v2/1', '  t*: 9: 900 [0: 0]', ...records.flatMap((r, k) => [r, `  t*: 1: ${k + 1} [0: 0]`]), ''].join('\n'),
  );

describe('backtrace lines matched instead of read again', () => {
  it('reads a line that differs from a known one in one byte, in length or by its line end as its own text', () => {
    const cache = new BacktraceCache();
    const first = dump('@ 0x7f0000001000 0x7f0000002000', '@ 0x7f0000003000 0x7f0000004000', '@ 0xa 0xb');
    expect(parse(first, cache).records.map((r) => r.frames)).toEqual([
      '0x7f0000001000 0x7f0000002000',
      '0x7f0000003000 0x7f0000004000',
      '0xa 0xb',
    ]);
    // each line below is first tried as the successor of the line before it (the order of `first`)
    const second = dump(
      '@ 0x7f0000001000 0x7f0000002000', // known
      '@ 0x7f0000003000 0x7f0000004001', // one byte differs (the last)
      '@ 0x7f0000003000 0x7f00000040000', // one byte longer
      '@ 0x7f0000003000 0x7f000000400', // one byte shorter
      '@ 0x7f0000001000 0x7f0000002000\r', // known, with CRLF
      '@ 0x7f0000003000 0x7f0000004000', // known, out of its old order
      '@ 0xa 0xb', // known, its predecessor's successor again
      ' @ 0xa 0xb', // a leading blank
      '@ 0XA 0xB', // other bytes, the same addresses
    );
    const got = parse(second, cache);
    expect(got.info.problems).toEqual([]);
    expect(got.records.map((r) => r.frames)).toEqual([
      '0x7f0000001000 0x7f0000002000',
      '0x7f0000003000 0x7f0000004001',
      '0x7f0000003000 0x7f00000040000',
      '0x7f0000003000 0x7f000000400',
      '0x7f0000001000 0x7f0000002000',
      '0x7f0000003000 0x7f0000004000',
      '0xa 0xb',
      '0xa 0xb',
      '0xa 0xb',
    ]);
    // the records' own lines and counts, as without the cache
    expect(got.records.map((r) => r.line)).toEqual([3, 5, 7, 9, 11, 13, 15, 17, 19]);
    expect(got.records.map((r) => r.live)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(got).toEqual(parse(second, null));
    // the four new texts are kept; the known one with CRLF is found as the known line, the indented one not kept
    expect(cache.size).toBe(7);
  });

  it('keeps no line that was read with a problem: the problem is reported in every dump', () => {
    const cache = new BacktraceCache();
    const long = '@' + ' 0x1'.repeat(MAX_FRAMES_PER_STACK + 1);
    const text = dump('@ 0x1 0x2', '@ 0x1 zz', long, '@ 0x3');
    for (let k = 0; k < 3; k++) {
      const got = parse(text, cache);
      expect(got.info.problems.map((p) => [p.line, p.message.split(':')[0]])).toEqual([
        [5, 'malformed address in backtrace'],
        [
          7,
          `backtrace of ${MAX_FRAMES_PER_STACK + 1} frames cut to its ${MAX_FRAMES_PER_STACK} leaf-most (jemalloc writes at most 128)`,
        ],
      ]);
      expect(got.records.map((r) => r.frames.split(' ').length)).toEqual([2, MAX_FRAMES_PER_STACK, 1]);
    }
  });

  it('gives the records of real dumps, one cache across a series and any chunk size, as reading every line', () => {
    const dir = fixturePath('job');
    const files = readdirSync(dir)
      .filter((f) => /^exact\.\d+\.\d+\.[a-z]\d+\.heap$/.test(f))
      .sort();
    expect(files.length).toBeGreaterThan(3);
    const cache = new BacktraceCache();
    let records = 0;
    for (const [k, f] of files.entries()) {
      const bytes = readFileSync(join(dir, f));
      const want = parse(bytes, null);
      expect(parse(bytes, cache, [bytes.length, 7, 4096][k % 3])).toEqual(want);
      records += want.records.length;
    }
    // the series' stacks recur: far fewer lines kept than read
    expect(cache.size).toBeLessThan(records / 2);
  });

  it("keeps a pending record's words when another parser of the thread starts the cache over", () => {
    // Two dumps read in turns through one cache (as interleaved in-thread tasks are): A's second record is
    // matched from the cache (the line that followed its first last time) and left pending at a chunk's end
    // (its count line is in A's next chunk); B then fills the cache past its bound, which starts it over and
    // stores other lines' words. A's record must keep the words of its own line.
    const first = '@ 0x7f0000001000 0x7f0000002000';
    const second = '@ 0x7f0000003000 0x7f0000004000';
    const cache = new BacktraceCache(3 * first.length);
    parse(dump(first, second), cache); // both known, second after first
    const got: string[] = [];
    const a = new HeapDumpParser({
      fastRecords: false,
      onRecord: (r) => got.push(framesText(r.frameWords)),
      backtraces: cache,
    });
    a.push(enc.encode(`heap_v2/1\n  t*: 2: 2 [0: 0]\n${first}\n  t*: 1: 1 [0: 0]\n${second}\n`));
    const others = ['@ 0x1111111111 0x2222222222', '@ 0x3333333333 0x4444444444', '@ 0x5555555555 0x6666666666'];
    const b = parse(dump(...others, ...others), cache);
    expect(b.records.map((r) => r.frames)).toEqual([...others, ...others].map((t) => t.slice(2)));
    a.push(enc.encode('  t*: 1: 1 [0: 0]\n'));
    a.finish();
    expect(got).toEqual([first.slice(2), second.slice(2)]);
  });

  it('starts over past its size bound and still reads every line right', () => {
    const cache = new BacktraceCache(40);
    const text = dump('@ 0x7f0000001000 0x7f0000002000', '@ 0x7f0000003000 0x7f0000004000', '@ 0xa');
    for (let k = 0; k < 3; k++) expect(parse(text, cache)).toEqual(parse(text, null));
    expect(cache.size).toBeLessThanOrEqual(2);
  });
});

describe('a kept line’s serial', () => {
  it('is one line’s for good: equal serials are equal words, across the cache’s restarts', () => {
    // A's three lines fit the cache and are met again; B's five do not: reading B starts the cache over, and
    // the lines kept after that take the places (indices) A's had
    const line = (k: number) => `@ 0x7f00000${String(k).padStart(5, '0')} 0x7f1000000000`;
    const a = dump(line(1), line(2), line(3));
    const b = dump(line(11), line(12), line(13), line(14), line(15));
    const cache = new BacktraceCache(4 * line(1).length + 4);
    const wordsOf = new Map<number, string>();
    let hits = 0;
    let restarts = 0;
    for (const text of [a, a, b, a, a, b, b]) {
      const before = cache.size;
      const p = new HeapDumpParser({
        fastRecords: false,
        backtraces: cache,
        onRecord: (r) => {
          const e = r.frameEntry ?? -1;
          expect(e).toBeGreaterThanOrEqual(0);
          const words = framesText(r.frameWords);
          if (wordsOf.has(e)) hits++;
          else wordsOf.set(e, words);
          expect(wordsOf.get(e), `serial ${e}`).toBe(words);
        },
      });
      p.push(text);
      p.finish();
      if (cache.size < before) restarts++;
    }
    expect(hits).toBeGreaterThanOrEqual(6);
    expect(restarts).toBeGreaterThanOrEqual(2);
  });

  it('is none for a line read with a problem or with no cache', () => {
    const text = dump('@ 0x10 0x20', '@ 0x30 0x40 ', '@ 0x50');
    const serials = (cache: BacktraceCache | null) => {
      const seen: number[] = [];
      const p = new HeapDumpParser({
        fastRecords: false,
        onRecord: (r) => void seen.push(r.frameEntry ?? -1),
        ...(cache ? { backtraces: cache } : {}),
      });
      p.push(text);
      p.finish();
      return seen;
    };
    const cache = new BacktraceCache();
    expect(serials(cache)).toEqual([0, 1, 2]);
    expect(serials(cache)).toEqual([0, 1, 2]);
    expect(serials(null)).toEqual([-1, -1, -1]);
  });
});
