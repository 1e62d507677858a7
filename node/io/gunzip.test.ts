import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readDump } from '../../core/formats/read-dump.js';
import { webInflater } from '../../core/formats/inflate.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';
import { nodeInflater } from './gunzip.js';

function memFile(path: string, bytes: Uint8Array): InputFile {
  return { path, size: bytes.length, mtimeMs: null, read: async (o, l) => bytes.subarray(o, o + l) };
}

const original = readFileSync(fixturePath(findFixture('job', /^sampled\.\d+\.23\.i23\.heap$/)));
const gz = gzipSync(original);
// A 3 MB generated dump, for a corruption far from both ends.
const work = mkdtempSync(join(tmpdir(), 'heaplens-gunzip-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const bigPath = join(work, 'big.heap');
const generator = '../../bench/generate-series.mjs';
const { writeDump } = (await import(/* @vite-ignore */ generator)) as { writeDump: (p: string, o: object) => number };
writeDump(bigPath, { stacks: 5000, depth: 26, step: 1, seed: 1 });
const big = readFileSync(bigPath);
const bigGz = gzipSync(big);

describe.each([
  ['node:zlib', nodeInflater],
  ['DecompressionStream', webInflater()],
])('native inflate (%s)', (_name, inflate) => {
  it('reads the same records, maps and trailer as the plain file, in small compressed chunks', async () => {
    const plain = await readDump(memFile('a.heap', original));
    const r = await readDump(memFile('a.heap.gz', gz), { inflate, chunkSize: 777 });
    expect(r.gzip).toBe(true);
    expect(r.gzipProblem).toBeNull();
    expect(r.records).toEqual(plain.records);
    expect(r.info.mapsText).toBe(plain.info.mapsText);
    expect(r.info.bytes).toBe(original.length);
  });

  it('a copy cut short keeps the records before the cut and says the stream ended early', async () => {
    const r = await readDump(memFile('cut.heap.gz', gz.subarray(0, Math.floor(gz.length * 0.6))), { inflate });
    expect(r.gzipProblem).toMatch(/ends early/);
    expect(r.info.recordCount).toBeGreaterThan(0);
    expect(r.info.truncated).not.toBeNull();
  });

  it('corrupt compressed bytes are named as such, with what came before kept', async () => {
    const bad = Uint8Array.from(bigGz);
    for (let i = Math.floor(bad.length / 2); i < bad.length / 2 + 64; i++) bad[i] ^= 0x5a;
    const r = await readDump(memFile('bad.heap.gz', bad), { inflate });
    expect(r.gzipProblem).toMatch(/corrupt|ends early|invalid|incorrect/i);
    expect(r.info.recordCount).toBeGreaterThan(0);
    const plain = await readDump(memFile('big.heap', big));
    expect(r.records).toEqual(plain.records.slice(0, r.records.length));
  });

  it('stops when cancelled', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(readDump(memFile('a.heap.gz', gz), { inflate, signal: ac.signal })).rejects.toThrow();
  });
});

describe('node:zlib, a small whole file inflated at once (Inflater.whole)', () => {
  // the same inflater with only its streaming half: what a file too big for one read, or any host without a
  // synchronous inflater, goes through
  const streaming = Object.assign((c: AsyncIterable<Uint8Array>) => nodeInflater(c), { whole: undefined });
  const cases: [string, Uint8Array][] = [
    ['one member', gz],
    ['the 3 MB dump', bigGz],
    [
      'two members one after the other',
      Buffer.concat([gzipSync(big.subarray(0, 1_000_000)), gzipSync(big.subarray(1_000_000))]),
    ],
    ['garbage after the stream', Buffer.concat([gz, Buffer.from('not gzip at all\n')])],
    ['cut short', gz.subarray(0, Math.floor(gz.length * 0.6))],
    [
      'corrupt in the middle',
      Uint8Array.from(bigGz, (b, i) => (i >= bigGz.length / 2 && i < bigGz.length / 2 + 64 ? b ^ 0x5a : b)),
    ],
    ['a stored size that lies', Buffer.concat([gz.subarray(0, gz.length - 4), Buffer.from([1, 0, 0, 0])])],
  ];
  it.each(cases)('%s: the same records, problem and info as streaming', async (_name, bytes) => {
    const viaWhole = await readDump(memFile('x.heap.gz', bytes), { inflate: nodeInflater });
    const viaStream = await readDump(memFile('x.heap.gz', bytes), { inflate: streaming });
    expect(viaWhole.gzipProblem).toBe(viaStream.gzipProblem);
    expect(viaWhole.records).toEqual(viaStream.records);
    expect(viaWhole.info).toEqual(viaStream.info);
  });

  it('gives the bytes of a good stream, and null for a cut, corrupt or too-big one', () => {
    const whole = nodeInflater.whole!;
    expect(Buffer.from(whole(bigGz, 64 << 20)!).equals(big)).toBe(true);
    expect(whole(gz.subarray(0, gz.length - 10), 64 << 20)).toBeNull();
    expect(whole(cases[5]![1], 64 << 20)).toBeNull();
    expect(whole(bigGz, big.length - 1)).toBeNull();
    expect(whole(bigGz, big.length)).not.toBeNull();
  });

  it('past the inflate limit, the limit problem as streaming gives it', async () => {
    // a header and one record over and over: 40 MB that gzip to ~100 KB, past the 16 MiB a small file may inflate to
    const head = original.subarray(0, original.indexOf('\n@') + 1);
    const record = Buffer.from('@ 0x1 0x2\n  t*: 1: 8 [0: 0]\n');
    const bomb = gzipSync(Buffer.concat([head, Buffer.alloc((40 << 20) - ((40 << 20) % record.length), record)]));
    const r = await readDump(memFile('bomb.heap.gz', bomb), { inflate: nodeInflater });
    const s = await readDump(memFile('bomb.heap.gz', bomb), { inflate: streaming });
    expect(r.gzipProblem).toMatch(/stopped inflating/);
    expect(r.gzipProblem).toBe(s.gzipProblem);
  });
});
