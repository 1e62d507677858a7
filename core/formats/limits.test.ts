// Hostile and damaged input (issue 13, items 1–3): every case comes from a review that reproduced a wrong
// total, a hang or a blow-up. Each asserts the bound holds and the warning names the line.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HeapDumpParser } from './heap-dump.js';
import { READ_CHUNK, readDump } from './read-dump.js';
import type { InputFile } from './input-file.js';
import { MAX_FRAMES_PER_STACK, MAX_LINE_BYTES } from './limits.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';
import { loadJob } from '../load/load-job.js';

const enc = new TextEncoder();
function parse(text: string | Uint8Array, chunk = 1 << 20) {
  const bytes = typeof text === 'string' ? enc.encode(text) : text;
  const p = new HeapDumpParser();
  for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, Math.min(bytes.length, i + chunk)));
  return { info: p.finish(), records: p.records };
}
function memFile(path: string, bytes: Uint8Array): InputFile {
  return { path, size: bytes.length, mtimeMs: null, read: async (o, l) => bytes.subarray(o, o + l) };
}
const SAMPLED_HEAD = 'heap_v2/524288\n  t*: 1: 4096 [0: 0]\n';
const GOOD = '@ 0x10 0x20\n  t*: 1: 4096 [0: 0]\n';

/** Loads dumps through the whole flow and returns every snapshot total, which must all be finite sizes. */
async function totals(files: Record<string, string | Uint8Array>) {
  const job = await loadJob(
    Object.entries(files).map(([p, t]) => memFile(p, typeof t === 'string' ? enc.encode(t) : t)),
  );
  const values = job.processes.flatMap((p) =>
    p.snapshots.flatMap((s) => [
      s.live.bytes,
      s.live.objects,
      s.accumulated.bytes,
      s.accumulated.objects,
      ...s.liveBytes,
      ...s.liveObjects,
    ]),
  );
  return { job, values };
}

describe('range checks (item 1)', () => {
  const cases: [string, string, RegExp][] = [
    ['objects without bytes in a sampled record', '@ 0x1\n  t*: 3: 0 [0: 0]\n', /3 live objects with 0 bytes/],
    ['bytes without objects', '@ 0x1\n  t*: 0: 4096 [0: 0]\n', /0 live objects with 4096 bytes/],
    ['a negative count (a "-" jemalloc never prints in heap_v2)', '@ 0x1\n  t*: -2: -8192 [0: 0]\n', /negative count/],
    ['a count of 2^64', '@ 0x1\n  t*: 18446744073709551616: 18446744073709551616 [0: 0]\n', /above 2\^53/],
    ['a count of 400 digits', `@ 0x1\n  t*: 1: ${'9'.repeat(400)} [0: 0]\n`, /over 300 digits/],
    // issue 24 item 9: unbiased, 13 objects in 1 byte became 208 KiB in 2.8 M objects
    ['more objects than bytes', '@ 0x1\n  t*: 13: 1 [0: 0]\n', /13 live objects in 1 bytes/],
    ['more allocated objects than bytes', '@ 0x1\n  t*: 1: 4096 [40: 8]\n', /40 allocated objects in 8 bytes/],
    ['a bad per-thread split', '@ 0x1\n  t*: 1: 4096 [0: 0]\n  t0: 1: -4096 [0: 0]\n', /negative count/],
  ];
  for (const [what, record, message] of cases) {
    it(`drops ${what} with a warning naming the line; totals stay finite`, async () => {
      const text = SAMPLED_HEAD + GOOD + record + GOOD;
      const { info, records } = parse(text);
      expect(records).toHaveLength(2);
      expect(info.problems).toEqual([expect.objectContaining({ line: 5, message: expect.stringMatching(message) })]);
      const { job, values } = await totals({ 'x.1.0.m0.heap': text });
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) expect(Number.isFinite(v) && v >= 0).toBe(true);
      // the two good records, unbiased: 2 × 4096 / (1 − e^(−4096/524288))
      expect(job.processes[0].snapshots[0].live.bytes).toBeCloseTo((2 * 4096) / -Math.expm1(-4096 / 524288), 3);
      expect(job.warnings).toContainEqual(
        expect.objectContaining({ file: 'x.1.0.m0.heap', line: 5, message: expect.stringMatching(message) }),
      );
    });
  }

  it('a period of 10^23 skips the file with a warning; the other dump of the folder loads', async () => {
    const bad = 'heap_v2/100000000000000000000000\n  t*: 1: 4096 [0: 0]\n' + GOOD;
    expect(parse(bad).info.fatal?.message).toMatch(/above 2\^63/);
    const { job, values } = await totals({ 'x.1.0.m0.heap': bad, 'x.1.1.m1.heap': SAMPLED_HEAD + GOOD });
    expect(job.processes[0].snapshots.map((s) => s.file)).toEqual(['x.1.1.m1.heap']);
    expect(job.warnings).toContainEqual(
      expect.objectContaining({ file: 'x.1.0.m0.heap', line: 1, message: expect.stringMatching(/above 2\^63/) }),
    );
    for (const v of values) expect(Number.isFinite(v)).toBe(true);
  });

  it('the largest period jemalloc can write (2^63) gives finite totals', async () => {
    const { job, values } = await totals({
      'x.1.0.m0.heap': `heap_v2/${2n ** 63n}\n  t*: 1: 8 [0: 0]\n@ 0x1\n  t*: 1: 8 [0: 0]\n`,
    });
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(job.processes[0].snapshots[0].live.bytes).toBeGreaterThan(2 ** 59);
  });

  it('absurd legacy header totals are ignored with a warning, records kept', () => {
    const { info, records } = parse(
      `heap profile: 1: ${'9'.repeat(400)} [0: 0] @ heapprofile\n1: 8 [0: 0] @ 0x1 0x0\n`,
    );
    expect(info.header).toBeNull();
    expect(info.problems[0]).toMatchObject({ line: 1, message: expect.stringMatching(/header totals ignored/) });
    expect(records).toHaveLength(1);
  });
});

