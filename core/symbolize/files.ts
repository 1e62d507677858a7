// File access for the symbolizer. The core never touches the file system: the CLI gives it a Node
// implementation (node/io/symbol-files.ts), the browser worker one over dropped File objects, Electron one
// over its preload API. Paths are '/'-separated strings in whatever namespace the host uses.

/** An open file read in pieces. */
export interface SymbolFile {
  /** the path it was opened under */
  path: string;
  size: number;
  /** modification time when the host knows it (part of the cache identity of files without a build-id) */
  mtimeMs: number | null;
  /** bytes [offset, offset + length); shorter only at end of file */
  read(offset: number, length: number): Promise<Uint8Array>;
  /**
   * Optional fast path: fill `target` with bytes from `offset` and return how many were read. Lets the host
   * read straight into WASM memory without an intermediate copy.
   */
  readInto?(offset: number, target: Uint8Array): Promise<number>;
  close(): Promise<void>;
}

export interface SymbolFileSource {
  /** opens a file, or returns null when there is none (or it is not a regular file) */
  open(path: string): Promise<SymbolFile | null>;
}

/** Joins path pieces with single '/' separators (pure, no Node path module). */
export function joinPath(...parts: string[]): string {
  const kept = parts.filter((p) => p !== '');
  if (kept.length === 0) return '';
  const joined = kept.join('/');
  return joined.replace(/\/{2,}/g, '/');
}

export function dirName(path: string): string {
  const i = path.lastIndexOf('/');
  if (i < 0) return '.';
  return i === 0 ? '/' : path.slice(0, i);
}
