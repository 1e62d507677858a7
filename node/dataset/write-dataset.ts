// Writes the model (core/model/model.ts) as Parquet through DuckDB: job-wide tables (processes, files, warnings)
// as one file each, per-process tables under <table>/process=<n>/. Files are written beside their final name
// and renamed, so a run that dies leaves the previous dataset readable.

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { checkProcessId, parquetPathSql } from './tree-check.js';
import { join } from 'node:path';
import type { DuckDBValue } from '@duckdb/node-api';
import type { LoadWarning, ProcessSeries } from '../../core/model/model.js';
import { locateAddress } from '../../core/frames/frame-labels.js';
import { processIdentity } from '../../core/model/memory-context.js';
import { stackIdentityKeys } from '../../core/frames/stack-identity.js';
import { symbolEntry, type SymbolizedAddress } from '../../core/model/symbol-table.js';
import { appendColumns, sqlString, type Column, type Engine } from './duckdb.js';
import {
  CELLS_STAGE,
  CELLS_STAGE_ACCUM,
  createTableSql,
  DATASET_FORMAT,
  DATASET_VERSION,
  FILES,
  FRAMES,
  MANIFEST_FILE,
  MAPPINGS,
  PER_PROCESS_TABLES,
  PROCESSES,
  SERIES,
  SNAPSHOTS,
  STACK_FRAMES_STAGE,
  STACKS_STAGE,
  types,
  WARNINGS,
  type ColumnDef,
  type Manifest,
} from './schema.js';
import type { EvidenceCopy } from './manifest.js';
import { toTaggedJson } from './tagged-json.js';

/** Parquet options: zstd (the columns are repetitive: 16×100×5,000 cells compress to a few MB). */
const PARQUET = '(FORMAT parquet, COMPRESSION zstd)';
/**
 * series.parquet: snappy, which every Parquet reader knows (Spark, Trino, DuckDB). It is what a job-wide ranking
 * reads of every dataset (series-rank.sql, rank-dataset.ts), and decodes faster than zstd: over the 1,000-process
 * job's 25 datasets the ranking took 0.40 s CPU against 0.45 s, for 4.3 MB a dataset against 2.6 MB.
 */
const SERIES_PARQUET = '(FORMAT parquet, COMPRESSION snappy)';

export interface ProcessRecord {
  /** stable id of the process in this dataset (its partition folder) */
  id: number;
  /** with its symbols (series.symbols), written beside the stacks */
  series: ProcessSeries;
  /** the process's own warnings, in load order */
  warnings: LoadWarning[];
  /** cells per snapshot, when the snapshots' cells are not in memory (read back without them, or already written) */
  cellCounts?: number[];
  /** the host as stored (read back from the dataset, or given by `ingest --host`); else worked out (storedHost) */
  host?: StoredHost | null;
}

/** processes.host and where it came from. */
export interface StoredHost {
  name: string;
  from: 'context' | 'folder' | 'option';
}

/**
 * The host stored for a process: its capture context's hostname, else the one `ingest --host` gave, else the top
 * folder its dumps came from (ProcessSeries.host, core/model/process-host.ts).
 */
export function storedHost(rec: Pick<ProcessRecord, 'series' | 'host'>): StoredHost | null {
  const context = processIdentity(rec.series)?.hostname ?? '';
  if (context !== '') return { name: context, from: 'context' };
  if (rec.host?.from === 'option') return rec.host;
  if (rec.series.host) return { name: rec.series.host, from: 'folder' };
  return rec.host?.from === 'folder' ? rec.host : null;
}

export interface FileRecord {
  path: string;
  size: number;
  mtimeMs: number | null;
  status: 'dump' | 'failed' | 'side' | 'ignored';
  process: number | null;
}

export function partitionDir(dir: string, table: string, processId: number): string {
  // a partition is named by a whole number, never by text read from a file (which could be a path)
  return join(dir, table, `process=${checkProcessId(processId, join(dir, 'processes.parquet'))}`);
}