describe('no hangs (item 2)', () => {
  it('a 64 KB gzip of zeros finishes fast with a warning', async () => {
    const zeros = gzipSync(new Uint8Array(64 * 1024 * 1024), { level: 9 });
    expect(zeros.length).toBeLessThan(100 * 1024);
    const t0 = performance.now();
    const r = await readDump(memFile('zeros.heap.gz', zeros));
    const ms = performance.now() - t0;
    expect(r.info.fatal?.message).toMatch(/first line is a line longer than/);
    expect(ms).toBeLessThan(5000); // was over a minute; now ~1 MiB is inflated before the header check gives up
  });

  it('a line without end after a valid header is capped: kept records, a warning, the file marked truncated', () => {
    const text = enc.encode(SAMPLED_HEAD + GOOD + '@ ' + '0x1 '.repeat(MAX_LINE_BYTES / 2));
    const { info, records } = parse(text, 64 * 1024);
    expect(records).toHaveLength(1);
    expect(info.truncated?.reason).toMatch(/longer than/);
  });

  it('an over-long line in the middle is skipped with its record and the next record is read', () => {
    const text = SAMPLED_HEAD + GOOD + '@ ' + '0x1 '.repeat(MAX_LINE_BYTES / 3) + '\n  t*: 1: 4096 [0: 0]\n' + GOOD;
    for (const chunk of [4096, 1 << 20, 1 << 24]) {
      const { info, records } = parse(text, chunk);
      expect(records).toHaveLength(2);
      expect(info.problems).toEqual([
        expect.objectContaining({ line: 5, message: expect.stringMatching(/longer than .* skipped/) }),
      ]);
    }
  });

  it('carrying a partial line is linear: 32 MB without a newline in 4 KB chunks after a header', () => {
    const big = new Uint8Array(32 * 1024 * 1024).fill(0x41);
    big.set(enc.encode(SAMPLED_HEAD + '@ '));
    const t0 = performance.now();
    const { info } = parse(big, 4096);
    expect(info.truncated).not.toBeNull();
    expect(performance.now() - t0).toBeLessThan(5000); // quadratic copying took minutes
  });

  it('a gzip that inflates past its ratio bound stops with a warning and keeps the records before', async () => {
    // a valid dump followed by 40 MB of blank lines: ~40 KB compressed, past the 16 MiB floor of the bound
    const text = new Uint8Array(40 * 1024 * 1024).fill(10);
    text.set(enc.encode(SAMPLED_HEAD + GOOD + GOOD));
    const gz = gzipSync(text, { level: 9 });
    const r = await readDump(memFile('bomb.heap.gz', gz));
    expect(r.gzipProblem).toMatch(/stopped inflating after \d+ bytes from \d+ compressed/);
    expect(r.info.recordCount).toBe(2);
  });

  it('Cancel stops a long read within a second', async () => {
    // 4 GB of blank lines made on demand (minutes of parsing), cancelled after 50 ms
    const line = new Uint8Array(READ_CHUNK).fill(10);
    const first = line.slice();
    first.set(enc.encode(SAMPLED_HEAD + GOOD));
    const huge: InputFile = {
      path: 'huge.heap',
      size: 4 * 1024 ** 3,
      mtimeMs: null,
      read: async (o, l) => (o === 0 ? first : line).subarray(0, l),
    };
    const ac = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      ac.abort();
    }, 50);
    await expect(readDump(huge, { signal: ac.signal })).rejects.toThrow();
    // from the press of Cancel to the stop (a loaded machine shares its cores with other test files)
    expect(abortedAt).toBeGreaterThan(0);
    expect(performance.now() - abortedAt).toBeLessThan(1000);
  });
});

describe('frames per stack (item 3)', () => {
  it(`a stack of 100,000 frames is cut to ${MAX_FRAMES_PER_STACK} with a warning and parsing goes on`, () => {
    const frames = Array.from({ length: 100000 }, (_, k) => '0x' + (k + 1).toString(16)).join(' ');
    const { info, records } = parse(SAMPLED_HEAD + `@ ${frames}\n  t*: 1: 4096 [0: 0]\n` + GOOD);
    expect(records).toHaveLength(2);
    expect(records[0].frameWords.length / 2).toBe(MAX_FRAMES_PER_STACK);
    expect(records[0].frameWords[1]).toBe(1); // leaf first
    expect(info.problems).toEqual([
      expect.objectContaining({ line: 3, message: expect.stringMatching(/100000 frames cut/) }),
    ]);
  });

  it('every real fixture dump passes the checks untouched (no false alarms)', () => {
    const f = readFileSync(fixturePath(findFixture('job', /^sampled\.\d+\.23\.i23\.heap$/)));
    expect(parse(f).info.problems).toEqual([]);
  });
});

describe('many bad records', () => {
  it('past the 50 listed, the rest are counted in one warning, not dropped silently', async () => {
    const bad = '@ 0x1\n  t*: -1: -8 [0: 0]\n'.repeat(80);
    const job = await loadJob([memFile('x.1.0.m0.heap', enc.encode(SAMPLED_HEAD + GOOD + bad))]);
    expect(job.warnings.filter((w) => /record dropped/.test(w.message))).toHaveLength(50);
    expect(job.warnings).toContainEqual(
      expect.objectContaining({ file: 'x.1.0.m0.heap', message: expect.stringMatching(/^30 more problems/) }),
    );
  });
});
