// Issue 46 S5: decompression bombs built from the codecs' structure, on the fly, decoded in a child process
// (tools/fuzz/decode-peak.ts) whose peak resident memory is measured. Before the fix a 65 KB zstd of RLE blocks
// reached 2.16 GB and a bzip2 of a gigabyte of newlines 1.2 GB, though the warning said 16.8 MB, and bzip2 then
// kept nothing ("empty file"). The bounds: memory grows by less than a few times the limit, what came out up
// to the limit is kept, and the message names the limit.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inflateLimit, MAX_ZSTD_WINDOW } from './limits.js';
import type { DecodePeak } from '../../tools/fuzz/decode-peak.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'heaplens-bombs-'));
const MB = 1024 * 1024;

/** Decodes `bytes` in a child process; its figures. */
function decodePeak(name: string, bytes: Uint8Array): DecodePeak {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'tools/fuzz/decode-peak.ts'), path], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const r = JSON.parse(out.trim().split('\n').pop()!) as DecodePeak;
  console.log(
    `${name}: ${bytes.length} bytes → ${r.out} out, peak RSS +${(r.peakGrowth / MB).toFixed(1)} MB, ${r.ms} ms: ${r.problem}`,
  );
  return r;
}

/**
 * A zstd frame (RFC 8878) without content size whose window descriptor is `wd`, holding `blocks` RLE blocks of
 * `size` bytes of `byte` each: 4 bytes per block.
 */
export function rleZstd(wd: number, blocks: number, size = 128 * 1024, byte = 0x0a): Uint8Array {
  const b = new Uint8Array(6 + blocks * 4);
  b.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, wd]);
  for (let i = 0; i < blocks; i++) {
    const h = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (size << 3);
    b.set([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, byte], 6 + i * 4);
  }
  return b;
}

/** The window descriptor of 2^(10+e) × (1 + m/8) bytes. */
const wd = (e: number, m = 0) => (e << 3) | m;

describe('decompression bombs: memory bounded inside each decoder step', () => {
  it('zstd: 16,384 RLE blocks (2 GiB) in 64 KB with an 8 MiB window stop at the limit, memory ~ the limit', () => {
    const bomb = rleZstd(wd(13), 16384);
    const r = decodePeak('rle-8m.zst', bomb);
    const limit = inflateLimit(bomb.length);
    expect(r.problem).toMatch(new RegExp(`stopped decompressing \\(zstd\\) at the limit of ${limit} bytes`));
    expect(r.out).toBe(limit);
    // the window (8 MiB), the limit's worth of chunks held by no one, a step's blocks: not gigabytes
    expect(r.peakGrowth).toBeLessThan(4 * limit + 8 * MB);
  }, 150_000);

  it('zstd: a frame asking for a 1.9 GiB window is refused at its header, naming the limit', () => {
    const r = decodePeak('rle-huge.zst', rleZstd(wd(20, 7), 16384));
    expect(r.problem).toBe(
      `zstd stream, at compressed byte 0: a zstd frame asks for a 2013265920-byte window, over the limit of ${MAX_ZSTD_WINDOW} bytes (zstd's own default; the file was written with --long or --ultra, or is damaged)`,
    );
    expect(r.out).toBe(0);
    expect(r.peakGrowth).toBeLessThan(32 * MB);
  }, 150_000);

  it('zstd: an RLE block longer than the format allows (2 MiB from 4 bytes) is refused with its offset', () => {
    const blocks = rleZstd(wd(13), 3);
    const big = (2 * MB - 1) << 3;
    const h = (1 << 1) | big;
    blocks.set([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff], 6 + 4);
    const r = decodePeak('rle-long-block.zst', blocks);
    expect(r.problem).toBe(
      `zstd stream, at compressed byte 10: a zstd block of ${2 * MB - 1} bytes, over the format's maximum of ${128 * 1024}`,
    );
    // the block before it, when the decoder had taken it (fzstd waits for 18 bytes before a frame's first block)
    expect(r.out).toBeLessThanOrEqual(128 * 1024);
  }, 150_000);

  it('bzip2: a gigabyte of newlines in 1.7 KB stops at the limit keeping the bytes before it, memory ~ the limit', () => {
    let one: Uint8Array;
    try {
      // one block of runs: bzip2's first run-length step holds 45.9 MB of one byte in 900 kB
      one = new Uint8Array(
        execFileSync('sh', ['-c', `head -c 45900000 /dev/zero | tr '\\0' '\\n' | bzip2 -9 -c`], { maxBuffer: MB }),
      );
    } catch {
      console.warn('decompress-memory.test: bzip2 not installed; the bzip2 bomb is not tried');
      return;
    }
    // 24 concatenated streams (bzip2 -d reads them as one file): 1.1 GB
    const bomb = new Uint8Array(one.length * 24);
    for (let i = 0; i < 24; i++) bomb.set(one, i * one.length);
    const r = decodePeak('newlines.bz2', bomb);
    const limit = inflateLimit(bomb.length);
    expect(r.problem).toMatch(new RegExp(`stopped decompressing \\(bzip2\\) at the limit of ${limit} bytes`));
    expect(r.out).toBe(limit);
    expect(r.peakGrowth).toBeLessThan(4 * limit + 8 * MB);
  }, 150_000);
});