/** Stages `rows` columns in a temp table and copies it to `file` (written as file.tmp, then renamed). */
async function writeTable(
  engine: Engine,
  name: string,
  cols: readonly ColumnDef[],
  columns: readonly Column[],
  rows: number,
  file: string,
  select?: string,
): Promise<void> {
  await engine.con.run(createTableSql(name, cols));
  await appendColumns(engine.con, name, types(cols), columns, rows);
  // a random name: a link planted under a predictable temporary name cannot redirect the write
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  await engine.con.run(`COPY (${select ?? `SELECT * FROM ${name}`}) TO ${sqlString(tmp)} ${PARQUET}`);
  await rename(tmp, file);
  await engine.con.run(`DROP TABLE ${name}`);
}

/** Removes every partition of a process (before it is written again in full). */
export async function removeProcess(dir: string, processId: number): Promise<void> {
  for (const t of PER_PROCESS_TABLES) await rm(partitionDir(dir, t, processId), { recursive: true, force: true });
}

/**
 * Writes one process: snapshots, stacks, frames and mappings in full, and the cells of snapshots
 * `cellsFrom`… as a new file named after `runName` (earlier snapshots' cells are already in earlier files).
 */
export async function writeProcess(
  engine: Engine,
  dir: string,
  rec: ProcessRecord,
  cellsFrom: number,
  runName: string,
  before: PreviousCells | null = null,
): Promise<void> {
  const p = rec.series;
  for (const t of PER_PROCESS_TABLES) await mkdir(partitionDir(dir, t, rec.id), { recursive: true });
  const part = (t: string) => join(partitionDir(dir, t, rec.id), 'data.parquet');

  // snapshots
  const s = p.snapshots;
  const damage = new Map<string, string[]>();
  for (const w of rec.warnings) {
    const list = damage.get(w.file) ?? [];
    list.push(`${w.line !== undefined ? `line ${w.line}: ` : ''}${w.message}`);
    damage.set(w.file, list);
  }
  await writeTable(
    engine,
    'st_snapshots',
    SNAPSHOTS,
    [
      s.map((_, i) => i),
      s.map((x) => x.file),
      s.map((x) => big(x.seq)),
      s.map((x) => x.trigger),
      s.map((x) => big(x.triggerSeq)),
      s.map((x) => x.mtimeMs),
      s.map((x) => x.format),
      s.map((x) => x.samplePeriod),
      s.map((x) => x.live.bytes),
      s.map((x) => x.live.objects),
      s.map((x) => x.accumulated.bytes),
      s.map((x) => x.accumulated.objects),
      s.map((x) => x.header.live.bytes),
      s.map((x) => x.header.live.objects),
      s.map((x) => x.header.accumulated.bytes),
      s.map((x) => x.header.accumulated.objects),
      s.map((x) => x.headerLiveBytes),
      s.map((x) => x.hasAccumulated),
      s.map((x) => x.complete),
      s.map((x) => x.accumBytes !== null),
      s.map((x) => big(x.truncated?.byteOffset ?? null)),
      s.map((x) => big(x.truncated?.line ?? null)),
      s.map((x) => damage.get(x.file)?.join('\n') ?? null),
      s.map((x) => x.mapsSource),
      s.map((x) => JSON.stringify(x.threads)),
      s.map((x) => ('context' in x ? toTaggedJson(x.context ?? null) : null)),
      s.map((x, i) => rec.cellCounts?.[i] ?? x.stackIds.length),
    ],
    s.length,
    part('snapshots'),
  );

  // stacks: staged one row per frame, folded into a list per stack
  const { offsets, frames, allocatorDepth, count } = p.stacks;
  const fStack = new Uint32Array(frames.length);
  const fDepth = new Uint32Array(frames.length);
  for (let id = 0; id < count; id++) {
    for (let k = offsets[id]; k < offsets[id + 1]; k++) {
      fStack[k] = id;
      fDepth[k] = k - offsets[id];
    }
  }
  await engine.con.run(createTableSql('st_stack_frames', STACK_FRAMES_STAGE));
  await appendColumns(
    engine.con,
    'st_stack_frames',
    types(STACK_FRAMES_STAGE),
    [fStack, fDepth, Int32Array.from(frames)],
    frames.length,
  );
  const ids = Array.from({ length: count }, (_, i) => i);
  await writeTable(
    engine,
    'st_stacks',
    STACKS_STAGE,
    [ids, allocatorDepth.slice(0, count), stackIdentityKeys(p)],
    count,
    part('stacks'),
    `SELECT s.stack_id, s.allocator_depth,
            coalesce(list(f.address_id ORDER BY f.depth) FILTER (WHERE f.address_id IS NOT NULL), []::INTEGER[]) AS frames,
            s.stack_key
       FROM st_stacks s LEFT JOIN st_stack_frames f USING (stack_id)
      GROUP BY s.stack_id, s.allocator_depth, s.stack_key ORDER BY s.stack_id`,
  );
  await engine.con.run('DROP TABLE st_stack_frames');

  await writeFrames(engine, rec, part('frames'));
  await writeMappings(engine, p, part('mappings'));
  await writeCells(engine, p, cellsFrom, join(partitionDir(dir, 'cells', rec.id), `${runName}.parquet`), before);
  await collectSeries(engine, dir, rec.id);
}

