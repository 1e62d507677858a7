// valgrind massif output from a small C program (fixtures/massif/make-massif-fixture.sh), checked against
// ms_print's report of the same file (stored by the script) and the program's own arithmetic.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from './input-file.js';
import { MAX_MASSIF_BYTES, massifDefaultSnapshot, massifRecords, parseMassif } from './massif.js';
import { processName } from '../model/process-name.js';
import { snapshotByName } from '../model/snapshot-status.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { loadJob } from '../load/load-job.js';

const DIR = join(FIXTURES, '..', 'massif');
const text = readFileSync(join(DIR, 'massif.out.grow'), 'utf8');

/** ms_print's table of a file: n, time, total, useful-heap, extra-heap, stacks; and its detailed snapshots. */
function msPrintOf(name: string): { rows: number[][]; detailed: number[]; peak: number | null } {
  const out = readFileSync(join(DIR, name + '.ms_print.txt'), 'utf8');
  const rows = [...out.matchAll(/^\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$/gm)].map((m) =>
    m.slice(1).map((v) => Number(v.replace(/,/g, ''))),
  );
  const list = /Detailed snapshots: \[(.*)\]/.exec(out)![1];
  return {
    rows,
    detailed: list.split(',').map((x) => parseInt(x, 10)),
    peak: /(\d+) \(peak\)/.exec(list) ? Number(/(\d+) \(peak\)/.exec(list)![1]) : null,
  };
}
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

/** ms_print's table: n, time, total, useful-heap, extra-heap, stacks. */
const msPrint = [
  ...readFileSync(join(DIR, 'massif.out.grow.ms_print.txt'), 'utf8').matchAll(
    /^\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$/gm,
  ),
].map((m) => m.slice(1).map((v) => Number(v.replace(/,/g, ''))));

