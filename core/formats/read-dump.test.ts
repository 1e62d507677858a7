import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readDump } from './read-dump.js';
import type { InputFile } from './input-file.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';

function memFile(path: string, bytes: Uint8Array): InputFile {
  return { path, size: bytes.length, mtimeMs: null, read: async (o, l) => bytes.subarray(o, o + l) };
}

const original = readFileSync(fixturePath(findFixture('job', /^sampled\.\d+\.23\.i23\.heap$/)));

describe('readDump', () => {
  it('detects gzip by magic bytes, whatever the name, and reads the same records in small chunks', async () => {
    const plain = await readDump(memFile('a.heap', original));
    const gz = await readDump(memFile('renamed.heap', gzipSync(original)), { chunkSize: 333 });
    expect(gz.gzip).toBe(true);
    expect(gz.gzipProblem).toBeNull();
    expect(gz.records).toEqual(plain.records);
    expect(gz.info.mapsText).toBe(plain.info.mapsText);
  });

  it('a gzip copy cut short keeps what was inflated and says the stream ended early', async () => {
    const gz = gzipSync(original);
    const r = await readDump(memFile('cut.heap.gz', gz.subarray(0, Math.floor(gz.length * 0.6))));
    expect(r.gzipProblem).toMatch(/ends early/);
    expect(r.info.truncated).not.toBeNull();
    // what was kept is exactly the records the inflated prefix holds whole: the plain parse of that prefix
    const prefix = Buffer.from(original.subarray(0, r.info.truncated!.byteOffset));
    const whole = [...prefix.toString('latin1').matchAll(/^@ /gm)].length;
    expect(whole).toBeGreaterThan(0);
    expect(r.info.recordCount).toBe(whole);
    expect(r.records).toEqual((await readDump(memFile('a.heap', original))).records.slice(0, whole));
  });

  it('reports bytes read and stops when cancelled', async () => {
    const seen: number[] = [];
    await readDump(memFile('a.heap', original), { chunkSize: 1000, onBytes: (n) => seen.push(n) });
    expect(seen[seen.length - 1]).toBe(original.length);
    const ac = new AbortController();
    ac.abort();
    await expect(readDump(memFile('a.heap', original), { signal: ac.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
