// The job's evidence files kept in a dataset (issue 49 item 5): the kernel logs, launcher and job logs, cgroup memory
// files and smaps_rollup samples ingest was given beside the dumps, copied into `evidence/` (each file's first
// MAX_EVIDENCE_BYTES, all the loader reads of it) and listed in the manifest with the paths they were given by. A
// reader gives them back as the input files they were, so core/load/evidence-load.ts applyEvidence reads them
// exactly as it reads them beside the dumps: one reader of each log, no second one for datasets.

import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InputFile } from '../../core/formats/input-file.js';
import { MAX_EVIDENCE_BYTES, readEvidence } from '../../core/load/evidence-load.js';
import { DatasetError } from './errors.js';
import { EVIDENCE_COPY, EVIDENCE_DIR, evidenceCopyName, MANIFEST_FILE, type EvidenceCopy } from './manifest.js';

/** A path longer than any a file system gives is no path ingest stored. */
const MAX_PATH_CHARS = 64 * 1024;

/**
 * Copies the files of `others` (the files no dump reader took) that the evidence readers know into `dir`/evidence/,
 * returning them in the order given. A file the readers do not know (or cannot read) is not kept: the loader
 * ignores it on the dumps too. Each file is read once, one at a time: the bytes the readers judged are the ones
 * copied (the loader's own test; the year only changes the times read, not what is known).
 */
export async function copyEvidence(dir: string, others: readonly InputFile[]): Promise<EvidenceCopy[]> {
  const kept: EvidenceCopy[] = [];
  const year = new Date().getUTCFullYear();
  for (const file of others) {
    const once = readOnce(file);
    const { unread } = await readEvidence([once.file], year, []);
    // not evidence; or unreadable (readEvidence warned of it, and so will a load of the dumps)
    const bytes = once.bytes();
    if (unread.length > 0 || bytes === null) continue;
    const copy = evidenceCopyName(file.path);
    await mkdir(join(dir, EVIDENCE_DIR), { recursive: true });
    // created exclusively under a random name (a planted link is never followed), then renamed over the copy
    const tmp = join(dir, `${copy}.${randomBytes(8).toString('hex')}.tmp`);
    await writeFile(tmp, bytes, { flag: 'wx' });
    await rename(tmp, join(dir, copy));
    kept.push({ path: file.path, size: file.size, mtimeMs: file.mtimeMs, copy });
  }
  return kept;
}

/**
 * The file as the evidence readers read it (its first MAX_EVIDENCE_BYTES, all they read of it), keeping those bytes
 * for the copy; null until read, or when the read failed.
 */
function readOnce(file: InputFile): { file: InputFile; bytes: () => Uint8Array | null } {
  const length = Math.min(file.size, MAX_EVIDENCE_BYTES);
  let kept: Uint8Array | null = null;
  return {
    file: {
      ...file,
      read: async (offset, n) => {
        const bytes = await file.read(offset, n);
        if (offset === 0 && n === length) kept = bytes;
        return bytes;
      },
    },
    bytes: () => kept,
  };
}

/** The evidence kept before (`old`) with this run's (`fresh`): a path given again takes its new copy, in its place. */
export function mergeEvidence(old: readonly EvidenceCopy[], fresh: readonly EvidenceCopy[]): EvidenceCopy[] {
  const byPath = new Map(fresh.map((e) => [e.path, e] as const));
  const out = old.map((e) => byPath.get(e.path) ?? e);
  const had = new Set(old.map((e) => e.path));
  return [...out, ...fresh.filter((e) => !had.has(e.path))];
}

/**
 * The manifest's `evidence` list checked as untrusted input: each entry a path, a size, a time and a copy named
 * `evidence/<32 hex>` (nothing that leads out of the dataset folder). Throws a DatasetError naming the manifest.
 */
export function checkEvidenceList(dir: string, value: unknown): EvidenceCopy[] {
  if (value === undefined) return []; // a dataset written before evidence was kept
  const file = join(dir, MANIFEST_FILE);
  const bad = (i: number | null, what: string): DatasetError =>
    new DatasetError(file, `${i === null ? 'evidence' : `evidence[${i}]`} ${what}`);
  if (!Array.isArray(value)) throw bad(null, 'is not a list');
  const paths = new Set<string>();
  return value.map((e: unknown, i): EvidenceCopy => {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw bad(i, 'is not an object');
    const { path, size, mtimeMs, copy } = e as Record<string, unknown>;
    if (typeof path !== 'string' || path === '' || path.length > MAX_PATH_CHARS || path.includes('\0'))
      throw bad(i, 'has no path');
    if (paths.has(path)) throw bad(i, `names ${JSON.stringify(path)} twice`);
    paths.add(path);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw bad(i, 'has a size that is not a whole number of bytes');
    if (mtimeMs !== null && (typeof mtimeMs !== 'number' || !Number.isFinite(mtimeMs)))
      throw bad(i, 'has a time that is not a number');
    if (typeof copy !== 'string' || !EVIDENCE_COPY.test(copy))
      throw bad(i, `copy ${JSON.stringify(String(copy)).slice(0, 80)} is not evidence/<32 hex digits>`);
    return { path, size, mtimeMs, copy };
  });
}

/**
 * The kept evidence as the input files it was copied from: the path and size given to ingest, the bytes of the copy
 * (a regular file in the dataset's own `evidence/`, never followed through a link). A copy that is missing or not a
 * regular file fails the read naming it.
 */
export async function evidenceFiles(dir: string, list: readonly EvidenceCopy[]): Promise<InputFile[]> {
  const out: InputFile[] = [];
  for (const e of list) {
    const at = join(dir, e.copy);
    let st;
    try {
      st = await lstat(at);
    } catch {
      throw new DatasetError(at, `missing from the dataset (the copy of ${e.path}; was it copied in full?)`);
    }
    if (!st.isFile()) throw new DatasetError(at, 'is not a regular file (a link, folder or device): refused');
    const stored = st.size;
    out.push({
      path: e.path,
      size: e.size,
      mtimeMs: e.mtimeMs,
      read: async (offset, length) => {
        const end = Math.min(offset + length, stored);
        if (end <= offset) return new Uint8Array(0);
        const fh = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        try {
          const buf = new Uint8Array(end - offset);
          let got = 0;
          while (got < buf.length) {
            const { bytesRead } = await fh.read(buf, got, buf.length - got, offset + got);
            if (bytesRead === 0) break;
            got += bytesRead;
          }
          return buf.subarray(0, got);
        } finally {
          await fh.close();
        }
      },
    });
  }
  return out;
}