/** The temp table where a run gathers the `series` rows of the processes it writes (series.parquet at the end). */
const SERIES_ACC = 'acc_series';

/**
 * The process's `series` rows (schema.ts SERIES) from its cells files, all runs: one GROUP BY over one process's
 * cells, gathered for writeJobTables (a process written again replaces its rows whole, so no reader combines runs).
 */
async function collectSeries(engine: Engine, dir: string, id: number): Promise<void> {
  const cdir = partitionDir(dir, 'cells', id);
  const cells = (await readdir(cdir)).filter((n) => n.endsWith('.parquet')).sort();
  const sdir = partitionDir(dir, 'snapshots', id);
  const kdir = partitionDir(dir, 'stacks', id);
  const from =
    cells.length === 0
      ? `(SELECT CAST(NULL AS INTEGER) AS snapshot, CAST(NULL AS INTEGER) AS stack_id, 0e0 AS bytes, 0e0 AS var_bytes, CAST(NULL AS BOOLEAN) AS rose WHERE false)`
      : `read_parquet([${cells.map((n) => parquetPathSql(join(cdir, n))).join(', ')}])`;
  await engine.con.run(
    `CREATE TEMP TABLE IF NOT EXISTS ${SERIES_ACC} (${SERIES.map((c) => `"${c.name}" ${c.sql}`).join(', ')})`,
  );
  await engine.con.run(`DELETE FROM ${SERIES_ACC} WHERE process = ${id}`);
  // points: the complete snapshots in order (core/stats/patterns.ts seriesFrame), t = 0…n−1
  await engine.con.run(
    `INSERT INTO ${SERIES_ACC}
      WITH pts AS (
        SELECT snapshot, CAST(row_number() OVER (ORDER BY snapshot) - 1 AS DOUBLE) AS t, CAST(count(*) OVER () AS DOUBLE) AS n
          FROM read_parquet(${parquetPathSql(join(sdir, 'data.parquet'))}) WHERE complete),
      c AS (
        SELECT c.stack_id, c.bytes AS y, c.var_bytes AS v, c.rose, p.t, p.n
          FROM ${from} c JOIN pts p ON p.snapshot = c.snapshot),
      a AS (
        SELECT stack_id, max(n) AS n, count(*) AS present,
               sum(y) AS sum_y, sum(t * y) AS sum_ty, sum(y * y) AS sum_yy, sum(v) AS sum_var,
               count(*) FILTER (WHERE t > 0 AND rose) AS grew,
               sum(CASE WHEN t = 0 THEN y ELSE 0 END) AS first_y, sum(CASE WHEN t = 0 THEN v ELSE 0 END) AS first_var,
               sum(CASE WHEN t = n - 1 THEN y ELSE 0 END) AS last_y, sum(CASE WHEN t = n - 1 THEN v ELSE 0 END) AS last_var,
               sum(CASE WHEN t = n - 2 THEN y ELSE 0 END) AS prev_y, sum(CASE WHEN t = n - 2 THEN v ELSE 0 END) AS prev_var,
               max(y) AS max_y, bool_or(t < n - 1) AS before_last
          FROM c GROUP BY stack_id)
      SELECT ${id}, a.stack_id, k.stack_key, CAST(a.n AS INTEGER), CAST(a.present AS INTEGER),
             a.n * (a.n - 1) / 2, (a.n - 1) * a.n * (2 * a.n - 1) / 6,
             a.sum_y, a.sum_ty, a.sum_yy, a.sum_var, CAST(a.grew AS INTEGER),
             a.first_y, a.first_var, a.last_y, a.last_var, a.prev_y, a.prev_var, a.max_y, a.before_last
        FROM a JOIN read_parquet(${parquetPathSql(join(kdir, 'data.parquet'))}) k ON k.stack_id = a.stack_id`,
  );
}

