// The desktop app's path for a dataset, without Electron: the main process's batches, each passed through
// structured clone (what IPC and postMessage do), put together again equal the job the dumps give.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobAssembler } from '../../core/model/job-batches.js';
import { loadJob } from '../../core/load/load-job.js';
import { collectInputFiles } from '../io/node-files.js';
import type { SymbolTable } from '../../core/symbolize/symbolize.js';
import { datasetBatches } from './app-batches.js';
import { ingest } from './ingest.js';
import { readDataset } from './read-dataset.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
let dir = '';
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('dataset → batches → job (the Electron main process to the renderer)', () => {
  it('equals the job loaded from the dumps, symbols included, after structured clone of every batch', async () => {
    dir = await mkdtemp(join(tmpdir(), 'heaplens-app-batches-'));
    const files = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job'), join(ROOT, 'fixtures/python/py312')]);
    const out = join(dir, 'ds');
    const fakeTable = (n: number): SymbolTable => ({
      leaf: [],
      caller: [],
      modules: [
        {
          mappingPath: `/m${n}`,
          binaryPath: null,
          debugPath: null,
          buildId: null,
          binary: null,
          reason: 'test',
          addresses: n,
          error: null,
        },
      ],
    });
    await ingest(files, out, {
      symbolize: async (job) => {
        for (const p of job.processes) p.symbols = fakeTable(p.stacks.count);
      },
    });
    const asm = new JobAssembler();
    let batches = 0;
    for await (const b of await datasetBatches(out)) {
      asm.add(structuredClone(b));
      batches++;
    }
    const job = asm.finish();
    const expected = await loadJob(files);
    expect(job.processes.map((p) => ({ ...p, symbols: null }))).toEqual(expected.processes);
    expect({ ...job, processes: [] }).toEqual({ ...expected, processes: [] });
    expect(batches).toBeGreaterThanOrEqual(1 + 3 * expected.processes.length);
    const ds = await readDataset(out);
    expected.processes.forEach((p, i) => expect(job.processes[i].symbols?.modules[0].addresses).toBe(p.stacks.count));
    expect(ds.job.processes.length).toBe(expected.processes.length);
  });

  it("a job with logs: the kept evidence arrives with it, fates and roles the dumps' (two-node-job, whole)", async () => {
    const files = await collectInputFiles([join(ROOT, 'fixtures/two-node-job')]);
    const out = join(dir || (dir = await mkdtemp(join(tmpdir(), 'heaplens-app-batches-'))), 'logs');
    await ingest(files, out);
    const asm = new JobAssembler();
    for await (const b of await datasetBatches(out)) asm.add(structuredClone(b));
    const job = asm.finish();
    const expected = await loadJob(files);
    expect(expected.evidence?.kernel.length).toBeGreaterThan(0);
    expect(job.processes.map((p) => p.role?.name ?? null)).toEqual(expected.processes.map((p) => p.role?.name ?? null));
    expect(job.processes.some((p) => p.role?.name === 'rollout-1')).toBe(true);
    expect(job.processes).toEqual(expected.processes);
    expect({ ...job, processes: [] }).toEqual({ ...expected, processes: [] });
  }, 120_000);

  it('a job with a process or cells missing is refused by name', async () => {
    const asm = new JobAssembler();
    asm.add({ kind: 'job', processCount: 1, warnings: [], ignoredFiles: [] });
    expect(() => asm.finish()).toThrow(/process 0 of 1 did not arrive/);
  });
});
