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