/**
 * series.parquet: the rows this run gathered, and the earlier file's rows of the processes it left as they were
 * (a process of the dataset only: one dropped since has none).
 */
async function writeSeriesFile(engine: Engine, dir: string, ids: readonly number[]): Promise<void> {
  const file = join(dir, 'series.parquet');
  await engine.con.run(
    `CREATE TEMP TABLE IF NOT EXISTS ${SERIES_ACC} (${SERIES.map((c) => `"${c.name}" ${c.sql}`).join(', ')})`,
  );
  let old = '';
  try {
    await stat(file);
    old = ` UNION ALL SELECT ${SERIES.map((c) => `"${c.name}"`).join(', ')} FROM read_parquet(${parquetPathSql(file)})
             WHERE process NOT IN (SELECT process FROM ${SERIES_ACC})`;
  } catch {
    // the first run: no earlier file
  }
  const keep = ids.length > 0 ? ids.map((i) => String(Math.trunc(i))).join(', ') : 'NULL';
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  await engine.con.run(
    `COPY (SELECT * FROM (SELECT * FROM ${SERIES_ACC}${old}) WHERE process IN (${keep}) ORDER BY process, stack_id)
       TO ${sqlString(tmp)} ${SERIES_PARQUET}`,
  );
  await rename(tmp, file);
  await engine.con.run(`DROP TABLE ${SERIES_ACC}`);
}

function big(v: number | null): bigint | null {
  return v === null ? null : BigInt(v);
}

async function writeFrames(engine: Engine, rec: ProcessRecord, file: string): Promise<void> {
  const p = rec.series;
  const py = p.pythonFrames?.frames ?? null;
  const cols: DuckDBValue[][] = FRAMES.map(() => []);
  const push = (id: number, role: string, sym: SymbolizedAddress | undefined) => {
    const loc = locateAddress(p, id);
    const pyf = py?.get(loc.address);
    const outer = sym?.frames[sym.frames.length - 1];
    const kind = pyf || sym?.python ? 'python' : 'native';
    const row: DuckDBValue[] = [
      id,
      loc.address,
      role,
      kind,
      loc.module,
      loc.moduleOffset,
      pyf ? pyf.function : (outer?.function ?? null),
      pyf ? pyf.file : (outer?.file ?? null),
      pyf ? big(pyf.line) : big(outer?.line ?? null),
      sym ? JSON.stringify(sym) : null,
    ];
    row.forEach((v, c) => cols[c].push(v));
  };
  for (let id = 0; id < p.addresses.hex.length; id++) {
    const leaf = symbolEntry(p, id, false);
    const caller = symbolEntry(p, id, true);
    if (leaf) push(id, 'leaf', leaf);
    if (caller) push(id, 'caller', caller);
    if (!leaf && !caller) push(id, '', undefined);
  }
  await writeTable(engine, 'st_frames', FRAMES, cols, cols[0].length, file);
}

