// Node implementation of InputFile: files and folders (recursive) from the command line.

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

export function nodeInputFile(absPath: string, displayPath: string, size: number, mtimeMs: number | null): InputFile {
  const file: InputFile = {
    path: displayPath,
    size,
    mtimeMs,
    async read(offset: number, length: number): Promise<Uint8Array> {
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

/**
 * Expands files and folders into InputFiles. Paths inside a folder are shown relative to the folder's
 * parent (so "job/exact.1.0.m0.heap"), files given directly as given. Hidden entries are skipped. A dump
 * named alone brings the side files beside it (`<dump>.pyframes`, the maps, `perf-<pid>.map`), exactly as
 * its folder would: they are shown with the dump's own directory prefix.
 */
export async function collectInputFiles(
  paths: readonly string[],
  problems: CollectProblem[] = [],
): Promise<InputFile[]> {
  const out: InputFile[] = [];
  const seen = new Set<string>();
  const add = (abs: string, shown: string, size: number, mtimeMs: number) => {
    if (seen.has(abs)) return;
    seen.add(abs);
    out.push(nodeInputFile(abs, shown.split(sep).join('/'), size, mtimeMs));
  };
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try {
      st = await stat(abs);
    } catch (e) {
      problems.push({
        path: p,
        message: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : String(e),
      });
      continue;
    }
    if (st.isFile()) {
      add(abs, p, st.size, st.mtimeMs);
      const name = basename(abs);
      if (!looksLikeDumpName(name)) continue;
      const dir = dirname(abs);
      const pid = parseDumpName(name)?.pid;
      const procNames = pid !== undefined ? await namesIn(join(dir, 'proc', String(pid))) : [];
      const shownDir = p.slice(0, p.length - baseOf(p).length);
      for (const side of sideFilesOfDump(name, await namesIn(dir), procNames)) {
        const full = join(dir, side);
        try {
          const s = await stat(full);
          if (s.isFile()) add(full, shownDir + side, s.size, s.mtimeMs);
        } catch {
          // gone between listing and stat: nothing to add
        }
      }
      continue;
    }
    if (!st.isDirectory()) continue;
    const root = resolve(abs, '..');
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        problems.push({ path: dir, message: `cannot list folder: ${String(e)}` });
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const ent of entries) {
        if (ent.name.startsWith('.')) continue;
        const full = join(dir, ent.name);
        if (ent.isDirectory()) await walk(full);
        else if (ent.isFile()) {
          const s = await stat(full);
          add(full, relative(root, full), s.size, s.mtimeMs);
        }
      }
    };
    await walk(abs);
  }
  return out;
}
