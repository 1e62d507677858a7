// The embedded DuckDB every dataset operation goes through: one in-memory database per operation, bounded
// memory with spilling to a temporary folder, and columnar appends (data chunks, not row-by-row calls).

import { tmpdir } from 'node:os';
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
  close(): void;
}

export async function openEngine(): Promise<Engine> {
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: DUCKDB_MEMORY_LIMIT,
    temp_directory: tmpdir(),
  });
  const con = await instance.connect();
  return {
    con,
    close() {
      con.closeSync();
      instance.closeSync();
    },
  };
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

/** SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}
