import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vi } from 'vitest';
import { loadJob } from './load-job.js';
import { mergeDumpTask, runDumpTask, type DumpTaskResult } from './dump-task.js';
import { ProcessBuilder } from '../model/process-builder.js';
import { readDump } from '../formats/read-dump.js';
import type { InputFile } from '../formats/input-file.js';
import { parseDumpName } from '../formats/dump-filename.js';
import { collectInputFiles } from '../../node/io/node-files.js';

const work = mkdtempSync(join(tmpdir(), 'heaplens-task-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The serial reader as it was before tasks: every record interned straight into one ProcessBuilder. */
async function serialSeries(files: readonly InputFile[]) {
  const b = new ProcessBuilder();
  for (const f of files) {
    const snap = b.snapshotBuilder();
    const r = await readDump(f, { onRecord: (rec, info) => snap.add(rec, info.sampling) });
    if (r.info.fatal) continue;
    const n = parseDumpName(f.path);
    b.snapshots.push(
      snap.build(
        {
          file: f.path,
          seq: n?.seq ?? null,
          trigger: n?.trigger ?? 'unknown',
          triggerSeq: n?.triggerSeq ?? null,
          mtimeMs: f.mtimeMs,
        },
        r.info,
        r.info.mapsText ? 'dump' : null,
      ),
    );
  }
  return b;
}

const plainArrays = (v: unknown): unknown =>
  JSON.parse(
    JSON.stringify(v, (_k, x: unknown) => (ArrayBuffer.isView(x) ? Array.from(x as unknown as ArrayLike<number>) : x)),
  );

describe('dump tasks merged in load order', () => {
  it('equal the serial reader exactly: stack and address ids, rows, sums (also for stacks repeated within a dump)', async () => {
    // A dump whose stacks repeat (after prof.reset jemalloc may list a backtrace twice): rows must be summed.
    const dup = join(work, 'dup.77.0.i0.heap');
    writeFileSync(
      dup,
      'heap_v2/524288\n  t*: 9: 9000 [0: 0]\n' +
        '@ 0x10 0x20\n  t*: 2: 1000 [0: 0]\n  t0: 2: 1000 [0: 0]\n' +
        '@ 0x30\n  t*: 3: 3000 [0: 0]\n' +
        '@ 0x10 0x20\n  t*: 1: 700000 [0: 0]\n  t1: 1: 700000 [0: 0]\n' +
        '@ 0x30\n  t*: 3: 4300 [0: 0]\n',
    );
    const dup2 = join(work, 'dup.77.1.i1.heap');
    writeFileSync(
      dup2,
      'heap_v2/524288\n  t*: 1: 10 [0: 0]\n@ 0x30\n  t*: 1: 10 [0: 0]\n@ 0x40 0x10\n  t*: 1: 10 [0: 0]\n@ 0x30\n  t*: 1: 10 [0: 0]\n',
    );
    const root = resolve(import.meta.dirname, '..', '..', 'fixtures');
    const files = await collectInputFiles([join(root, 'jemalloc', 'job'), join(root, 'python'), dup, dup2]);
    const job = await loadJob(files);
    const byPath = new Map(files.map((f) => [f.path, f] as const));
    let compared = 0;
    for (const p of job.processes) {
      const serial = await serialSeries(p.snapshots.map((s) => byPath.get(s.file) as InputFile));
      serial.markAllocatorFrames(p.maps);
      expect(plainArrays(p.stacks), p.key).toEqual(plainArrays(serial.stacks));
      expect(p.addresses.hex, p.key).toEqual(serial.addresses.hex);
      // (context comes from the Python table, attached by loadJob after either path; not the reader's)
      const withoutContext = p.snapshots.map(({ context: _context, ...rest }) => rest);
      expect(plainArrays(withoutContext), p.key).toEqual(plainArrays(serial.snapshots));
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(5);
    const d = job.processes.find((p) => p.pid === 77)!;
    expect(d.snapshots[0].stackIds).toHaveLength(2);
    expect(d.snapshots[1].stackIds).toHaveLength(2);
  });
});

describe('a merge that knows a backtrace line’s serial', () => {
  it('takes a serial it interned before as that stack, with the ids a merge comparing every stack gives', async () => {
    const root = resolve(import.meta.dirname, '..', '..', 'fixtures');
    const files = (await collectInputFiles([join(root, 'job', 'dumps')]))
      .filter((f) => /job\.7899\.\d+\.i\d+\.heap\.gz$/.test(f.path))
      .sort((a, b) => (parseDumpName(a.path)?.seq ?? 0) - (parseDumpName(b.path)?.seq ?? 0));
    expect(files.length).toBeGreaterThan(10);
    const meta = (f: InputFile) => ({
      file: f.path,
      seq: null,
      trigger: 'unknown' as const,
      triggerSeq: null,
      mtimeMs: null,
    });
    // read in this thread, through its backtrace cache: the dumps after the first hit the lines the first kept
    const results: DumpTaskResult[] = [];
    for (const f of files) results.push(await runDumpTask({ file: f, meta: meta(f) }));
    const withSerials = new ProcessBuilder();
    const compared = new ProcessBuilder();
    const calls = vi.spyOn(withSerials, 'internRange');
    let records = 0;
    for (const r of results) {
      const p = r.parsed!;
      expect(p.stackEntries?.some((e) => e >= 0)).toBe(true);
      records += p.snapshot.stackIds.length;
      // a copy without the serials (the merge rewrites the snapshot's ids in place)
      const { stackEntries: _e, ...plain } = structuredClone(p);
      mergeDumpTask(compared, plain);
      mergeDumpTask(withSerials, p);
    }
    expect(plainArrays(withSerials.stacks)).toEqual(plainArrays(compared.stacks));
    expect(withSerials.addresses.hex).toEqual(compared.addresses.hex);
    expect(plainArrays(withSerials.snapshots)).toEqual(plainArrays(compared.snapshots));
    // only a serial met for the first time was compared: about one call per distinct stack, not per record
    expect(calls.mock.calls.length).toBeLessThan(records / 4);
    expect(calls.mock.calls.length).toBeGreaterThanOrEqual(withSerials.stacks.count);
  });
});
