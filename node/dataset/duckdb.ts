// The embedded DuckDB every dataset operation goes through: one in-memory database per operation, bounded
// memory with spilling to a private temporary folder, no access outside the dataset, and columnar appends (data
// chunks, not row-by-row calls).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import {
  DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBVector,
} from '@duckdb/node-api';

/**
 * DuckDB spills grouping, sorting and window operators past this to `temp_directory`: a 64 × 200 × 20,000 job
 * (256 M cells) ranked in 378 MB peak RSS under it (docs/next-features.md §5).
 */
export const DUCKDB_MEMORY_LIMIT = '1GB';
/** Rows per appended data chunk: DuckDB's own vector size, so each chunk is one vector per column. */
const CHUNK_ROWS = 2048;

export interface Engine {
  con: DuckDBConnection;
  /** the engine's own spill folder (mode 700), removed by close() */
  tempDir: string;
  close(): void;
}

/**
 * An in-memory DuckDB that may read and write files only under `dirs` (a dataset's folder) and spills only into
 * a folder of its own. DuckDB's defaults were a shared `/tmp/duckdb_temp_storage_DEFAULT-0.tmp`: two processes
 * spilling at once overwrote each other's blocks (5 of 6 died of SIGSEGV) and a link planted at that name was
 * written through (issue 46 S9). Datasets are untrusted too: no SQL may reach other files, install or load an
 * extension (that is a download and native code), and the configuration is locked so that no statement can
 * change that.
 */
export async function openEngine(
  dirs: readonly string[],
  options: { memoryLimit?: string; threads?: number } = {},
): Promise<Engine> {
  // mkdtemp makes the folder mode 700, with a random name no one else can have made
  const tempDir = mkdtempSync(join(tmpdir(), 'heaplens-duckdb-'));
  let instance: DuckDBInstance | null = null;
  try {
    instance = await DuckDBInstance.create(':memory:', {
      memory_limit: options.memoryLimit ?? DUCKDB_MEMORY_LIMIT,
      temp_directory: tempDir,
      autoload_known_extensions: 'false',
      autoinstall_known_extensions: 'false',
      // DuckDB's default: one thread per core
      ...(options.threads !== undefined ? { threads: String(options.threads) } : {}),
    });
    const con = await instance.connect();
    // allowed_directories matches by prefix: each ends with a separator, so /data/ds does not admit /data/ds-other
    // and as the queries spell it: a glob character in a path is escaped there (escapeGlob), and DuckDB
    // compares the text
    const allowed = [...dirs, tempDir].flatMap((d) => {
      const p = resolve(d) + sep;
      return [...new Set([p, escapeGlob(p)])].map(sqlString);
    });
    await con.run(`SET allowed_directories = [${allowed.join(', ')}]`);
    await con.run('SET enable_external_access = false');
    await con.run('SET lock_configuration = true');
    const db = instance;
    return {
      con,
      tempDir,
      close() {
        try {
          con.closeSync();
          db.closeSync();
        } finally {
          rmSync(tempDir, { recursive: true, force: true });
        }
      },
    };
  } catch (e) {
    instance?.closeSync();
    rmSync(tempDir, { recursive: true, force: true });
    throw e;
  }
}

export type Column = ArrayLike<DuckDBValue>;

type Typed = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/**
 * The vector's own staging array (DuckDB's fixed-width vectors keep one, copied to native memory by flush()),
 * to fill from a typed column in one `set` instead of a call per value; null when this version of the
 * library keeps none, or the widths differ (then values go one by one).
 */
function stagingArray(vector: DuckDBVector, src: Column, n: number): Typed | null {
  if (!ArrayBuffer.isView(src)) return null;
  const v = vector as unknown as { items?: unknown; dataView?: unknown };
  const items = v.items;
  if (items instanceof Float64Array || items instanceof Int32Array || items instanceof Uint32Array) {
    if (items.length !== n || (src as Typed).BYTES_PER_ELEMENT !== items.BYTES_PER_ELEMENT) return null;
    return items;
  }
  const dv = v.dataView;
  if (dv instanceof DataView && dv.byteLength === n && src instanceof Uint8Array)
    return new Uint8Array(dv.buffer, dv.byteOffset, n);
  return null;
}

