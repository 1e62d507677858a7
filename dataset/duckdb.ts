// The embedded DuckDB every dataset operation goes through: one in-memory database per operation, bounded
// memory with spilling to a temporary folder, and columnar appends (data chunks, not row-by-row calls).

import { tmpdir } from 'node:os';
import { DuckDBDataChunk, DuckDBInstance, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

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

/** Appends `rowCount` rows given as columns (one array per column, in the table's column order). */
export async function appendColumns(con: DuckDBConnection, table: string, types: readonly DuckDBType[], columns: readonly Column[], rowCount: number): Promise<void> {
  if (columns.length !== types.length) throw new Error(`appendColumns(${table}): ${columns.length} columns for ${types.length} types`);
  const appender = await con.createAppender(table);
  try {
    const chunk = DuckDBDataChunk.create(types, CHUNK_ROWS);
    const buffers: DuckDBValue[][] = types.map(() => new Array<DuckDBValue>(CHUNK_ROWS));
    for (let base = 0; base < rowCount; base += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, rowCount - base);
      for (let c = 0; c < columns.length; c++) {
        const src = columns[c];
        const buf = buffers[c];
        if (buf.length !== n) buf.length = n;
        for (let i = 0; i < n; i++) buf[i] = src[base + i];
      }
      chunk.rowCount = n;
      for (let c = 0; c < columns.length; c++) chunk.setColumnValues(c, buffers[c]);
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
