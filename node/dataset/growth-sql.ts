// `growth` on a dataset: node/dataset/growth.sql (the query docs/dataset.md gives for Spark and Trino too) run in
// DuckDB over the cells, so ranking a job reads no dump and builds no in-memory series.

import { parquetPathSql } from './tree-check.js';
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StackGrowth } from '../../core/stats/growth.js';
import { MAX_COUNT } from '../../core/formats/limits.js';
import { openEngine, sqlString, type Engine } from './duckdb.js';
import { checkTree, DatasetError, unreadableParquet } from './read-dataset.js';
import { CELLS, SNAPSHOTS } from './schema.js';

/**
 * A query's text, node/dataset/<name>: beside the sources (tsx, tests), from the build (dist/node/dataset) or from the
 * CLI's bundle (dist/node/cli/bundle, tools/bundle-cli.mjs), found from this module's own place.
 */
export function datasetSql(name: string): string {
  for (const rel of [`./${name}`, `../../../node/dataset/${name}`, `../../../../node/dataset/${name}`]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return readFileSync(p, 'utf8');
  }
  throw new Error(`node/dataset/${name} is missing from this installation`);
}

/** The growth query's text (node/dataset/growth.sql). */
export function growthSql(): string {
  return datasetSql('growth.sql');
}

/** Every Parquet file of a per-process table, `<dir>/<table>/process=<n>/*.parquet`. */
export async function tableFiles(dir: string, table: string): Promise<string[]> {
  const out: string[] = [];
  let parts: string[];
  try {
    parts = await readdir(join(dir, table));
  } catch {
    return out;
  }
  for (const p of parts.filter((x) => x.startsWith('process=')).sort()) {
    for (const f of (await readdir(join(dir, table, p))).filter((x) => x.endsWith('.parquet')).sort())
      out.push(join(dir, table, p, f));
  }
  return out;
}

/**
 * Views `cells` and `snapshots` over a dataset, with the `job` column growth.sql expects (`job` names the
 * dataset; over many jobs a hive folder job=<name> gives it).
 */
export async function createDatasetViews(engine: Engine, dir: string, job = ''): Promise<void> {
  await checkTree(dir);
  for (const [table, cols] of [
    ['cells', CELLS],
    ['snapshots', SNAPSHOTS],
  ] as const) {
    const files = await tableFiles(dir, table);
    const body =
      files.length === 0
        ? `SELECT ${sqlString(job)} AS job, CAST(NULL AS INTEGER) AS process, ${cols.map((c) => `CAST(NULL AS ${c.sql}) AS "${c.name}"`).join(', ')} WHERE false`
        : `SELECT ${sqlString(job)} AS job, CAST(process AS INTEGER) AS process, * EXCLUDE (process) FROM read_parquet([${files.map(parquetPathSql).join(', ')}], hive_partitioning = true)`;
    await engine.con.run(`CREATE OR REPLACE VIEW ${table} AS ${body}`);
  }
}

/**
 * Runs `sql`; when DuckDB fails on a file, finds which one and names it. Every column is read (hashed), since a
 * count is answered from the footer and a damaged data page would pass; a failure found in no single file still
 * names the dataset (a DatasetError, never DuckDB's own error with a stack).
 */