/**
 * Appends `rowCount` rows given as columns (one array per column, in the table's column order). Typed-array
 * columns of fixed-width types are copied a chunk at a time; other columns (strings, nulls) value by value.
 */
export async function appendColumns(
  con: DuckDBConnection,
  table: string,
  types: readonly DuckDBType[],
  columns: readonly Column[],
  rowCount: number,
): Promise<void> {
  if (columns.length !== types.length)
    throw new Error(`appendColumns(${table}): ${columns.length} columns for ${types.length} types`);
  const appender = await con.createAppender(table);
  try {
    const chunk = DuckDBDataChunk.create(types, CHUNK_ROWS);
    const buffers: DuckDBValue[][] = types.map(() => new Array<DuckDBValue>(CHUNK_ROWS));
    for (let base = 0; base < rowCount; base += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, rowCount - base);
      chunk.rowCount = n;
      for (let c = 0; c < columns.length; c++) {
        const src = columns[c];
        const vector = chunk.getColumnVector(c);
        const staging = stagingArray(vector, src, n);
        if (staging) {
          staging.set((src as Typed).subarray(base, base + n));
          vector.flush();
          continue;
        }
        const buf = buffers[c];
        if (buf.length !== n) buf.length = n;
        for (let i = 0; i < n; i++) buf[i] = src[base + i];
        chunk.setColumnValues(c, buf);
      }
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** DuckDB's glob characters escaped ([, *, ? each as a one-character class): the path is read as written. */
export function escapeGlob(path: string): string {
  return path.replace(/[[*?]/g, (c) => `[${c}]`);
}

/** SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * A numeric column of a result chunk. DuckDB's fixed-width vectors expose their data as a typed array: it is
 * returned as is (a view, valid until the next chunk), instead of a call per value, which cost 3/4 of reading a
 * dataset's cells. Nulls, other widths or a library version without `items` go value by value (null → NaN).
 */
export function chunkNumbers(chunk: DuckDBDataChunk, column: number): ArrayLike<number> {
  const vector = chunk.getColumnVector(column);
  const v = vector as unknown as { items?: unknown; validity?: { data?: unknown } };
  if (
    (v.items instanceof Float64Array || v.items instanceof Int32Array) &&
    v.validity &&
    allValid(v.validity.data, v.items.length)
  )
    return v.items;
  const out = new Float64Array(chunk.rowCount);
  for (let i = 0; i < out.length; i++) {
    const x = vector.getItem(i);
    out[i] = x === null ? Number.NaN : Number(x);
  }
  return out;
}

/** A validity mask (null: all valid; else one bit per row, set when valid) with no row null. */
function allValid(mask: unknown, n: number): boolean {
  if (mask === null) return true;
  if (!(mask instanceof BigUint64Array)) return false;
  const full = Math.floor(n / 64);
  for (let w = 0; w < full; w++) if (mask[w] !== 0xffffffffffffffffn) return false;
  const rest = n % 64;
  return rest === 0 || (mask[full] & ((1n << BigInt(rest)) - 1n)) === (1n << BigInt(rest)) - 1n;
}

/**
 * Runs `sql` and hands over its result a chunk (2,048 rows) at a time, never as JS values per row. The result is
 * materialized in DuckDB first: a streamed result ran the growth queries 2.5× slower (fewer threads).
 */
export async function forEachChunk(
  con: DuckDBConnection,
  sql: string,
  visit: (chunk: DuckDBDataChunk) => void,
): Promise<void> {
  const result = await con.run(sql);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    visit(chunk);
  }
}
