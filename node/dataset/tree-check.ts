// A dataset folder is untrusted input: it may have been copied from anywhere, with links or special files in it.
// Before DuckDB opens any of its files, and before ingest removes or writes a partition, every table folder,
// partition and file is checked with lstat: no symbolic link (which would let a read or a delete reach outside the
// dataset), only regular files (a FIFO would block a read for good), partition names `process=<n>` with n a small
// whole number, only regular files in `evidence/`, and a manifest of sane size. DuckDB globs the paths it is given, so every path handed to it goes
// through `parquetPathSql`, which escapes the glob characters: a folder named `ds[1]` never reads `ds1/`.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeGlob, sqlString } from './duckdb.js';

export { escapeGlob };
import { DatasetError } from './errors.js';
import { EVIDENCE_DIR, MANIFEST_FILE } from './manifest.js';
import { PER_PROCESS_TABLES } from './schema.js';

/** The manifest is a few KiB; anything past this is not one (and is not read whole). */
export const MAX_MANIFEST_BYTES = 16 << 20;
/** More partitions than processes any job has: a folder past this is refused before it is listed further. */
export const MAX_PARTITIONS = 1_000_000;
const TOP_FILES = ['processes.parquet', 'files.parquet', 'warnings.parquet', 'series.parquet'];

/** A dataset process id as a partition name may hold it: a whole number, not a path. */
export function checkProcessId(id: unknown, where: string): number {
  if (typeof id === 'bigint' && id >= 0n && id <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(id);
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
    throw new DatasetError(where, `process id ${JSON.stringify(String(id)).slice(0, 60)} is not a whole number`);
  return id;
}

async function entry(path: string): Promise<'dir' | 'file' | null> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return null;
  }
  if (st.isSymbolicLink())
    throw new DatasetError(path, 'is a symbolic link: a dataset holds its own files (copy it with cp -rL)');
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  throw new DatasetError(path, 'is not a regular file (a FIFO, socket or device): refused');
}

/**
 * Checks the dataset folder `dir` (whose manifest was found) before any of its files is opened or changed.
 * Throws a DatasetError naming the first bad path.
 */
export async function checkDatasetTree(dir: string): Promise<void> {
  const manifest = join(dir, MANIFEST_FILE);
  if ((await entry(manifest)) === 'file') {
    const size = (await lstat(manifest)).size;
    if (size > MAX_MANIFEST_BYTES)
      throw new DatasetError(manifest, `is ${size} bytes; a manifest is a few KiB (not read)`);
  }
  for (const f of TOP_FILES) {
    const kind = await entry(join(dir, f));
    if (kind === 'dir') throw new DatasetError(join(dir, f), 'is a folder, not a Parquet file');
  }
  for (const table of PER_PROCESS_TABLES) {
    const tdir = join(dir, table);
    const kind = await entry(tdir);
    if (kind === null) continue;
    if (kind !== 'dir') throw new DatasetError(tdir, 'is a file, not the table folder');
    const parts = await readdir(tdir);
    if (parts.length > MAX_PARTITIONS) throw new DatasetError(tdir, `holds ${parts.length} entries`);
    for (const p of parts) {
      const pdir = join(tdir, p);
      const pk = await entry(pdir);
      if (!/^process=\d{1,15}$/.test(p)) {
        if (pk === 'dir') throw new DatasetError(pdir, 'is not a partition folder process=<n>');
        continue; // a stray file beside the partitions is never read
      }
      if (pk !== 'dir') throw new DatasetError(pdir, 'is a file, not a partition folder');
      for (const f of await readdir(pdir)) await entry(join(pdir, f));
    }
  }
  // the kept evidence files (evidence-copies.ts): a folder of regular files, no link
  const edir = join(dir, EVIDENCE_DIR);
  const ekind = await entry(edir);
  if (ekind === 'file') throw new DatasetError(edir, 'is a file, not the evidence folder');
  if (ekind === 'dir') {
    const names = await readdir(edir);
    if (names.length > MAX_PARTITIONS) throw new DatasetError(edir, `holds ${names.length} entries`);
    for (const f of names) await entry(join(edir, f));
  }
}

/** One job-wide file of a dataset (series.parquet, processes.parquet): a regular file, not a link; missing is named. */
export async function checkTopFile(file: string): Promise<void> {
  const kind = await entry(file);
  if (kind === null) throw new DatasetError(file, 'missing from the dataset (was it copied in full?)');
  if (kind === 'dir') throw new DatasetError(file, 'is a folder, not a Parquet file');
}

/** A path as a DuckDB string literal naming exactly that file (no glob, quotes doubled). */
export function parquetPathSql(path: string): string {
  return sqlString(escapeGlob(path));
}