describe('massif reader', () => {
  it("every snapshot's heap, extra and stacks equal ms_print's; each tree's leaves sum to its heap", () => {
    const f = parseMassif(text);
    expect(f.problems).toEqual([]);
    expect(f.timeUnit).toBe('i');
    expect(f.cmd).toBe('./grow');
    const byIndex = new Map(msPrint.map((r) => [r[0], r]));
    expect(byIndex.size).toBe(f.snapshots.length);
    for (const s of f.snapshots) {
      const r = byIndex.get(s.index)!;
      expect([
        s.index,
        s.time,
        s.heapBytes + s.heapExtraBytes + s.stacksBytes,
        s.heapBytes,
        s.heapExtraBytes,
        s.stacksBytes,
      ]).toEqual(r);
      if (s.tree !== 'empty') expect(s.stacks.reduce((a, x) => a + x.bytes, 0)).toBe(s.heapBytes);
    }
    // the peak: 20 × 100,000 B from keep_large, 200 × 4,000 B from keep_small, the tiny ones below the threshold
    const peak = f.snapshots.find((s) => s.tree === 'peak')!;
    const fn = (st: (typeof peak.stacks)[number]) => st.frames[0].frames[0].function;
    expect(peak.stacks.find((st) => fn(st) === 'keep_large')!.bytes).toBe(20 * 100000);
    expect(peak.stacks.find((st) => fn(st) === 'keep_small')!.bytes).toBe(200 * 4000);
    const below = peak.stacks.find((st) => /below massif's threshold/.test(fn(st)))!;
    expect(below.frames).toHaveLength(1);
    expect(below.bytes).toBeGreaterThanOrEqual(300 * 8);
    expect(peak.stacks.find((st) => fn(st) === 'keep_large')!.frames.flatMap((x) => x.frames)).toEqual([
      { function: 'keep_large', file: 'grow.c', line: 13 },
      { function: 'main', file: 'grow.c', line: 20 },
    ]);
    expect(
      massifRecords(peak)
        .records.map((r) => r.counts.liveBytes)
        .reduce((a, b) => a + b),
    ).toBe(peak.heapBytes);
  });

  it('loads as one process whose snapshots are the series, also from each compressed copy', async () => {
    for (const ext of ['', '.gz', '.zst', '.bz2', '.xz']) {
      const b = new Uint8Array(readFileSync(join(DIR, 'massif.out.grow' + ext)));
      const job = await loadJob([mem('massif.out.grow' + ext, b)]);
      expect(job.warnings).toEqual([]);
      expect(job.processes).toHaveLength(1);
      const p = job.processes[0];
      expect(p.snapshots.map((s) => s.live.bytes)).toEqual(msPrint.map((r) => r[3]));
      expect(p.snapshots.map((s) => s.massif?.stacksBytes)).toEqual(msPrint.map((r) => r[5]));
      expect(p.snapshots.map((s) => s.massif?.heapExtraBytes)).toEqual(msPrint.map((r) => r[4]));
      expect(p.snapshots.every((s) => s.format === 'massif')).toBe(true);
      expect([...p.profileSymbols!.values()].flat().some((f) => f.function === 'keep_small')).toBe(true);
    }
  });

  it('a damaged tree (a node no parent expects, a parent whose children never come) is a warning naming the line', () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^ n1: \d+ 0x[0-9A-F]+: keep_large/.test(l));
    const bad = [...lines];
    bad.splice(at + 1, 1, '     n0: 5 0x1: nowhere (x.c:1)'); // a grandchild four levels too deep
    const f = parseMassif(bad.join('\n'));
    expect(f.problems.map((p) => p.line)).toContain(at + 2);
    expect(f.problems.some((p) => /no parent expecting it/.test(p.message))).toBe(true);
    expect(f.problems.some((p) => /ends before all the children/.test(p.message))).toBe(true);
    const huge = parseMassif('desc: x\ncmd: y\ntime_unit: i\nsnapshot=0\nmem_heap_B=' + '9'.repeat(400) + '\n');
    expect(huge.problems[0]).toMatchObject({ line: 5, message: expect.stringMatching(/400 digits/) });
  });

  for (const [name, unit] of [
    ['massif.out.pages', 'B'],
    ['massif.out.inline', 'ms'],
  ] as const)
    it(`${name}: every snapshot totals ms_print's useful-heap; its unit, command, peak and detailed snapshots`, () => {
      const ref = msPrintOf(name);
      const f = parseMassif(readFileSync(join(DIR, name), 'utf8'));
      expect(f.problems).toEqual([]);
      expect([f.timeUnit, f.cmd]).toEqual([unit, './pages']);
      expect(f.snapshots.map((s) => [s.index, s.time, s.heapBytes])).toEqual(ref.rows.map((r) => [r[0], r[1], r[3]]));
      expect(f.snapshots.filter((s) => s.tree !== 'empty').map((s) => s.index)).toEqual(ref.detailed);
      expect(f.snapshots.find((s) => s.tree === 'peak')?.index ?? null).toBe(ref.peak);
      for (const s of f.snapshots.filter((x) => x.tree !== 'empty'))
        expect([s.index, s.stacks.reduce((a, x) => a + x.bytes, 0)]).toEqual([s.index, s.heapBytes]);
      // the default: the last snapshot with a tree
      expect(f.snapshots[massifDefaultSnapshot(f.snapshots)].index).toBe(ref.detailed[ref.detailed.length - 1]);
    });

  it("pages-as-heap: the program's 40 × 256 KiB mmaps at the end, and inlined frames at one address once", () => {
    const pages = parseMassif(readFileSync(join(DIR, 'massif.out.pages'), 'utf8'));
    const last = pages.snapshots[massifDefaultSnapshot(pages.snapshots)];
    const through = (fn: string) =>
      last.stacks
        .filter((st) => st.frames.some((x) => x.frames.some((y) => y.function === fn)))
        .reduce((a, x) => a + x.bytes, 0);
    // whole 256 KiB mappings (pages.c's arithmetic), most of the 40 by the last detailed snapshot
    expect(through('keep_pages') % 262144).toBe(0);
    expect(through('keep_pages') / 262144).toBeGreaterThanOrEqual(30);
    // mmap inlined into __mmap64 at one return address: one frame address, two functions
    const mm = last.stacks.flatMap((st) => st.frames).find((x) => x.frames.some((y) => y.function === '__mmap64'))!;
    expect(mm.frames.map((y) => y.function)).toEqual(['__mmap64', 'mmap']);
    const inline = parseMassif(readFileSync(join(DIR, 'massif.out.inline'), 'utf8'));
    const s = inline.snapshots[massifDefaultSnapshot(inline.snapshots)];
    const site = s.stacks.find((st) => st.frames[0].frames[0].function === 'grab')!;
    expect(site.frames[0].frames).toEqual([
      { function: 'grab', file: 'pages.c', line: 13 },
      { function: 'fill', file: 'pages.c', line: 18 },
    ]);
    // 10,000 B per fill() call (pages.c), a whole number of calls
    expect(site.bytes % 10000).toBe(0);
    const { symbols } = massifRecords(s);
    expect(symbols.get('0x' + site.frames[0].address.toString(16))!.map((y) => y.function)).toEqual(['grab', 'fill']);
  });

  it("a tree that does not add up (as massif's --pages-as-heap trees in the wild): the rest is its own row", () => {
    const text = readFileSync(join(DIR, 'massif.out.pages'), 'utf8');
    // the peak's brk pages ("n0: 258048 0x0: ???") left out of its tree, as if massif had lost them
    const lines = text.split('\n');
    const peakAt = lines.indexOf('heap_tree=peak');
    const brk = lines.findIndex((l, i) => i > peakAt && /^ n0: \d+ 0x0: \?\?\?$/.test(l));
    const lost = Number(/n0: (\d+)/.exec(lines[brk])![1]);
    lines.splice(brk, 1);
    lines[peakAt + 1] = lines[peakAt + 1].replace(/^n(\d+):/, (_, n: string) => `n${Number(n) - 1}:`);
    const f = parseMassif(lines.join('\n'));
    expect(f.problems).toEqual([]);
    const peak = f.snapshots.find((s) => s.tree === 'peak')!;
    expect(peak.unexplainedBytes).toBe(lost);
    expect(peak.stacks.reduce((a, x) => a + x.bytes, 0)).toBe(
      msPrintOf('massif.out.pages').rows.find((r) => r[0] === peak.index)![3],
    );
    // a node larger than its parent (S6: 1e29, 400 digits) is said and cut to the parent's size
    const big = text.replace(
      /^( {2}n\d+: )(\d+)( 0x[0-9A-F]+: mmap )/m,
      (_, a: string, _b: string, c: string) => a + '1' + '0'.repeat(29) + c,
    );
    const g = parseMassif(big);
    expect(g.problems[0].message).toMatch(
      /a tree node of 30 digits is more than what its parent has left \(\d+ B\): counted as \d+ B/,
    );
    for (const s of g.snapshots) expect(s.stacks.reduce((a, x) => a + x.bytes, 0)).toBeLessThanOrEqual(s.heapBytes);
  });
});

