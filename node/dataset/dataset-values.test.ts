// Column edits of an ingested real run (fixtures/jemalloc/job) as a damaged or crafted copy would hold them
// (issue 24 items 6 and 15): each is refused in one message naming the file and the column, never a NaN or
// negative figure in the output and never an internal error with a stack.
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { openEngine } from './duckdb.js';
import { parquetPathSql } from './tree-check.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const JOB = join(ROOT, 'fixtures/jemalloc/job');
let dir = '';
let pristine = '';

const cli = runCaptured;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'heaplens-ds-values-'));
  pristine = join(dir, 'pristine');
  expect((await cli('ingest', JOB, '-o', pristine, '--no-symbols')).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the dataset with one column of one table file replaced by a SQL expression. */
async function edited(
  name: string,
  table: string,
  column: string,
  expr: string,
): Promise<{ ds: string; file: string }> {
  const ds = join(dir, name);
  await cp(pristine, ds, { recursive: true });
  const part = join(ds, table, 'process=0');
  const file = join(part, (await readdir(part)).filter((n) => n.endsWith('.parquet')).sort()[0]);
  const e = await openEngine([ds]);
  await e.con.run(
    `COPY (SELECT * REPLACE (${expr} AS ${column}) FROM read_parquet(${parquetPathSql(file)})) TO '${file}.new' (FORMAT parquet)`,
  );
  e.close();
  await rm(file);
  await cp(`${file}.new`, file);
  await rm(`${file}.new`);
  return { ds, file };
}

describe('a dataset whose columns were edited', () => {
  const cases: [string, string, string, string, RegExp][] = [
    ['NaN live bytes', 'snapshots', 'live_bytes', "'NaN'::DOUBLE", /column live_bytes holds NaN, not a size/],
    [
      'a total of -9.1e23 TiB',
      'snapshots',
      'header_live_bytes',
      'CASE WHEN snapshot = 1 THEN -1e36 ELSE header_live_bytes END',
      /column header_live_bytes holds -1e\+36, not a size/,
    ],
    [
      'threads_json that is not JSON',
      'snapshots',
      'threads_json',
      '\'[{"uid": 1,\'',
      /column threads_json is not valid JSON/,
    ],
    [
      'threads_json of another shape',
      'snapshots',
      'threads_json',
      "'7'",
      /column threads_json does not have the shape/,
    ],
    [
      'a stack id past the table',
      'cells',
      'stack_id',
      'stack_id + 99999',
      /column stack_id holds \d+; the process has \d+ stacks/,
    ],
    ['a cell of -1e30 B', 'cells', 'bytes', '-1e30 - bytes', /column bytes holds -1e\+30 in snapshot \d+, not a size/],
  ];
  for (const [what, table, column, expr, message] of cases) {
    it(`${what}: refused naming the file and column`, async () => {
      const { ds, file } = await edited(what.replace(/\W+/g, '-'), table, column, expr);
      const r = await cli('top', ds);
      expect(r.code, r.out).toBe(1);
      expect(r.err).toContain(file.slice(ds.length + 1));
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/internal error|\n\s+at /);
      expect(r.out).not.toMatch(/NaN|Infinity|−\d/);
    });
  }
});

// Issue 24 item 6: a snapshot total that disagrees with its cells (a flipped bit, a crafted figure) is a warning
// naming the file and row, and the cells' sums are used: the output is the pristine dataset's.
describe('a snapshot total that is not the sum of its cells', () => {
  it('warns naming the file and row, and every figure is the one the cells give', async () => {
    const { ds, file } = await edited(
      'flipped-total',
      'snapshots',
      'live_bytes',
      'CASE WHEN snapshot = 1 THEN live_bytes * 1024 + 7 ELSE live_bytes END',
    );
    const [edit, clean] = [await cli('top', ds, '--snapshot', '1'), await cli('top', pristine, '--snapshot', '1')];
    expect(edit.code, edit.err).toBe(0);
    expect(edit.err).toContain(file.slice(ds.length + 1));
    expect(edit.err).toMatch(
      /row 2 \(.*\): live_bytes \d+ and live_objects \d+ are not the sum of its cells .* the cells' sums are used/,
    );
    expect(clean.err).not.toMatch(/not the sum of its cells/);
    expect(edit.out).toBe(clean.out);
  });
});
