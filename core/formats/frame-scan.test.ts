import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { scanFrameWords } from './frame-scan.js';

/** The simple reading: split on blanks, each token an optional 0x and hex digits, its value by BigInt. */
function reference(text: string): bigint[] | null {
  const out: bigint[] = [];
  for (const t of text.split(/[ \t]+/)) {
    if (t === '') continue;
    const m = /^(?:0[xX])?([0-9a-fA-F]+)$/.exec(t);
    if (!m) return null;
    const v = BigInt('0x' + m[1]);
    if (v >= 1n << 64n) return null;
    out.push(v);
  }
  return out;
}

const out = new Uint32Array(2 * 1024);
function scan(text: string, cap = 1024): bigint[] | null {
  const b = new TextEncoder().encode(text);
  const n = scanFrameWords(b, 0, b.length, out, cap);
  if (n < 0) return null;
  const vals: bigint[] = [];
  for (let k = 0; k < Math.min(n, cap); k++) vals.push((BigInt(out[2 * k]) << 32n) | BigInt(out[2 * k + 1]));
  return vals;
}

/** The backtraces ('@' lines, or 3.x "… @ 0x…" records) of every real dump under a fixtures folder. */
function backtraces(dir: string): string[] {
  const lines: string[] = [];
  // (the first 40 dumps of a folder: the rest are the same program's stacks again)
  for (const f of readdirSync(dir)
    .filter((f) => /\.heap(\.gz)?$/.test(f))
    .sort()
    .slice(0, 40)) {
    const raw = readFileSync(join(dir, f));
    const text = (f.endsWith('.gz') ? gunzipSync(raw) : raw).toString('latin1');
    for (const line of text.split('\n')) {
      if (line.startsWith('@')) lines.push(line.slice(1));
      else if (/^\s*-?\d+: -?\d+ \[/.test(line) && line.includes('@')) lines.push(line.slice(line.indexOf('@') + 1));
    }
  }
  return lines;
}

describe('scanFrameWords', () => {
  // real runs: the leaky C job (short native stacks), the Python job (native and 0x7079… frames merged), 3.x
  for (const dir of ['jemalloc/job', 'job/dumps', 'oom-job/dumps', 'jemalloc/other', 'python/py312']) {
    it(`reads every backtrace of fixtures/${dir} as the BigInt reading does`, () => {
      const lines = backtraces(join(import.meta.dirname, '../../fixtures', dir));
      expect(lines.length).toBeGreaterThan(dir === 'jemalloc/other' ? 2 : 50);
      let frames = 0;
      let python = 0;
      for (const line of lines) {
        const want = reference(line);
        expect(want).not.toBeNull();
        expect(scan(line)).toEqual(want);
        frames += want?.length ?? 0;
        python += want?.filter((v) => v >> 48n === 0x7079n).length ?? 0;
      }
      expect(frames).toBeGreaterThan(lines.length);
      if (dir === 'job/dumps') expect(python).toBeGreaterThan(frames / 10);
    });
  }

  it('agrees with the reference on every width, case, padding, blank and bad token', () => {
    const cases = [
      '',
      '   ',
      '0x0',
      '0x1 0x2 0x3 0x4 0x5 0x6',
      '0x7f7766aa2630',
      '0x7f7766aa2630 0x7079100000000170\t0x55fbb5ef2081',
      '7f7766aa2630 0X7079100000000170',
      '0x7F7766AA2630 0xABCDEF0123456789',
      '0xffffffffffffffff',
      '0x00000000000000000000007f7766aa2630',
      '0x10000000000000000',
      '0x0000000000000000ffffffffffffffff',
      '0x7f7766aa263 0x7f7766aa26301 0x7079100000000170a',
      '0x7f7766aa263g',
      '0x7f7766aa2630g',
      '0x7079100000000170g 0x1',
      '0x',
      '0x 0x1',
      '0x7f7766aa2630,0x1',
      '0x1 0x2 0x3 0x4 ',
      '0x12345678 0x123456789abc 0x123 0x0000aaaaaaaaaaaa',
      'x12',
      '0xabcdefabcdef-',
    ];
    for (const c of cases) expect(scan(c), c).toEqual(reference(c));
  });

  it('counts frames past the cap without storing them', () => {
    const b = new TextEncoder().encode('0x1 0x2 0x3 0x4 0x5');
    const words = new Uint32Array(4).fill(7);
    expect(scanFrameWords(b, 0, b.length, words, 2)).toBe(5);
    expect([...words]).toEqual([0, 1, 0, 2]);
  });

  it('reads only the range it is given', () => {
    const b = new TextEncoder().encode('@ 0x7f7766aa2630 0x7079100000000170\n  t*: 1: 2 [0: 0]');
    const nl = b.indexOf(10);
    const words = new Uint32Array(8);
    expect(scanFrameWords(b, 1, nl, words, 4)).toBe(2);
    expect([...words.subarray(0, 4)]).toEqual([0x7f77, 0x66aa2630, 0x70791000, 0x00000170]);
  });
});
