// The main process's dataset channels, without Electron: only a folder the user opened, only a dataset; the
// job comes out one batch per call and is the job the dumps give.

import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobAssembler } from '../core/model/job-batches.js';
import { loadJob } from '../core/load/load-job.js';
import { datasetBatches } from '../node/dataset/app-batches.js';
import { ingest } from '../node/dataset/ingest.js';
import { collectInputFiles } from '../node/io/node-files.js';
import { createDatasetHandlers, MAX_OPEN_DATASETS } from './dataset-handlers.js';
import { FileAccess } from './file-access.js';
import { CHANNELS } from './host-api.js';

const ROOT = path.resolve(import.meta.dirname, '..');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'heaplens-app-ds-'));
  await ingest(await collectInputFiles([path.join(ROOT, 'fixtures/jemalloc/job')]), path.join(dir, 'job.dataset'));
  await mkdir(path.join(dir, 'plain'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('dataset IPC handlers', () => {
  it('sends the dataset of a granted folder one batch per call; the batches make the job the dumps give', async () => {
    const files = new FileAccess();
    await files.grant(dir);
    const h = createDatasetHandlers(files, datasetBatches);
    const handle = (await h[CHANNELS.datasetOpen](path.join(dir, 'job.dataset'))) as number;
    const asm = new JobAssembler();
    let n = 0;
    for (let b = await h[CHANNELS.datasetNext](handle); b !== null; b = await h[CHANNELS.datasetNext](handle)) {
      asm.add(structuredClone(b) as Parameters<typeof asm.add>[0]);
      n++;
    }
    expect(n).toBeGreaterThan(3);
    expect(asm.finish()).toEqual(await loadJob(await collectInputFiles([path.join(ROOT, 'fixtures/jemalloc/job')])));
    // the handle is closed after the last batch
    await expect(h[CHANNELS.datasetNext](handle)).rejects.toThrow(/no such open dataset/);
  });

  it('refuses a folder the user did not open, a folder that is not a dataset, and too many open datasets', async () => {
    const files = new FileAccess();
    const h = createDatasetHandlers(files, datasetBatches);
    await expect(h[CHANNELS.datasetOpen](path.join(dir, 'job.dataset'))).rejects.toThrow(/not opened by the user/);
    await files.grant(dir);
    await expect(h[CHANNELS.datasetOpen](path.join(dir, 'plain'))).rejects.toThrow(/not a heaplens dataset/);
    await expect(h[CHANNELS.datasetOpen]('relative')).rejects.toThrow(/absolute/);
    const reader = async () => ({ next: async () => ({ done: true as const, value: undefined }) });
    const h2 = createDatasetHandlers(files, reader);
    for (let i = 0; i < MAX_OPEN_DATASETS; i++) await h2[CHANNELS.datasetOpen](path.join(dir, 'job.dataset'));
    await expect(h2[CHANNELS.datasetOpen](path.join(dir, 'job.dataset'))).rejects.toThrow(/already open/);
  });
});
