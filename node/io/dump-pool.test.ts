import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadJob } from '../../core/load/load-job.js';
import { JobTooLargeError } from '../../core/load/memory-budget.js';
import { runDumpTask } from '../../core/load/dump-task.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { createDumpPool } from './dump-pool.js';
import { collectInputFiles } from './node-files.js';
import { FIXTURES } from '../../tools/fixtures.js';

const ROOT = resolve(import.meta.dirname, '..', '..', 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'heaplens-pool-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The whole model as plain data (typed arrays as arrays, Maps as entries), for exact comparison. */
function plain(job: unknown): unknown {
  return JSON.parse(
    JSON.stringify(job, (_k, v: unknown) => {
      if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
      if (v instanceof Map) return [...v.entries()];
      if (typeof v === 'bigint') return `${v}n`;
      return v;
    }),
  );
}

async function pooled(
  files: Parameters<typeof loadJob>[0],
  size = 2,
  resourceLimits?: { maxOldGenerationSizeMb: number },
) {
  const pool = createDumpPool({ size, ...(resourceLimits ? { resourceLimits } : {}) });
  try {
    return await loadJob(files, { runDump: pool.run, readers: size });
  } finally {
    pool.close();
  }
}

describe('parallel dump reading (worker pool)', () => {
  it('gives exactly the in-thread model on every fixture: stacks, ids, sums, maps, Python tables, warnings', async () => {
    const files = await collectInputFiles([ROOT]);
    const serial = await loadJob(files);
    const parallel = await pooled(files, 3);
    expect(serial.processes.length).toBeGreaterThanOrEqual(8);
    expect(serial.warnings.length).toBeGreaterThan(10); // the damaged and hostile fixtures are in there
    expect(plain(parallel)).toEqual(plain(serial));
  });

  it('reads each sidecar in the worker beside its dump; a vanished or foreign sidecar warns as in-thread', async () => {
    const dir = join(work, 'sidecars');
    mkdirSync(dir);
    const src = join(ROOT, 'python', 'py312', 'jeprof.32748.0.m0.heap');
    for (const seq of [0, 1, 2]) {
      writeFileSync(join(dir, `jeprof.32748.${seq}.m${seq}.heap`), readFileSync(src));
      writeFileSync(join(dir, `jeprof.32748.${seq}.m${seq}.heap.pyframes`), readFileSync(src + '.pyframes'));
    }
    writeFileSync(join(dir, 'jeprof.32748.1.m1.heap.pyframes'), 'not a table\n');
    const files = await collectInputFiles([dir]);
    rmSync(join(dir, 'jeprof.32748.2.m2.heap.pyframes'));
    const serial = await loadJob(files);
    const parallel = await pooled(files, 2);
    expect(plain(parallel)).toEqual(plain(serial));
    const about = (seq: number) =>
      parallel.warnings.filter((w) => w.file.endsWith(`.${seq}.m${seq}.heap.pyframes`)).map((w) => w.message);
    expect(about(1)).toEqual(['not a PYFRAMES table (no PYFRAMES/1 header); Python frames stay unresolved']);
    expect(about(2).join()).toMatch(/could not be read: .*ENOENT/);
    expect(parallel.processes[0].pythonFrames?.frames.size).toBeGreaterThan(10);
    // the task itself parsed the table (the merging thread is handed it, not the text)
    const task = await runDumpTask({
      file: files.find((f) => f.path.endsWith('.0.m0.heap')) as InputFile,
      sidecar: files.find((f) => f.path.endsWith('.0.m0.heap.pyframes')) as InputFile,
      meta: { file: 'x', seq: 0, trigger: 'manual', triggerSeq: 0, mtimeMs: null },
    });
    expect(task.parsed?.info.sidecar?.table?.frames.size).toBe(parallel.processes[0].pythonFrames?.frames.size);
  });

  it('a damaged or vanished file fails its own task with a warning naming it; the others are unchanged', async () => {
    const good = await collectInputFiles([join(FIXTURES, 'job')]);
    // (A worker run out of its heap limit is not tested here: V8 can abort the whole process on such an OOM
    // instead of ending the worker, which killed the test runner's fork under load.)
    const gone = join(work, 'gone.8.0.i0.heap');
    writeFileSync(gone, readFileSync(join(FIXTURES, 'damaged', 'crlf.heap')));
    const cut = join(work, 'cut.9.0.i0.heap.gz');
    const gz = gzipSync(readFileSync(join(FIXTURES, 'damaged', 'crlf.heap')));
    writeFileSync(cut, gz.subarray(0, gz.length >> 1));
    const bad = await collectInputFiles([gone, cut]);
    rmSync(gone);
    const alone = await loadJob(good);
    const mixed = await pooled([...bad, ...good], 2);
    const keys = new Set(alone.processes.map((p) => p.key));
    // given with files of another folder, the job's processes take their top folder as host (core/model/process-host.ts
    // topFolders); read alone they have none: the rest is the same
    const noHost = (ps: typeof alone.processes) => ps.map(({ host: _host, ...p }) => p);
    expect(plain(noHost(mixed.processes.filter((p) => keys.has(p.key))))).toEqual(plain(noHost(alone.processes)));
    const about = (f: string) => mixed.warnings.filter((w) => w.file === f).map((w) => w.message);
    expect(about(gone).join()).toMatch(/could not be read: .*ENOENT/);
    expect(about(cut).join()).toMatch(/gzip stream ends early/);
  });

  it('cancel stops the workers sooner than one more dump would take', async () => {
    const dir = join(work, 'many');
    const generator = '../../bench/generate-series.mjs';
    const mod: unknown = await import(/* @vite-ignore */ generator);
    const { writeSeries } = mod as { writeSeries: (d: string, o: object) => number };
    writeSeries(dir, { processes: 2, snapshots: 8, stacks: 20_000, depth: 24 });
    const files = await collectInputFiles([dir]);
    const pool = createDumpPool({ size: 2 });
    const ac = new AbortController();
    let progressed = 0;
    let t0 = 0;
    const started = performance.now();
    // Cancelled once the first dump is in: the workers are then busy with the next ones.
    const onProgress = (p: { filesDone: number }) => {
      progressed = p.filesDone;
      if (p.filesDone >= 1 && !ac.signal.aborted) {
        t0 = performance.now();
        ac.abort();
      }
    };
    const load = loadJob(files, { runDump: pool.run, readers: 2, signal: ac.signal, onProgress });
    await expect(load).rejects.toThrow();
    const ms = performance.now() - t0;
    pool.close();
    expect(progressed).toBeLessThan(files.length / 2);
    // against the first dump's own time in this run (a busy machine slows both alike): waiting for the dumps
    // in flight to finish would take about that long again; stopping the workers takes a fraction of it
    const firstDump = t0 - started;
    expect(ms, `cancel took ${ms.toFixed(0)} ms; the first dump ${firstDump.toFixed(0)} ms`).toBeLessThan(
      Math.max(100, firstDump / 2),
    );
    // most of it is writing the series (~25 s alone; a loaded CI machine runs it beside other files)
  }, 180_000);

  it('a job beyond the memory budget stops with a message that names heaplens ingest', async () => {
    const files = await collectInputFiles([join(FIXTURES, 'job')]);
    const err = await loadJob(files, { memoryBudget: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobTooLargeError);
    expect((err as Error).message).toMatch(/does not fit in memory.*heaplens ingest/);
  });
});
