// Format detection by content, on real files of each format (made by the scripts in fixtures/).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import { hexHead, looksLikePprof, refusal, sniff, SNIFF_BYTES } from './sniff.js';

const ROOT = join(FIXTURES, '..');
const head = (path: string) => new Uint8Array(readFileSync(join(ROOT, path))).subarray(0, SNIFF_BYTES);
const text = (s: string) => new TextEncoder().encode(s);

describe('sniff', () => {
  it('tells each real file by its content', () => {
    const jemalloc = readdirSync(join(FIXTURES, 'job')).find((f) => f.endsWith('.heap'));
    expect(jemalloc).toBeDefined();
    const cases: [string, string][] = [
      [`jemalloc/job/${jemalloc}`, 'jemalloc'],
      ['go/go-heap.prof', 'jemalloc'],
      ['go/pprof-series/heap.001.pb.gz', 'gzip'],
      ['massif/massif.out.grow', 'massif'],
      ['massif/massif.out.grow.gz', 'gzip'],
      ['massif/massif.out.grow.zst', 'zstd'],
      ['massif/massif.out.grow.bz2', 'bzip2'],
      ['massif/massif.out.grow.xz', 'xz'],
      ['heaptrack/heaptrack.grow.zst', 'zstd'],
    ];
    for (const [path, name] of cases) expect([path, sniff(head(path)).entry?.name]).toEqual([path, name]);
  });

  it('32 blank lines are told at once (the old pattern backtracked 2^n: 30 took 0.7 s, 64 KiB never ended)', () => {
    const t0 = performance.now();
    expect(sniff(text('\n'.repeat(32))).entry?.name).not.toBe('jemalloc');
    expect(performance.now() - t0).toBeLessThan(100);
  });

  it('a head of blank lines is told in linear time; blank lines before a jemalloc header are allowed', () => {
    for (const unit of ['\n', ' \n', '\r\n', ' \t\n'])
      for (const tail of ['', 'x', 'heap_v2/524288\n']) {
        const h = text(unit.repeat(Math.floor(SNIFF_BYTES / unit.length) - 20) + tail);
        const t0 = performance.now();
        const name = sniff(h.subarray(0, SNIFF_BYTES)).entry?.name;
        // was exponential: 64 KiB of newlines never finished
        expect(performance.now() - t0).toBeLessThan(500);
        expect(name === 'jemalloc').toBe(tail.startsWith('heap_v2'));
      }
  });

  it('names formats it does not read, with what to do', () => {
    const heaptrack = text('v 10400 3\nX ./grow\nI 1000 5e2910\n');
    expect(sniff(heaptrack).entry?.name).toBe('heaptrack');
    expect(refusal(sniff(heaptrack), heaptrack)).toMatch(/heaptrack capture.*heaptrack_print/);
    const dhat = text('{"dhatFileVersion":2,"mode":"heap","verb":"Allocated"');
    expect(refusal(sniff(dhat), dhat)).toMatch(/DHAT.*dh_view/);
    const pickle = new Uint8Array([0x80, 0x04, 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0x94]);
    // read now (core/formats/torch-snapshot.ts): told by content, no refusal
    expect(sniff(pickle).entry?.name).toBe('pytorch-snapshot');
    expect(refusal(sniff(pickle), pickle)).toBeNull();
    const memleak = text(
      'Attaching to pid 4242, Ctrl+C to quit.\n[20:14:03] Top 10 stacks with outstanding allocations:\n',
    );
    expect(sniff(memleak).entry?.name).toBe('memleak');
    const deep = text('heap profile: DUMP_DEEP_6\nMMAP_LIST:\n');
    expect(sniff(deep).entry?.name).toBe('chromium-deep');
    const heapz = text('--- heapz 1 ---\nformat = java\n');
    expect(refusal(sniff(heapz), heapz)).toMatch(/Java heap profile.*go tool pprof -proto/);
  });

  it('a text file explains itself by its first line; binary content is shown as at most 16 bytes of hex', () => {
    const msg = text('\njemalloc profiling not enabled. Set MALLOC_CONF=prof:true before starting.\n');
    expect(refusal(sniff(msg), msg)).toBe(
      'not a heap profile; the file says: "jemalloc profiling not enabled. Set MALLOC_CONF=prof:true before starting."',
    );
    const bin = new Uint8Array(40).map((_, i) => (i * 37) & 0xff);
    bin[0] = 0;
    expect(sniff(bin).kind).toBe('binary');
    expect(refusal(sniff(bin), bin)).toBe(`not a heap profile: unknown binary content (first bytes ${hexHead(bin)})`);
    expect(hexHead(bin).split(' ')).toHaveLength(16);
  });

  it('pprof by its protobuf fields; other protobuf-like bytes are not pprof', () => {
    // sample_type {type: 1, unit: 2}, string_table "", "space", "bytes"
    const p = new Uint8Array([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x05, ...text('space')]);
    expect(looksLikePprof(p)).toBe(true);
    expect(looksLikePprof(text('hello world'))).toBe(false);
    expect(looksLikePprof(new Uint8Array([0x0a, 0x7f, 0x41]))).toBe(false);
    // "j" is field 13's tag: a text that starts with it is still text
    const t = text('jemalloc profiling not enabled.\n');
    expect(sniff(t).kind).toBe('text');
  });
});
