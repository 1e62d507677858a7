// Issue 24 items 12 and 16: crafted reports against the unpacker (job-unpack.ts), which the report page and the
// app's "open a report" both run (the worker's reopenReport). Each case of the review is rebuilt here from a
// real report of the fixture job: every one is refused as "damaged: <where>: <what>" before a model is built,
// and the time and peak memory each takes are printed (the review measured 7–18 s and 1.2–2.2 GB).
import { constants as zlibConstants, createDeflate, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { buildReport } from './build-report.js';
import type { PackedJob } from './job-pack.js';
import { readPayload, REPORT_LIMITS, unpackJob } from './job-unpack.js';
import { ReportError } from './errors.js';

/** header JSON + columns → the payload's raw bytes (job-pack.ts's layout) */
function raw(header: unknown, cols: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const pad = (4 - ((4 + json.length) % 4)) % 4;
  const out = new Uint8Array(4 + json.length + pad + cols.length);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  out.set(cols, 4 + json.length + pad);
  return out;
}
const pack = (header: unknown, cols: Uint8Array, level = 9): Uint8Array =>
  new Uint8Array(deflateSync(raw(header, cols), { level }));

/** Refused as damaged, naming `where`; prints what it cost. */
function refused(what: string, payload: Uint8Array, where: RegExp): void {
  const rss0 = process.resourceUsage().maxRSS;
  const t0 = performance.now();
  let err: unknown = null;
  try {
    unpackJob(payload);
  } catch (e) {
    err = e;
  }
  const ms = performance.now() - t0;
  const peakMb = (process.resourceUsage().maxRSS - rss0) / 1024;
  console.log(
    `${what}: ${(payload.length / 1024).toFixed(0)} KB → refused in ${ms.toFixed(0)} ms, peak RSS +${peakMb.toFixed(0)} MB: ${err instanceof Error ? err.message : String(err)}`,
  );
  expect(err).toBeInstanceOf(ReportError);
  expect((err as Error).message).toMatch(/^the report's data is damaged: /);
  expect((err as Error).message).toMatch(where);
  // a hang or a blow-up, not a timing: the review's cases took 7–18 s and 1.2–2.2 GB
  expect(ms).toBeLessThan(3000);
  expect(peakMb).toBeLessThan(400);
}

describe('crafted reports are refused before the model is built (issue 24 items 12, 16)', async () => {
  const job = await loadJob(fixtureFiles('job'));
  const { bytes } = buildReport(
    job.processes.map((proc) => ({ proc })),
    { topN: 5 },
  );
  const { job: header, cols } = readPayload(bytes);
  const good = (): PackedJob => structuredClone(header);

  it('a real report reads back, and inflates far less than the ratio allowed', () => {
    const { job: back } = unpackJob(bytes);
    expect(back.processes.length).toBe(job.processes.length);
    const inflated = raw(header, cols).length;
    console.log(
      `fixture report: ${bytes.length} B deflated, ${inflated} B inflated (${(inflated / bytes.length).toFixed(1)}×)`,
    );
    expect(inflated / bytes.length).toBeLessThan(REPORT_LIMITS.inflateRatio / 4);
  });

  it('10^7 empty stacks (the review: 668 KB, 14–18 s, 1.2 GB of heap)', () => {
    const n = 10_000_000;
    const h = good();
    const zeros = new Uint8Array((n + 1) * 4 + n * 4);
    h.stacks = {
      offsets: { o: 0, n: n + 1, t: 'u32' },
      frames: { o: 0, n: 0, t: 'u32' },
      allocatorDepth: { o: (n + 1) * 4, n, t: 'u32' },
    };
    // 80 MB of zeros deflated to 83 KB: the header's count stops it before any column is inflated
    refused(
      '10^7 stacks',
      pack(h, zeros),
      /stacks\.offsets: 10,000,001 entries, more than the 1,000,001 a report holds/,
    );
    // as many stacks in one process's list: likewise
    const h2 = good();
    h2.processes[0].stacks = { o: 0, n, t: 'u32' };
    refused(
      "10^7 stacks in a process's list",
      pack(h2, zeros),
      /processes\[0\]\.stacks: 10,000,000 entries, more than the 2,000,000 a report holds/,
    );
  });

  it('1 MB that would inflate to 1 GiB (the review: 1.9 MB, 7 s, 2.2 GB)', async () => {
    // A header, then 1,024 deflate blocks of 1 MiB of zeros each, made once: after a full flush deflate
    // forgets what came before, so every such block has the same bytes (the stream is never ended: the bounds
    // stop reading long before its end would be reached).
    const bombAfter = async (header: unknown): Promise<Uint8Array> => {
      const z = createDeflate({ level: 9 });
      const out: Buffer[] = [];
      z.on('data', (c: Buffer) => out.push(c));
      const flushed = async (b: Uint8Array): Promise<Buffer> => {
        z.write(b);
        await new Promise<void>((r) => z.flush(zlibConstants.Z_FULL_FLUSH, () => r()));
        return Buffer.concat(out.splice(0));
      };
      // null: no header, only a length prefix declaring 200 MB of it
      const prefix = new Uint8Array(4);
      new DataView(prefix.buffer).setUint32(0, 200 << 20, true);
      const head = await flushed(header === null ? prefix : raw(header, cols));
      const block = await flushed(new Uint8Array(1 << 20));
      z.destroy();
      const bomb = new Uint8Array(head.length + block.length * 1024);
      bomb.set(head);
      for (let i = 0; i < 1024; i++) bomb.set(block, head.length + i * block.length);
      return bomb;
    };
    refused(
      '1 GiB of zeros after a real header',
      await bombAfter(good()),
      /payload: more data than its header declares \([\d,]+ bytes\)/,
    );
    // a header declaring a column far past the others: refused from the header alone
    const far = good();
    far.processes[0].cellVar = { ...far.processes[0].cellVar, o: 2 ** 40 };
    refused(
      '1 GiB of zeros after a header declaring 1 TB',
      await bombAfter(far),
      /processes\[0\]\.cellVar: the column ends at byte 1,099,511,\d{3},\d{3}, past the [\d,]+ bytes all columns take/,
    );
    // no header, only its length: the ratio bound stops the zeros
    refused(
      '1 GiB of zeros as a 200 MB header',
      await bombAfter(null),
      /payload: it inflates past 3\d,\d{3},\d{3} bytes from 1,0\d\d,\d{3} \(at most 32× its size/,
    );
  });

  it('one stack of 5·10^6 frames (the review: breaks the page)', () => {
    const n = 5_000_000;
    const h = good();
    const c = new Uint8Array(8 + n * 4 + 4);
    new DataView(c.buffer).setUint32(4, n, true);
    h.stacks = {
      offsets: { o: 0, n: 2, t: 'u32' },
      frames: { o: 8, n, t: 'u32' },
      allocatorDepth: { o: 8 + n * 4, n: 1, t: 'u32' },
    };
    refused(
      '5·10^6 frames, stored',
      pack(h, c, 0),
      /stacks\.frames: 5,000,000 (entries, more than the 4,000,000 a report holds|frames for 1 stacks)/,
    );
  });

  it('NaN, −3e38 and Infinity cells (the review: ranked #1 at NaN B)', () => {
    for (const v of [NaN, -3e38, Infinity]) {
      const c = cols.slice();
      const col = header.processes[0].cellBytes as unknown as { o: number };
      new DataView(c.buffer).setFloat32(col.o, v, true);
      refused(`a cell of ${v}`, pack(header, c), /processes\[0\]\.cellBytes\[0\]: .* is not a size/);
    }
    const c = cols.slice();
    const col = header.processes[0].cellObjects as unknown as { o: number };
    new DataView(c.buffer).setFloat32(col.o, 1e30, true);
    refused('1e30 objects', pack(header, c), /processes\[0\]\.cellObjects\[0\]/);
  });

  it('fields of the wrong shape: a file that is an object, symbol entries, counts, ids, context', () => {
    const cases: [string, (h: PackedJob) => void, RegExp][] = [
      [
        'a snapshot file that is an object',
        (h) => ((h.processes[0].snapshots[0] as { file: unknown }).file = { x: 1 }),
        /processes\[0\]\.snapshots\[0\]\.file: expected a text, found an object/,
      ],
      [
        'a symbol entry that is a number',
        (h) => ((h.frames as { symbols: unknown }).symbols = [5]),
        /frames\.symbols\[0\]: expected an object/,
      ],
      [
        'a symbol frame without its fields',
        (h) =>
          ((h.frames as { symbols: unknown }).symbols = [
            {
              address: '0x1',
              frames: [7],
              status: 'symbolized',
              binary: null,
              module: null,
              modulePath: null,
              moduleOffset: null,
            },
          ]),
        /frames\.symbols\[0\]\.frames\[0\]: expected an object/,
      ],
      [
        'a negative total',
        (h) => (h.processes[0].snapshots[0].live = { bytes: -1e30, objects: 1 }),
        /processes\[0\]\.snapshots\[0\]\.live\.bytes: -1e\+30 is outside/,
      ],
      [
        'a NaN total (as JSON null)',
        (h) => ((h.processes[0].snapshots[0].live as { bytes: unknown }).bytes = null),
        /live\.bytes: expected a number, found null/,
      ],
      ['a pid of 1e30', (h) => (h.processes[0].pid = 1e30), /processes\[0\]\.pid: 1e\+30 is outside/],
      ['a base outside the snapshots', (h) => (h.processes[0].base = 99_999), /processes\[0\]\.base: base 99999/],
      [
        'an address given two frames in one process',
        (h) => (h.frames.addresses[1] = h.frames.addresses[0]),
        /processes\[0\]\.stacks\[0\]: two frames of address 0x[0-9a-f]+ \(frames 0 and 1\)/,
      ],
      [
        'a trigger the model does not know',
        (h) => ((h.processes[0].snapshots[0] as { trigger: unknown }).trigger = 'x'),
        /snapshots\[0\]\.trigger: expected one of/,
      ],
      [
        'a context RSS of 1e30',
        (h) =>
          (h.processes[0].snapshots[0].context = {
            ...(h.processes[0].snapshots[0].context ?? ({ version: 1, timeRealMs: 1.7e12, pid: 7 } as never)),
            rss: 1e30,
          }),
        /snapshots\[0\]\.context\.rss: 1e\+30 is outside/,
      ],
      [
        'a context dated 2286',
        (h) => (h.processes[0].snapshots[0].context = { version: 1, timeRealMs: 9.9e12, pid: 7 } as never),
        /context\.timeRealMs: 2283-\d\d-\d\d is more than a year in the future/,
      ],
      [
        'a warning whose file is a list',
        (h) => ((h.warnings as unknown[]) = [{ file: [], message: 'm' }]),
        /warnings\[0\]\.file: expected a text/,
      ],
    ];
    for (const [what, edit, where] of cases) {
      const h = good();
      edit(h);
      refused(what, pack(h, cols), where);
    }
    // a column's value: an allocator depth deeper than its stack
    const c = cols.slice();
    new DataView(c.buffer).setUint32(header.stacks.allocatorDepth.o, 5000, true);
    refused('allocator depth deeper than its stack', pack(header, c), /stacks\.allocatorDepth\[0\]: 5000 is outside/);
  });
});
