// Every input a user drags in is read or named (issue 21): compressed dumps by content, pprof series, and one
// line for each file that is recognized but not read. Real files from the fixture scripts.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from '../formats/input-file.js';
import { loadJob } from './load-job.js';
import { parseMaps } from '../formats/proc-maps.js';

const ROOT = join(FIXTURES, '..');
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});
const file = (rel: string, as = rel) => mem(as, new Uint8Array(readFileSync(join(ROOT, rel))));

describe('inputs by content', () => {
  it("zstd, bzip2 and xz copies of a real dump total jeprof's figures for the original", async () => {
    const tsv = readFileSync(join(FIXTURES, 'references', 'jeprof-totals.tsv'), 'utf8');
    const [, space, objects] = /job\/exact\.21459\.20\.f\.heap\t(\d+)\t(\d+)/.exec(tsv)!.map(Number);
    for (const name of [
      'exact.21459.20.f.heap.zst',
      'exact.21459.20.f.heap.bz2',
      'exact.21459.20.f.heap.xz',
      'copied-off-the-node.bin',
    ]) {
      const job = await loadJob([file(`compressed/${name}`)]);
      expect([name, job.warnings]).toEqual([name, []]);
      const s = job.processes[0].snapshots[0];
      expect([name, s.live.bytes, s.live.objects]).toEqual([name, space, objects]);
    }
  });

  it("a folder of pprof profiles is one series, each snapshot's live bytes equal go tool pprof's inuse_space", async () => {
    const names = ['001', '002', '003'];
    const job = await loadJob(names.map((n) => file(`go/pprof-series/heap.${n}.pb.gz`)));
    expect(job.warnings).toEqual([]);
    expect(job.processes).toHaveLength(1);
    const p = job.processes[0];
    const inuse = names.map((n) => {
      const raw = readFileSync(join(ROOT, `go/pprof-series/heap.${n}.pprof-raw.txt`), 'utf8');
      return [...raw.matchAll(/^\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+):/gm)].reduce((s, m) => s + Number(m[4]), 0);
    });
    expect(p.snapshots.map((s) => s.live.bytes)).toEqual(inuse);
    expect(p.snapshots.every((s) => s.format === 'pprof' && s.hasAccumulated)).toBe(true);
    // times from the profiles, in order
    const t = p.snapshots.map((s) => s.mtimeMs!);
    expect(t[0]).toBeLessThan(t[1]);
    expect(t[1]).toBeLessThan(t[2]);
  });

  it('files recognized but not read are named in one line each, with what to do', async () => {
    const notEnabled = gzipSync('jemalloc profiling not enabled. Set MALLOC_CONF=prof:true before starting.\n');
    const job = await loadJob([
      file('heaptrack/heaptrack.grow.zst'),
      file('go/cpu.pb.gz'),
      mem('profile.pb.gz', new Uint8Array(notEnabled)),
      mem('x.7.0.i0.heap', new Uint8Array([0, 1, 2, 3, 0xff, 0xfe, 0x80, 0x81, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9])),
    ]);
    expect(job.processes).toEqual([]);
    const about = (f: string) => job.warnings.filter((w) => w.file === f).map((w) => w.message);
    expect(about('heaptrack/heaptrack.grow.zst')).toEqual([
      expect.stringMatching(/^\(zstd-compressed\) a heaptrack capture, not read by heaplens: .*heaptrack_print/),
    ]);
    expect(about('go/cpu.pb.gz')).toEqual([
      expect.stringMatching(/^skipped: a pprof CPU profile \(sample types samples\/count, cpu\/nanoseconds\)/),
    ]);
    expect(about('profile.pb.gz')).toEqual([
      '(gzip-compressed) not a heap profile; the file says: "jemalloc profiling not enabled. Set MALLOC_CONF=prof:true before starting."',
    ]);
    expect(about('x.7.0.i0.heap')).toEqual([
      'not a heap profile: unknown binary content (first bytes 00 01 02 03 ff fe 80 81 09 09 09 09 09 09 09 09)',
    ]);
  });
});

describe('frameless stacks', () => {
  it('one warning says the unwinder failed when most live bytes have no frames; not for a few', async () => {
    const dump = readFileSync(join(FIXTURES, 'job', 'exact.21459.20.f.heap'), 'utf8');
    // as a dump from an ARM build without frame pointers reads: every "@" line empty
    const arm = dump.replace(/^@ .*$/gm, '@');
    const job = await loadJob([mem('arm.1.0.f.heap', new TextEncoder().encode(arm))]);
    const w = job.warnings.filter((x) => /no frames/.test(x.message));
    expect(w).toHaveLength(1);
    expect(w[0].message).toMatch(/^100 % of the live bytes .*frame pointers on ARM or MIPS.*-fno-omit-frame-pointer$/);
    // the same dump with every stack cut after jemalloc's own frames (je_prof_backtrace … imalloc, the leading
    // frames in libjemalloc.so.2's mappings, as an unwinder that stops at the allocator's edge leaves them):
    // derived from the real dump's text, since a jemalloc whose unwinding fails that way is not easy to build here
    const maps = parseMaps(dump.split('MAPPED_LIBRARIES:\n')[1]).entries.filter((m) => /libjemalloc/.test(m.path));
    const inJemalloc = (a: string) => maps.some((m) => BigInt(a) >= m.start && BigInt(a) < m.end);
    let cut = 0;
    const own = dump.replace(/^@ (.*)$/gm, (_, frames: string) => {
      const kept = frames.split(' ');
      const n = kept.findIndex((a) => !inJemalloc(a));
      cut += n > 0 ? 1 : 0;
      return '@ ' + kept.slice(0, n).join(' ');
    });
    expect(cut).toBe((dump.match(/^@ /gm) ?? []).length);
    const j2 = await loadJob([mem('own.1.0.f.heap', new TextEncoder().encode(own))]);
    const w2 = j2.warnings.filter((x) => /could not unwind/.test(x.message));
    expect(w2.map((x) => x.file)).toEqual(['own.1.0.f.heap']);
    expect(w2[0].message).toMatch(
      /^100 % of the live bytes are in records whose only frames are the profiler's own \(jemalloc's prof_backtrace, imalloc…\): the profiler could not unwind the stacks\. Likely causes: .*ARM or MIPS.*What to set: .*--enable-prof-libunwind.*-fno-omit-frame-pointer$/,
    );
    // a real dump with one frameless record of four (25 % of its bytes): no warning
    const some = await loadJob([file('jemalloc/other/empty-backtrace.heap')]);
    expect(some.warnings.filter((x) => /no frames/.test(x.message))).toEqual([]);
  });
});
