// Issue 46 N15: a dataset's snapshot context_json is untrusted (a copied dataset). A time that is not a number,
// or lies outside the dump-time bounds, is read as no time (the snapshot keeps its file time) with a warning
// naming the dataset file, never `internal error: RangeError: Invalid time value`.
import { statSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { openEngine } from './duckdb.js';
import { parquetPathSql } from './tree-check.js';
import { readDataset } from './read-dataset.js';
import { loadJob } from '../../core/load/load-job.js';
import { nodeInputFile } from '../io/node-files.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DUMPS = join(ROOT, 'fixtures/job/dumps');
let dir = '';
let pristine = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'heaplens-ctx-time-'));
  // one process of the job fixture (its pyframes tables carry each dump's context)
  const input = join(dir, 'in');
  await mkdir(input);
  for (const n of await readdir(DUMPS)) if (n.startsWith('job.7905.')) await cp(join(DUMPS, n), join(input, n));
  pristine = join(dir, 'pristine');
  const r = await runCaptured('ingest', input, '-o', pristine, '--no-symbols');
  expect(r.code, r.err).toBe(0);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the dataset whose second snapshot's context_json is `json`; returns it and the rewritten file. */
async function withContext(name: string, json: string): Promise<{ ds: string; file: string }> {
  const ds = join(dir, name);
  await cp(pristine, ds, { recursive: true });
  const parts = (await readdir(join(ds, 'snapshots'))).filter((p) => p.startsWith('process='));
  expect(parts.length).toBe(1);
  const file = join(ds, 'snapshots', parts[0], 'data.parquet');
  const e = await openEngine([ds]);
  try {
    const rows = await e.con.runAndReadAll(
      `SELECT count(*) AS n FROM read_parquet(${parquetPathSql(file)}) WHERE context_json IS NOT NULL`,
    );
    expect(Number(rows.getRowObjects()[0].n)).toBeGreaterThan(1);
    const lit = `'${json.replaceAll("'", "''")}'`;
    await e.con.run(
      `COPY (SELECT * REPLACE (CASE WHEN snapshot = 1 THEN ${lit} ELSE context_json END AS context_json) FROM read_parquet(${parquetPathSql(file)}) ORDER BY snapshot) TO ${parquetPathSql(`${file}.new`)} (FORMAT parquet)`,
    );
  } finally {
    e.close();
  }
  await rm(file);
  await cp(`${file}.new`, file);
  await rm(`${file}.new`);
  return { ds, file };
}

describe('a dataset snapshot whose context time is not a time', () => {
  const cases: [string, string][] = [
    ['text', '{"timeRealMs":"soon"}'],
    ['beyond Date', '{"timeRealMs":1e20}'],
    ['negative', '{"timeRealMs":-8.64e15}'],
    ['missing', '{"pid":7905}'],
    ['start after the dump', '{"timeRealMs":1700000000000,"startRealMs":1800000000000}'],
  ];
  for (const [what, json] of cases)
    it(`${what}: summary and top answer; the snapshot is read without its context, with a warning naming the file`, async () => {
      const { ds, file } = await withContext(what.replaceAll(' ', '-'), json);
      for (const cmd of ['summary', 'top']) {
        const r = await runCaptured(cmd, ds);
        expect(r.err).not.toMatch(/internal error|Invalid time value|\n\s+at /);
        expect(r.code, r.err).toBe(0);
        expect(r.err).toContain(file);
        expect(r.err).toMatch(/context_json.*(timeRealMs|startRealMs).*read without/);
      }
    });

  it('an intact dataset: no such warning, and every context reads back as the dumps hold it', async () => {
    const r = await runCaptured('summary', pristine);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/context_json/);
    const fromDumps = await loadJob(
      (await readdir(join(dir, 'in'))).sort().map((n) => {
        const abs = join(dir, 'in', n);
        return nodeInputFile(abs, n, statSync(abs).size, null);
      }),
    );
    const read = await readDataset(pristine);
    const want = fromDumps.processes[0].snapshots.map((s) => s.context ?? null);
    expect(want.filter((c) => c !== null).length).toBeGreaterThan(1);
    expect(read.job.processes[0].snapshots.map((s) => s.context ?? null)).toEqual(want);
  });
});
