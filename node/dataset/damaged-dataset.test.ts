// A dataset with a missing or damaged file: every command says which file, and exits 1; a damaged dump
// fails alone at ingest with a warning naming it.

import { cp, mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { openEngine, sqlString } from './duckdb.js';
import { parquetPathSql } from './tree-check.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
let dir = '';
let pristine = '';

const cli = runCaptured;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'heaplens-damaged-ds-'));
  pristine = join(dir, 'pristine');
  expect((await cli('ingest', join(ROOT, 'fixtures/jemalloc/job'), '-o', pristine, '--no-symbols')).code).toBe(0);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function copy(name: string): Promise<string> {
  const d = join(dir, name);
  await cp(pristine, d, { recursive: true });
  return d;
}

describe('damaged dataset', () => {
  for (const command of ['summary', 'top', 'growth']) {
    it(`${command}: a missing cells file is named`, async () => {
      const d = await copy(`missing-${command}`);
      const cellsDir = join(d, 'cells', 'process=1');
      const [f] = await readdir(cellsDir);
      await rm(join(cellsDir, f));
      const r = await cli(command, d, ...(command === 'summary' ? [] : ['--no-symbols']));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/cells\/process=1/);
    });

    it(`${command}: a cut Parquet file is named`, async () => {
      const d = await copy(`cut-${command}`);
      const cellsDir = join(d, 'cells', 'process=2');
      const [f] = await readdir(cellsDir);
      await truncate(join(cellsDir, f), 100);
      const r = await cli(command, d, ...(command === 'summary' ? [] : ['--no-symbols']));
      expect(r.code).toBe(1);
      expect(r.err).toContain(join(cellsDir, f));
      expect(r.err).toContain('not a readable Parquet file');
    });
  }

  it('a missing stacks file and a broken manifest are named', async () => {
    const d = await copy('no-stacks');
    await rm(join(d, 'stacks', 'process=0', 'data.parquet'));
    const r = await cli('top', d, '--no-symbols');
    expect(r.code).toBe(1);
    expect(r.err).toContain(join(d, 'stacks', 'process=0', 'data.parquet'));
    expect(r.err).toContain('missing from the dataset');

    const m = await copy('bad-manifest');
    await writeFile(join(m, '_heaplens.json'), '{"format":"heaplens-dataset","version":99}');
    const r2 = await cli('summary', m);
    expect(r2.code).toBe(1);
    expect(r2.err).toContain(join(m, '_heaplens.json'));
    expect(r2.err).toContain('version 99');
  });

  /** One Parquet file of a copy rewritten with `replace` (a DuckDB REPLACE list) over all its rows. */
  async function rewrite(d: string, rel: string, replace: string): Promise<string> {
    const file = join(d, rel);
    const e = await openEngine([d]);
    await e.con.run(
      `COPY (SELECT * REPLACE (${replace}) FROM read_parquet(${parquetPathSql(file)})) TO ${sqlString(file + '.new')} (FORMAT parquet)`,
    );
    e.close();
    await cp(file + '.new', file);
    await rm(file + '.new');
    return file;
  }

  // found by tools/fuzz (dataset cases): each was an internal error with a stack, or a figure of -1e300 bytes
  it('a frame address that is not an address is named with its file', async () => {
    const d = await copy('bad-address');
    const file = await rewrite(d, 'frames/process=2/data.parquet', `'[1,2' AS address`);
    const r = await cli('top', d, '--no-symbols');
    expect(r.code).toBe(1);
    expect(r.err).toContain(file);
    expect(r.err).toMatch(/is not an address: "\[1,2"/);
    expect(r.err).not.toMatch(/internal error|\n\s+at /);
  });

  it('a frame id past the addresses is named with its stacks file', async () => {
    const d = await copy('bad-frame-id');
    const file = await rewrite(
      d,
      'stacks/process=1/data.parquet',
      'list_transform(frames, x -> x + 1000000) AS frames',
    );
    const r = await cli('top', d, '--no-symbols');
    expect(r.code).toBe(1);
    expect(r.err).toContain(file);
    expect(r.err).toMatch(/frame 0 is address_id \d+, not one of the \d+ addresses/);
  });

  it('an address count of NULL in processes.parquet is named, not a TypeError (growth reads a few stacks)', async () => {
    const d = await copy('bad-address-count');
    await rewrite(d, 'processes.parquet', 'NULL::INTEGER AS address_count');
    const r = await cli('growth', d, '--no-symbols');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /frames\/process=\d+\/data\.parquet: holds address_id \d+; processes\.parquet says \S+ addresses/,
    );
    expect(r.err).not.toMatch(/internal error|\n\s+at /);
  });

  for (const [value, shown] of [
    [`'NaN'::DOUBLE`, 'NaN'],
    ['-1e300', '-1e+300'],
  ])
    it(`growth (ranked in SQL): a cell of ${shown} bytes is named with its folder and column`, async () => {
      const d = await copy(`bad-cell-${shown}`);
      const [f] = await readdir(join(d, 'cells', 'process=1'));
      await rewrite(d, `cells/process=1/${f}`, `${value} AS bytes`);
      const r = await cli('growth', d, '--no-symbols');
      expect(r.code).toBe(1);
      expect(r.err).toContain(join(d, 'cells', 'process=1'));
      // ranked from series.parquet, the cells are read for the stacks that can score: the damaged one is named then
      expect(r.err).toMatch(/column bytes holds \S+ for stack \d+, not a size/);
    });

  for (const [value, shown] of [
    [`'NaN'::DOUBLE`, 'NaN'],
    ['-1e300', '-1e+300'],
  ])
    it(`growth (ranked in SQL): series statistics of ${shown} bytes are named with their file and column`, async () => {
      const d = await copy(`bad-series-${shown}`);
      const file = await rewrite(d, 'series.parquet', `${value} AS last_y`);
      const r = await cli('growth', d, '--no-symbols');
      expect(r.code).toBe(1);
      expect(r.err).toContain(file);
      expect(r.err).toMatch(/column last_y holds \S+ for process \d+, stack \d+, not a size/);
    });

  it('ingest refuses to write into a folder that is not a dataset', async () => {
    const d = join(dir, 'not-a-dataset');
    await cp(join(ROOT, 'fixtures/jemalloc/damaged'), d, { recursive: true });
    const r = await cli('ingest', join(ROOT, 'fixtures/jemalloc/job'), '-o', d);
    expect(r.code).toBe(1);
    expect(r.err).toContain('is not a heaplens dataset; refusing to write into it');
  });
});

describe('damaged dumps at ingest', () => {
  it('each damaged dump fails alone with a warning naming it; the good ones are ingested and unchanged', async () => {
    const out = join(dir, 'damaged.dataset');
    const damaged = join(ROOT, 'fixtures/jemalloc/damaged');
    const r = await cli('ingest', damaged, join(ROOT, 'fixtures/jemalloc/job'), '-o', out, '--no-symbols');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/warning: .*zero-length\.heap/);
    expect(r.err).toMatch(/warning: .*truncated-in-stacks\.heap:\d+: truncated/);
    const mixed = JSON.parse((await cli('summary', out, '--json')).out) as {
      processes: { key: string; snapshots: unknown[] }[];
    };
    const alone = JSON.parse((await cli('summary', join(ROOT, 'fixtures/jemalloc/job'), '--json')).out) as {
      processes: { key: string; snapshots: unknown[] }[];
    };
    // ingested with the damaged folder beside it, the job's processes take their top folder as host
    // (core/model/process-host.ts topFolders; read alone they have none): the rest is the same
    for (const p of alone.processes)
      expect({ ...mixed.processes.find((q) => q.key === p.key), host: null }).toEqual({ ...p, host: null });
  });
});
