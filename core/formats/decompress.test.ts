// Every codec on real files compressed by its own tool (fixtures/massif/make-massif-fixture.sh), a bomb in
// each codec (made here by the same tools), and cut-off streams.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from './input-file.js';
import { codecOf, DecodeProblem, decodedChunks, type Codec } from './decompress.js';
import { inflateLimit } from './limits.js';

const MASSIF = join(FIXTURES, '..', 'massif', 'massif.out.grow');
const plain = new Uint8Array(readFileSync(MASSIF));
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

async function decode(b: Uint8Array): Promise<{ bytes: Uint8Array; problem: string | null }> {
  const codec = codecOf(b);
  if (!codec) throw new Error('not compressed');
  const parts: Uint8Array[] = [];
  let problem: string | null = null;
  try {
    for await (const c of decodedChunks(mem('x', b), codec, { chunkSize: 997 })) parts.push(c);
  } catch (e) {
    if (!(e instanceof DecodeProblem)) throw e;
    problem = e.message;
  }
  const bytes = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) bytes.set(p, (o += p.length) - p.length);
  return { bytes, problem };
}

const tools: [Codec, string, string[]][] = [
  ['gzip', 'gz', ['gzip', '-c']],
  ['zstd', 'zst', ['zstd', '-q', '-c']],
  ['bzip2', 'bz2', ['bzip2', '-c']],
  ['xz', 'xz', ['xz', '-c']],
];

describe('decompress', () => {
  it('zstd: frames with and without checksums, a skippable frame between them, decode as one stream', async () => {
    const half = plain.length >> 1;
    const z = (b: Uint8Array, flags: string[]) =>
      new Uint8Array(execFileSync('zstd', ['-q', '-c', ...flags], { input: b, maxBuffer: 1 << 26 }));
    let a: Uint8Array, b: Uint8Array;
    try {
      a = z(plain.subarray(0, half), ['--check', '-19']);
      b = z(plain.subarray(half), ['--no-check', '-1']);
    } catch {
      console.warn('decompress.test: zstd not installed; concatenated frames not tried');
      return;
    }
    // a skippable frame (RFC 8878 §3.1.2): magic 0x184D2A5?, 4-byte length, that many bytes
    const skip = new Uint8Array([0x53, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]);
    const all = new Uint8Array(a.length + skip.length + b.length);
    all.set(a);
    all.set(skip, a.length);
    all.set(b, a.length + skip.length);
    const r = await decode(all);
    expect(r.problem).toBeNull();
    expect(Buffer.from(r.bytes).equals(Buffer.from(plain))).toBe(true);
  });

  for (const [codec, ext, cmd] of tools) {
    it(`${codec}: the tool's file decodes to the original bytes; a cut copy says where it ends`, async () => {
      const file = new Uint8Array(readFileSync(`${MASSIF}.${ext}`));
      expect(codecOf(file)).toBe(codec);
      const whole = await decode(file);
      expect(whole.problem).toBeNull();
      expect(Buffer.from(whole.bytes).equals(Buffer.from(plain))).toBe(true);
      const cut = await decode(file.subarray(0, Math.floor(file.length * 0.6)));
      expect(cut.problem).toMatch(new RegExp(`^${codec} (stream ends early|data is corrupt)`));
      expect(cut.bytes.length).toBeLessThan(plain.length);
    });

    it(`${codec}: a bomb stops at the bound, with a warning`, async () => {
      let bomb: Uint8Array;
      try {
        bomb = new Uint8Array(
          execFileSync('sh', ['-c', `head -c 40000000 /dev/zero | ${cmd.join(' ')}`], { maxBuffer: 1 << 26 }),
        );
      } catch {
        console.warn(`decompress.test: ${cmd[0]} not installed; the ${codec} bomb is not tried`);
        return;
      }
      const t = Date.now();
      const r = await decode(bomb);
      // the decode alone, not the tool's compression above
      expect(r.problem).toMatch(new RegExp(`^stopped decompressing \\(${codec}\\)`));
      expect(r.bytes.length).toBeLessThanOrEqual(inflateLimit(bomb.length));
      expect(r.bytes.length).toBeLessThan(40000000);
      expect(Date.now() - t).toBeLessThan(30000);
    }, 60000);
  }
});
