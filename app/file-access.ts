// What the renderer may read: only files and folders the user picked in a dialog, dropped from the OS, or
// reopened from the recent list (paths the main process itself recorded). Every IPC argument is validated here.

import { constants } from 'node:fs';
import { open, readdir, stat, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { HostFileEntry } from './host-api.js';
import { writeFileAtomic } from './session-store.js';

/**
 * Opening a FIFO for reading blocks until a writer comes, holding one of libuv's four pool threads (four
 * FIFOs stop every file operation of the main process): the kind is checked before opening, and the open
 * is non-blocking where the platform has O_NONBLOCK, so a swap after the check cannot block either.
 */
const READ_FLAGS = constants.O_NONBLOCK !== undefined ? constants.O_RDONLY | constants.O_NONBLOCK : 'r';

/** Largest chunk one readChunk call may ask for (the worker reads in 4 MiB pieces). */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
/** Most entries one folder listing returns (a job folder has a few thousand dumps at most). */
export const MAX_LIST_ENTRIES = 200_000;
/** Deepest folder nesting followed when listing. */
export const MAX_LIST_DEPTH = 32;
/** Largest file the save IPC writes. */
export const MAX_SAVE_BYTES = 512 * 1024 * 1024;

export class AccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccessError';
  }
}

function isNonNegativeInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Validates an IPC path argument: a string, absolute, no NUL; returns it normalized. */
export function checkPathArgument(p: unknown): string {
  if (typeof p !== 'string' || p.length === 0 || p.length > 4096)
    throw new AccessError('path must be a non-empty string');
  if (p.includes('\0')) throw new AccessError('path contains NUL');
  if (!path.isAbsolute(p)) throw new AccessError(`path is not absolute: ${p}`);
  return path.resolve(p);
}

/** True when `child` is `root` or lies inside it (both absolute and resolved). */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export class FileAccess {
  /** granted roots (files or folders), resolved through symlinks */
  private readonly roots = new Set<string>();
  /** paths the save dialog returned and that may be written once */
  private readonly savable = new Set<string>();

  /** told each root granted (app/main.ts forwards it to the engine process, which opens only what is granted) */
  onGrant: ((real: string) => void) | null = null;

  grantedRoots(): string[] {
    return [...this.roots];
  }

  /** True when this file itself was granted (picked, dropped, reopened), not only a folder holding it. */
  async isGrantedFile(p: unknown): Promise<boolean> {
    const real = await this.checkReadable(p);
    return this.roots.has(real) && (await stat(real)).isFile();
  }

  async grant(p: string): Promise<string> {
    const abs = checkPathArgument(p);
    const real = await realpath(abs);
    this.roots.add(real);
    this.onGrant?.(real);
    return real;
  }

  /** Resolves symlinks and refuses anything outside the granted roots. */
  async checkReadable(p: unknown): Promise<string> {
    const abs = checkPathArgument(p);
    let real: string;
    try {
      real = await realpath(abs);
    } catch {
      throw new AccessError(`not found: ${abs}`);
    }
    for (const root of this.roots) if (isInside(root, real)) return real;
    throw new AccessError(`not opened by the user: ${abs}`);
  }

  async readChunk(p: unknown, offset: unknown, length: unknown): Promise<Uint8Array> {
    if (!isNonNegativeInteger(offset)) throw new AccessError('offset must be a non-negative integer');
    if (!isNonNegativeInteger(length)) throw new AccessError('length must be a non-negative integer');
    if (length > MAX_CHUNK_BYTES) throw new AccessError(`length ${length} exceeds ${MAX_CHUNK_BYTES}`);
    const real = await this.checkReadable(p);
    if (!(await stat(real)).isFile()) throw new AccessError(`not a regular file: ${real}`);
    const fh = await open(real, READ_FLAGS);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new AccessError(`not a regular file: ${real}`);
      if (offset >= st.size || length === 0) return new Uint8Array(0);
      const n = Math.min(length, st.size - offset);
      const buf = new Uint8Array(n);
      let done = 0;
      while (done < n) {
        const { bytesRead } = await fh.read(buf, done, n - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === n ? buf : buf.subarray(0, done);
    } finally {
      await fh.close();
    }
  }

  /** Told when a listing stops short (main.ts shows it); none: the cut is silent, as in tests. */
  onListCut: ListCut = () => undefined;

  /**
   * Lists a granted path: a file gives itself; a folder gives every regular file below it (no symlink loops), up
   * to MAX_LIST_ENTRIES files and MAX_LIST_DEPTH levels, and says so through `onListCut` when it stops there.
   */
  async list(p: unknown): Promise<HostFileEntry[]> {
    const real = await this.checkReadable(p);
    return listPath(real, this.onListCut);
  }

  allowSave(p: string): string {
    const abs = checkPathArgument(p);
    this.savable.add(abs);
    return abs;
  }

  async save(p: unknown, data: unknown): Promise<void> {
    const abs = checkPathArgument(p);
    if (!this.savable.has(abs)) throw new AccessError(`not chosen in the save dialog: ${abs}`);
    let bytes: Uint8Array;
    if (typeof data === 'string') bytes = new TextEncoder().encode(data);
    else if (data instanceof Uint8Array) bytes = data;
    else throw new AccessError('data must be a string or bytes');
    if (bytes.byteLength > MAX_SAVE_BYTES) throw new AccessError('data too large');
    this.savable.delete(abs);
    // atomic: a failed write (ENOSPC) never leaves a truncated report or export in place of the old file
    await writeFileAtomic(abs, bytes);
  }
}

/** Recursive listing with relative paths ('/' separators) from the listed folder's parent name. */
/** Where a listing stopped short, said in one sentence (the user sees it: the rest of the folder is not opened). */
export type ListCut = (message: string) => void;

export async function listPath(
  real: string,
  onCut: ListCut = () => undefined,
  limits: { entries: number; depth: number } = { entries: MAX_LIST_ENTRIES, depth: MAX_LIST_DEPTH },
): Promise<HostFileEntry[]> {
  const st = await stat(real);
  if (st.isFile()) return [{ path: real, relativePath: path.basename(real), size: st.size, mtimeMs: st.mtimeMs }];
  if (!st.isDirectory()) return [];
  const out: HostFileEntry[] = [];
  const seen = new Set<string>();
  const base = path.basename(real);
  let full = false;
  let tooDeep: string | null = null;
  async function walk(dir: string, rel: string, depth: number): Promise<void> {
    if (out.length >= limits.entries) return;
    if (depth > limits.depth) {
      tooDeep ??= dir;
      return;
    }
    const dirReal = await realpath(dir);
    if (seen.has(dirReal)) return;
    seen.add(dirReal);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const child = path.join(dir, e.name);
      if (e.isDirectory()) await walk(child, `${rel}/${e.name}`, depth + 1);
      else if (e.isFile()) {
        if (out.length >= limits.entries) {
          full = true;
          return;
        }
        const s = await stat(child);
        out.push({ path: child, relativePath: `${rel}/${e.name}`, size: s.size, mtimeMs: s.mtimeMs });
      }
    }
  }
  await walk(real, base, 0);
  if (full)
    onCut(
      `${real}: listed only its first ${limits.entries.toLocaleString('en-US')} files (by name); the rest are not opened`,
    );
  if (tooDeep !== null)
    onCut(
      `${real}: folders more than ${limits.depth} levels deep are not listed (the first: ${tooDeep}); their files are not opened`,
    );
  return out;
}