async function writeMappings(engine: Engine, p: ProcessSeries, file: string): Promise<void> {
  const m = p.maps ?? [];
  await writeTable(
    engine,
    'st_mappings',
    MAPPINGS,
    [
      m.map((_, i) => i),
      m.map((x) => x.start),
      m.map((x) => x.end),
      m.map((x) => x.perms),
      m.map((x) => x.offset),
      m.map((x) => x.dev),
      m.map((x) => BigInt(x.inode)),
      m.map((x) => x.path),
      m.map((x) => x.deleted),
    ],
    m.length,
    file,
  );
}

/** The cells of the snapshot before the first one written (when appending), for `rose`. */
export interface PreviousCells {
  stackIds: ArrayLike<number>;
  liveBytes: ArrayLike<number>;
}

async function writeCells(
  engine: Engine,
  p: ProcessSeries,
  from: number,
  file: string,
  before: PreviousCells | null,
): Promise<void> {
  const snaps = p.snapshots.slice(from);
  const rows = snaps.reduce((n, s) => n + s.stackIds.length, 0);
  if (rows === 0) return;
  const withAccum = snaps.some((s) => s.accumBytes !== null);
  const snapshot = new Uint32Array(rows);
  const stack = new Uint32Array(rows);
  const objects = new Float64Array(rows);
  const bytes = new Float64Array(rows);
  const variance = new Float64Array(rows);
  const accumObjects = withAccum ? new Float64Array(rows) : null;
  const accumBytes = withAccum ? new Float64Array(rows) : null;
  // rose: live bytes above the previous snapshot's for the same stack (0 where it was absent), as rankGrowth
  // counts growing intervals; kept per cell so SQL counts them without pairing cells across snapshots
  const rose = new Uint8Array(rows);
  const prev = new Float64Array(p.stacks.count);
  let prevIds: ArrayLike<number> = before?.stackIds ?? [];
  if (before) for (let i = 0; i < before.stackIds.length; i++) prev[before.stackIds[i]] += before.liveBytes[i];
  let r = 0;
  snaps.forEach((s, j) => {
    const index = from + j;
    for (let i = 0; i < s.stackIds.length; i++, r++) {
      snapshot[r] = index;
      stack[r] = s.stackIds[i];
      objects[r] = s.liveObjects[i];
      bytes[r] = s.liveBytes[i];
      variance[r] = s.liveVarBytes[i];
      if (accumObjects && accumBytes) {
        accumObjects[r] = s.accumObjects ? s.accumObjects[i] : NaN;
        accumBytes[r] = s.accumBytes ? s.accumBytes[i] : NaN;
      }
      rose[r] = s.liveBytes[i] > prev[s.stackIds[i]] ? 1 : 0;
    }
    for (let i = 0; i < prevIds.length; i++) prev[prevIds[i]] = 0;
    for (let i = 0; i < s.stackIds.length; i++) prev[s.stackIds[i]] += s.liveBytes[i];
    prevIds = s.stackIds;
  });
  const seqs = snaps.map((s) => (s.seq === null ? 'NULL' : String(Math.trunc(s.seq))));
  const accum = (c: string) => (withAccum ? `CASE WHEN isnan(${c}) THEN NULL ELSE ${c} END` : 'CAST(NULL AS DOUBLE)');
  // a projection of one staged table keeps the rows in the order they were appended (the dump's order)
  const select = `SELECT snapshot, CAST(([${seqs.join(', ')}]::BIGINT[])[snapshot - ${from} + 1] AS BIGINT) AS seq, stack_id, objects, bytes,
      ${accum('accum_objects')} AS accum_objects, ${accum('accum_bytes')} AS accum_bytes,
      CASE WHEN var_bytes > 0 THEN sqrt(var_bytes) ELSE 0 END AS sd_bytes, var_bytes,
      CASE WHEN snapshot = 0 THEN NULL ELSE rose END AS rose
    FROM st_cells`;
  const cols = withAccum ? [...CELLS_STAGE, ...CELLS_STAGE_ACCUM] : CELLS_STAGE;
  const data: Column[] = [snapshot, stack, objects, bytes, variance, rose];
  if (accumObjects && accumBytes) data.push(accumObjects, accumBytes);
  await writeTable(engine, 'st_cells', cols, data, rows, file, select);
}

