// Node implementation of InputFile: files and folders (recursive) from the command line.

import { closeSync, openSync, readSync } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { InputFile } from '../../core/formats/input-file.js';
import { looksLikeDumpName, parseDumpName, sideFilesOfDump } from '../../core/formats/dump-filename.js';

// Absolute path of each InputFile made here, so a worker thread can open the same file by itself.
const absPaths = new WeakMap<InputFile, string>();

/** The file's absolute path when it is a local file made by nodeInputFile, else null. */
export function nodeFilePath(file: InputFile): string | null {
  return absPaths.get(file) ?? null;
}

/**
 * Reads of at most this many bytes are made in the calling thread when a file is opened with `blocking` (the
 * parser's pieces are 4 MiB: read-dump.ts READ_CHUNK).
 */
export const BLOCKING_READ_MAX = 4 * 1024 * 1024;

/**
 * A local file. `blocking`: reads up to BLOCKING_READ_MAX bytes wait in the calling thread (open, read, close
 * without returning to its event loop), for a dump reader's worker thread, which reads one file at a time and has
 * nothing else to do meanwhile (so a cold disk costs it what it did: one read at a time). Through the I/O threads,
 * each small dump's open, read and close (and its sidecar's) were round trips the reader waited for: on the
 * 1,000-process job the readers were idle a third of the load with a core free, and `summary` took 18.3-18.6 s
 * against 13.3-14.0 s with blocking reads. Other threads read through the I/O threads: the merging thread sniffs
 * many files at once, which a disk serves faster together.
 */
export function nodeInputFile(
  absPath: string,
  displayPath: string,
  size: number,
  mtimeMs: number | null,
  options: { blocking?: boolean } = {},
): InputFile {
  const blocking = options.blocking === true;
  const file: InputFile = {
    path: displayPath,
    size,
    mtimeMs,
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (blocking && length <= BLOCKING_READ_MAX) return readBlocking(absPath, offset, length);
      const fh = await open(absPath, 'r');
      try {
        const buf = new Uint8Array(length);
        let got = 0;
        while (got < length) {
          const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return got === length ? buf : buf.subarray(0, got);
      } finally {
        await fh.close();
      }
    },
  };
  absPaths.set(file, absPath);
  return file;
}

/** Bytes [offset, offset + length) of the file, read in this thread; shorter at the end of the file. */
function readBlocking(absPath: string, offset: number, length: number): Uint8Array {
  const fd = openSync(absPath, 'r');
  try {
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return got === length ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

function baseOf(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf(sep));
  return i >= 0 ? p.slice(i + 1) : p;
}

export interface CollectProblem {
  path: string;
  message: string;
}

/** Names in a folder (empty when it cannot be listed). */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** A file to add: its absolute path, the path shown, its size and mtime. */
interface Found {
  abs: string;
  shown: string;
  size: number;
  mtimeMs: number;
}
/** What one path gives, in the order of its files: a file, or a problem to say. */
type Item = Found | CollectProblem;

/** The file's entry, or null when it is gone or not a regular file. */
async function statFile(abs: string, shown: string): Promise<Found | null> {
  try {
    const s = await stat(abs);
    return s.isFile() ? { abs, shown, size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch {
    return null; // gone between listing and stat: nothing to add
  }
}

/**
 * Expands files and folders into InputFiles. Paths inside a folder are shown relative to the folder's
 * parent (so "job/exact.1.0.m0.heap"), files given directly as given. Hidden entries are skipped. A dump
 * named alone brings the side files beside it (`<dump>.pyframes`, the maps, `perf-<pid>.map`), exactly as
 * its folder would: they are shown with the dump's own directory prefix.
 *
 * The stats and listings are asked all at once and each folder is listed once (a shell's `dumps/*.heap*` names
 * hundreds of files in one folder: one after another, their stats and listings took ~50 ms of a command's start),
 * and the files are given out in the order the paths and sorted listings name them.
 */
export async function collectInputFiles(
  paths: readonly string[],
  problems: CollectProblem[] = [],
): Promise<InputFile[]> {
  const listings = new Map<string, Promise<string[]>>();
  const listing = (dir: string): Promise<string[]> => {
    let l = listings.get(dir);
    if (l === undefined) listings.set(dir, (l = namesIn(dir)));
    return l;
  };
  const walk = async (dir: string, root: string): Promise<Item[]> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      return [{ path: dir, message: `cannot list folder: ${String(e)}` }];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const parts = await Promise.all(
      entries.map(async (ent): Promise<readonly Item[]> => {
        if (ent.name.startsWith('.')) return [];
        const full = join(dir, ent.name);
        if (ent.isDirectory()) return walk(full, root);
        if (!ent.isFile()) return [];
        const f = await statFile(full, relative(root, full));
        return f ? [f] : [];
      }),
    );
    return parts.flat();
  };
  const expand = async (p: string): Promise<readonly Item[]> => {
    const abs = resolve(p);
    let st;
    try {
      st = await stat(abs);
    } catch (e) {
      return [
        { path: p, message: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : String(e) },
      ];
    }
    if (st.isDirectory()) return walk(abs, resolve(abs, '..'));
    if (!st.isFile()) return [];
    const self: Found = { abs, shown: p, size: st.size, mtimeMs: st.mtimeMs };
    const name = basename(abs);
    if (!looksLikeDumpName(name)) return [self];
    const dir = dirname(abs);
    const pid = parseDumpName(name)?.pid;
    const [names, procNames] = await Promise.all([
      listing(dir),
      pid !== undefined ? listing(join(dir, 'proc', String(pid))) : [],
    ]);
    const shownDir = p.slice(0, p.length - baseOf(p).length);
    const sides = await Promise.all(
      sideFilesOfDump(name, names, procNames).map((side) => statFile(join(dir, side), shownDir + side)),
    );
    return [self, ...sides.filter((f) => f !== null)];
  };
  const items = (await Promise.all(paths.map(expand))).flat();
  const out: InputFile[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if ('message' in item) {
      problems.push(item);
      continue;
    }
    if (seen.has(item.abs)) continue;
    seen.add(item.abs);
    out.push(nodeInputFile(item.abs, item.shown.split(sep).join('/'), item.size, item.mtimeMs));
  }
  return out;
}