export async function runOnDataset<T>(
  engine: Engine,
  dir: string,
  run: () => Promise<T>,
  tables: readonly string[] = ['cells', 'snapshots', 'stacks'],
): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    await findDamagedFile(engine, dir, tables);
    throw new DatasetError(dir, `could not be ranked (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
  }
}

/**
 * Reads every column of every file of the tables (hashed): the first DuckDB cannot read throws, naming it. A name
 * ending in .parquet is a job-wide file (series.parquet), the others per-process tables.
 */
export async function findDamagedFile(engine: Engine, dir: string, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    const files = table.endsWith('.parquet') ? [join(dir, table)] : await tableFiles(dir, table);
    for (const f of files) {
      try {
        await engine.con.run(`SELECT max(hash(COLUMNS(*))) FROM read_parquet(${parquetPathSql(f)})`);
      } catch (fe) {
        throw unreadableParquet(f, fe);
      }
    }
  }
}

/** The cells of each process number what its snapshots say: a cells file missing or extra is named by folder. */
async function checkCellCounts(engine: Engine, dir: string): Promise<void> {
  const r = await runOnDataset(engine, dir, () =>
    engine.con.runAndReadAll(
      `SELECT s.process, s.want, coalesce(c.have, 0) AS have
         FROM (SELECT process, sum(cell_count) AS want FROM snapshots GROUP BY process) s
         LEFT JOIN (SELECT process, count(*) AS have FROM cells GROUP BY process) c USING (process)
        WHERE s.want <> coalesce(c.have, 0)`,
    ),
  );
  for (const row of r.getRowObjects()) {
    throw new DatasetError(
      join(dir, 'cells', `process=${String(row.process)}`),
      `holds ${String(row.have)} cells; the snapshots say ${String(row.want)} (a cells file is missing or extra)`,
    );
  }
}

/** The cells' figures a ranking reads in SQL: each finite and from 0 to 2^53, as read-dataset.ts checks in memory. */
const CELL_FIGURES = ['bytes', 'objects', 'accum_bytes', 'accum_objects', 'sd_bytes', 'var_bytes'];
/** the figures a pprof profile may hold below 0 (a delta profile's, as pprof keeps them); σ and variance never */
const SIGNED_FIGURES = new Set(['bytes', 'objects', 'accum_bytes', 'accum_objects']);

/**
 * Every cell figure is a size (dataset-values.ts's bound), or for a pprof profile's process a figure from -2^53: a
 * NaN, out-of-range or huge one is named by folder and column. NULL is what the writer leaves where a dump has no
 * such figure (accumulated ones), so it passes.
 */
export async function checkCellValues(engine: Engine, dir: string): Promise<void> {
  const lo = (c: string): string => (SIGNED_FIGURES.has(c) ? `CASE WHEN signed THEN -${MAX_COUNT} ELSE 0 END` : '0');
  const bad = (c: string): string => `NOT coalesce("${c}" BETWEEN ${lo(c)} AND ${MAX_COUNT}, true)`;
  const r = await runOnDataset(engine, dir, () =>
    engine.con.runAndReadAll(
      `SELECT process, any_value(signed) AS signed, ${CELL_FIGURES.map((c) => `CAST(any_value("${c}") FILTER (WHERE ${bad(c)}) AS VARCHAR) AS "${c}", count(*) FILTER (WHERE ${bad(c)}) AS "n_${c}"`).join(', ')}
         FROM cells LEFT JOIN (SELECT process, bool_and(format = 'pprof') AS signed FROM snapshots GROUP BY process)
           USING (process)
        GROUP BY process ORDER BY process`,
    ),
  );
  for (const row of r.getRowObjects())
    for (const c of CELL_FIGURES)
      if (Number(row[`n_${c}`]) > 0)
        throw new DatasetError(
          join(dir, 'cells', `process=${String(row.process)}`),
          `column ${c} holds ${String(row[c])} in ${String(row[`n_${c}`])} cells, not a ${row.signed === true && SIGNED_FIGURES.has(c) ? 'figure (-2^53 to 2^53)' : 'size (0 to 2^53)'}`,
        );
}

/** Growth of every stack of every process of the dataset, by process id, in rankGrowth's order. */
export async function datasetGrowth(dir: string): Promise<Map<number, StackGrowth[]>> {
  const engine = await openEngine([dir]);
  try {
    await createDatasetViews(engine, dir);
    await checkCellCounts(engine, dir);
    await checkCellValues(engine, dir);
    const reader = await runOnDataset(engine, dir, () => engine.con.runAndReadAll(growthSql()));
    const c = reader.getColumnsObject();
    const out = new Map<number, StackGrowth[]>();
    const n = reader.currentRowCount;
    for (let i = 0; i < n; i++) {
      const p = Number(c.process[i]);
      let list = out.get(p);
      if (!list) out.set(p, (list = []));
      list.push({
        stackId: Number(c.stack_id[i]),
        slopeBytesPerSnapshot: Number(c.slope_bytes_per_snapshot[i]),
        growingFraction: Number(c.growing_fraction[i]),
        r2: Number(c.r2[i]),
        firstBytes: Number(c.first_bytes[i]),
        lastBytes: Number(c.last_bytes[i]),
        deltaBytes: Number(c.delta_bytes[i]),
        steadiness: Number(c.steadiness[i]),
      });
    }
    return out;
  } finally {
    engine.close();
  }
}