describe('massif files loaded', () => {
  it('the pages-as-heap run: totals equal ms_print, the peak marked, the command named, massif time on the model', async () => {
    const b = new Uint8Array(readFileSync(join(DIR, 'massif.out.pages')));
    const job = await loadJob([mem('massif.out.pages', b)]);
    expect(job.warnings).toEqual([]);
    const p = job.processes[0];
    const ref = msPrintOf('massif.out.pages');
    expect(p.snapshots.map((s) => s.live.bytes)).toEqual(ref.rows.map((r) => r[3]));
    expect(processName(p)).toBe('pages');
    // the peak is massif's high-water mark; `last` opens on the last snapshot with a tree, `peak` on the peak
    expect(p.snapshots.filter((s) => s.trigger === 'high-water').map((s) => s.seq)).toEqual([ref.peak]);
    expect(p.snapshots[snapshotByName(p, 'last')].seq).toBe(ref.detailed[ref.detailed.length - 1]);
    expect(p.snapshots[snapshotByName(p, 'peak')].seq).toBe(ref.peak);
    const t = seriesTimes(p);
    expect(t.massif).toEqual({ unit: 'B', x: ref.rows.map((r) => r[1]) });
  });

  it('a 1 GiB massif file is refused with a message naming the limit', async () => {
    const head = new TextEncoder().encode('desc: (none)\ncmd: ./big\ntime_unit: i\n#-----------\nsnapshot=0\n');
    const size = 1024 * 1024 * 1024;
    const big: InputFile = {
      path: 'massif.out.1',
      size,
      mtimeMs: null,
      read: async (o, l) => {
        const out = new Uint8Array(Math.max(0, Math.min(l, size - o))).fill(0x0a);
        out.set(head.subarray(Math.min(o, head.length), Math.min(o + out.length, head.length)));
        return out;
      },
    };
    const job = await loadJob([big]);
    expect(job.processes).toEqual([]);
    expect(job.warnings.map((w) => w.message)).toEqual([
      `valgrind massif output not read: ${size} bytes, above the ${MAX_MASSIF_BYTES} this reader holds`,
    ]);
  });
});
