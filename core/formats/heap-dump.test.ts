import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { framesText, HeapDumpParser, normalizeAddress, normalizeFramesText, type DumpRecord } from './heap-dump.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';

function parseBytes(bytes: Uint8Array, chunk = bytes.length) {
  const p = new HeapDumpParser();
  for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, Math.min(bytes.length, i + chunk)));
  const info = p.finish();
  return { info, records: p.records };
}

const enc = new TextEncoder();
const parseText = (s: string, chunk?: number) => parseBytes(enc.encode(s), chunk);

describe('heap_v2 (jemalloc 4.x–5.3)', () => {
  const exactFinal = readFileSync(fixturePath(findFixture('job', /^exact\.\d+\.20\.f\.heap$/)));

  it('reads every record, the header, thread names with spaces and the maps of a real 5.3 dump', () => {
    const { info, records } = parseBytes(exactFinal);
    expect(info.format).toBe('heap_v2');
    expect(info.sampling).toEqual({ kind: 'none' });
    expect(info.truncated).toBeNull();
    expect(info.fatal).toBeNull();
    expect(info.problems).toEqual([]);
    // leaky.c's worker thread names itself "worker one" (a name containing a space)
    expect(info.headerThreads.find((t) => t.uid === 1)?.name).toBe('worker one');
    // known pattern: 60 steps × 16,384 B kept by leak_steady; 16 × 65,536 B plateau; 100 × 8,192 B worker
    const live = records.map((r) => r.counts.liveBytes);
    expect(live).toContain(60 * 16384);
    expect(live).toContain(16 * 65536);
    expect(live).toContain(100 * 8192);
    // churn: everything freed, 60 steps × 8 × 40,960 B accumulated
    expect(records.some((r) => r.counts.liveBytes === 0 && r.counts.accumBytes === 60 * 8 * 40960)).toBe(true);
    expect(info.mapsText).toContain('/tmp/heaplens-lab/leaky');
    expect(info.mapsComplete).toBe(true);
    // the per-thread split of the worker's record
    const worker = records.find((r) => r.counts.liveBytes === 819200)!;
    expect(worker.threads).toEqual([
      { uid: 1, counts: { liveObjects: 100, liveBytes: 819200, accumObjects: 100, accumBytes: 819200 } },
    ]);
  });

  it('gives the same records whatever the chunk size (lines split across chunks)', () => {
    const whole = parseBytes(exactFinal);
    for (const chunk of [1, 7, 64, 4096]) {
      const split = parseBytes(exactFinal, chunk);
      expect(split.records).toEqual(whole.records);
      expect(split.info.mapsText).toBe(whole.info.mapsText);
    }
  });

  it('reads the period of a sampled dump', () => {
    const { info } = parseBytes(readFileSync(fixturePath(findFixture('job', /^sampled\.\d+\.0\.i0\.heap$/))));
    expect(info.sampling).toEqual({ kind: 'poisson', period: 16384 });
  });

  it('keeps an "@" line with no frames as a stack with no frames (jeprof drops it)', () => {
    const { records } = parseBytes(readFileSync(fixturePath('other/empty-backtrace.heap')));
    const empty = records.filter((r) => framesText(r.frameWords) === '');
    expect(empty).toHaveLength(1);
    expect(empty[0].counts).toEqual({ liveObjects: 8, liveBytes: 40960, accumObjects: 0, accumBytes: 0 });
  });

  it('accepts CRLF line ends', () => {
    const crlf = parseBytes(readFileSync(fixturePath('damaged/crlf.heap')));
    const lf = parseBytes(exactFinal);
    expect(crlf.records).toEqual(lf.records.map((r) => ({ ...r })));
    expect(crlf.info.truncated).toBeNull();
  });

  it('skips leading <jemalloc>: leak-report lines with a note, and reads the rest', () => {
    const { info, records } = parseBytes(readFileSync(fixturePath('damaged/leak-lines-prepended.heap')));
    expect(info.skippedLeadingLines).toBe(2);
    expect(info.problems[0]).toMatchObject({ line: 1, byteOffset: 0 });
    expect(records.length).toBe(parseBytes(exactFinal).records.length);
  });

  it('sums nothing twice and keeps per-thread lines that repeat a uid (after prof.reset)', () => {
    const { records } = parseText(
      'heap_v2/1\n  t*: 2: 20 [0: 0]\n@ 0x1 0x2\n  t*: 2: 20 [0: 0]\n  t0: 1: 10 [0: 0]\n  t0: 1: 10 [0: 0]\n',
    );
    expect(records[0].threads.map((t) => t.uid)).toEqual([0, 0]);
  });
});