export interface JobTables {
  processes: ProcessRecord[];
  files: FileRecord[];
  /** warnings about shared side files (maps files), before every process's own */
  jobWarnings: LoadWarning[];
  /** warnings of dump groups that gave no process, by their process key */
  orphanWarnings: ReadonlyMap<string, LoadWarning[]>;
  /** the evidence files kept in `evidence/` (evidence-copies.ts), listed in the manifest */
  evidence?: readonly EvidenceCopy[];
}

/** Writes processes, files and warnings (whole, every run) and the manifest last. */
export async function writeJobTables(engine: Engine, dir: string, t: JobTables, runs: number): Promise<void> {
  const ps = t.processes;
  await writeTable(
    engine,
    'st_processes',
    PROCESSES,
    [
      ps.map((r) => r.id),
      ps.map((r) => r.series.key),
      ps.map((r) => big(r.series.pid)),
      ps.map((r) => big(r.series.pidNamespace)),
      ps.map((r) => r.series.prefix),
      ps.map((r) => r.series.endedWithoutFinalDump),
      ps.map((r) => r.series.snapshots.length),
      ps.map((r) => r.series.stacks.count),
      ps.map((r) => r.series.addresses.hex.length),
      ps.map((r) => r.series.maps !== null),
      ps.map((r) => (r.series.pythonFrames ? toTaggedJson(r.series.pythonFrames) : null)),
      ps.map((r) => r.series.symbols !== null),
      ps.map((r) => (r.series.symbols ? JSON.stringify(r.series.symbols.modules) : null)),
      ps.map((r) => storedHost(r)?.name ?? null),
      ps.map((r) => storedHost(r)?.from ?? null),
    ],
    ps.length,
    join(dir, 'processes.parquet'),
  );
  await writeSeriesFile(
    engine,
    dir,
    ps.map((r) => r.id),
  );
  const f = t.files;
  await writeTable(
    engine,
    'st_files',
    FILES,
    [
      f.map((x) => x.path),
      f.map((x) => BigInt(x.size)),
      f.map((x) => x.mtimeMs),
      f.map((x) => x.status),
      f.map((x) => x.process),
    ],
    f.length,
    join(dir, 'files.parquet'),
  );
  const w: { process: number | null; group: string | null; ordinal: number; w: LoadWarning }[] = [];
  t.jobWarnings.forEach((x, i) => w.push({ process: null, group: null, ordinal: i, w: x }));
  for (const [key, list] of t.orphanWarnings)
    list.forEach((x, i) => w.push({ process: null, group: key, ordinal: i, w: x }));
  for (const r of ps) r.warnings.forEach((x, i) => w.push({ process: r.id, group: null, ordinal: i, w: x }));
  await writeTable(
    engine,
    'st_warnings',
    WARNINGS,
    [
      w.map((x) => x.process),
      w.map((x) => x.ordinal),
      w.map((x) => x.group),
      w.map((x) => x.w.file),
      w.map((x) => big(x.w.line ?? null)),
      w.map((x) => big(x.w.byteOffset ?? null)),
      w.map((x) => x.w.message),
    ],
    w.length,
    join(dir, 'warnings.parquet'),
  );
  const manifest: Manifest = {
    format: DATASET_FORMAT,
    version: DATASET_VERSION,
    writer: 'heaplens 0.1.0',
    updated: new Date().toISOString(),
    runs,
    ...(t.evidence && t.evidence.length > 0 ? { evidence: [...t.evidence] } : {}),
  };
  // created exclusively under a random name (a planted link is never followed), then renamed over the manifest
  const tmp = join(dir, `${MANIFEST_FILE}.${randomBytes(8).toString('hex')}.tmp`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n', { flag: 'wx' });
  await rename(tmp, join(dir, MANIFEST_FILE));
}