describe('truncated and damaged files', () => {
  it('a dump cut in the stacks keeps the complete records and says where it ends', () => {
    const bytes = readFileSync(fixturePath('damaged/truncated-in-stacks.heap'));
    const { info, records } = parseBytes(bytes);
    // expected from the file itself: every "@" line but the last is followed by its complete t*: line; the last
    // one (the file ends in its frame list, no newline) is the cut record
    const text = bytes.toString('latin1');
    const ats = [...text.matchAll(/^@ /gm)].map((m) => m.index);
    const complete = [...text.matchAll(/^@ [^\n]*\n {2}t\*: (\d+): (\d+) /gm)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(text.endsWith('\n')).toBe(false);
    expect(complete.length).toBe(ats.length - 1);
    expect(records.map((r) => [r.counts.liveObjects, r.counts.liveBytes])).toEqual(complete);
    expect(info.truncated).not.toBeNull();
    expect(info.truncated!.byteOffset).toBe(ats[ats.length - 1]);
    expect(info.truncated!.line).toBe(text.slice(0, ats[ats.length - 1]).split('\n').length);
    // the cut lies after the last complete record
    expect(info.truncated!.line).toBeGreaterThan(Math.max(...records.map((r) => r.line)));
    expect(info.mapsText).toBeNull();
  });

  it('a dump cut in the maps keeps all records and the complete maps lines', () => {
    const full = parseBytes(readFileSync(fixturePath(findFixture('job', /^exact\.\d+\.20\.f\.heap$/))));
    const { info, records } = parseBytes(readFileSync(fixturePath('damaged/truncated-in-maps.heap')));
    expect(records).toEqual(full.records);
    expect(info.truncated?.reason).toMatch(/MAPPED_LIBRARIES/);
    expect(info.mapsComplete).toBe(false);
    expect(full.info.mapsText!.startsWith(info.mapsText!)).toBe(true);
  });

  it('a record whose count line is missing at the end is dropped and the file marked truncated', () => {
    const { info, records } = parseText('heap_v2/1\n  t*: 1: 8 [0: 0]\n@ 0x1\n  t*: 1: 8 [0: 0]\n@ 0x2 0x3\n');
    expect(records).toHaveLength(1);
    expect(info.truncated).toMatchObject({ line: 5 });
  });

  it('a cut exactly at a line end with no maps and a length of k × 65,535 is truncated', () => {
    const head = 'heap_v2/1\n  t*: 1: 8 [0: 0]\n';
    const rec = '@ 0x1\n  t*: 1: 8 [0: 0]\n';
    let body = head;
    while (body.length + rec.length <= 65535) body += rec;
    body = body.slice(0, body.length - 1).padEnd(65534, ' ') + '\n'; // pad the last line to the buffer size
    expect(body.length).toBe(65535);
    expect(parseText(body).info.truncated).not.toBeNull();
  });

  it('zero bytes: a fatal problem saying the file is empty, no crash', () => {
    const { info } = parseBytes(new Uint8Array(0));
    expect(info.fatal?.message).toMatch(/empty/);
  });

  it('not a profile: fatal, naming line 1', () => {
    const { info } = parseText('hello\nworld\n');
    expect(info.fatal).toMatchObject({ line: 1, byteOffset: 0 });
  });

  it('a malformed count line names its line and drops only that record', () => {
    const { info, records } = parseText(
      'heap_v2/1\n  t*: 2: 16 [0: 0]\n@ 0x1\n  t*: x: 8 [0: 0]\n@ 0x2\n  t*: 1: 8 [0: 0]\n',
    );
    expect(records.map((r) => framesText(r.frameWords))).toEqual(['0x2']);
    expect(info.problems.map((p) => p.line)).toEqual([4, 3]);
  });
});

describe('heap profile (jemalloc 3.x / gperftools)', () => {
  it('reads a real gperftools heap profile with exact counts and no trailing 0x0 frames', () => {
    const { info, records } = parseBytes(readFileSync(fixturePath('other/gperf.0001.heap')));
    expect(info.format).toBe('heap_profile');
    expect(info.sampling).toEqual({ kind: 'none' });
    expect(records.some((r) => r.counts.liveBytes === 16 * 65536)).toBe(true);
    expect(info.mapsText).not.toBeNull();
  });

  it('reads the jemalloc 3.6 layout: heap_v2 period in the header, signed counts (a negative record dropped), 0x0 terminator', () => {
    const text =
      'heap profile: 163: 1992448 [9337: 377759488] @ heap_v2/16384\n' +
      '109: 1339392 [109: 1339392] @ 0x7f6b936980ae 0x55de02516276 0x0\n' +
      '-1: -10 [9174: 375767040] @ 0x7f6b936980ae 0x55de025162d1 0x0\n\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1 /bin/x\n';
    const { info, records } = parseText(text);
    expect(info.sampling).toEqual({ kind: 'poisson', period: 16384 });
    expect(info.header).toEqual({ liveObjects: 163, liveBytes: 1992448, accumObjects: 9337, accumBytes: 377759488 });
    // 3.x prints live counts signed, but a record's sum over threads cannot be below zero: damage, not data
    expect(records.map((r) => framesText(r.frameWords))).toEqual(['0x7f6b936980ae 0x55de02516276']);
    expect(info.problems).toEqual([
      { line: 3, byteOffset: expect.any(Number), message: expect.stringMatching(/record dropped: negative count -1/) },
    ]);
  });

  it('reads "heap/N" as jeprof\'s version-1 sampling at half the period', () => {
    expect(parseText('heap profile: 1: 8 [1: 8] @ heap/1024\n').info.sampling).toEqual({ kind: 'v1', period: 512 });
  });
});

describe('address text', () => {
  it('reads zero-padded, upper-case and 64-bit addresses into the same words', () => {
    const { records, info } = parseText(
      'heap_v2/1\n  t*: 1: 8 [0: 0]\n@ 0x00007F12 0x7079100000000010 0xFFFFFFFFFF600000\n  t*: 1: 8 [0: 0]\n@ 0x1 zz\n  t*: 1: 8 [0: 0]\n',
    );
    expect(framesText(records[0].frameWords)).toBe('0x7f12 0x7079100000000010 0xffffffffff600000');
    expect(records).toHaveLength(1);
    expect(info.problems[0]).toMatchObject({ line: 5, message: expect.stringMatching(/malformed address/) });
  });

  it('normalizes padding and case so one address interns once', () => {
    expect(normalizeAddress('0x00007F12')).toBe('0x7f12');
    expect(normalizeAddress('0x0')).toBe('0x0');
    expect(normalizeFramesText('  0x0000ABCD\t0x10  ')).toBe('0xabcd 0x10');
    expect(normalizeFramesText('0x7f12 0x10')).toBe('0x7f12 0x10');
  });
});

// Keep the record type in use for readers of this test.
export type { DumpRecord };
