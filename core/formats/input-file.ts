// The one I/O abstraction the pure code sees: a file it may read in pieces.
// Node (CLI), the browser (File objects) and Electron (preload API) each implement it.

export interface InputFile {
  /** path with '/' separators, relative to the folder the user opened (or as given) */
  path: string;
  size: number;
  /** modification time, when the copy kept it */
  mtimeMs: number | null;
  /** reads bytes [offset, offset + length); a shorter result means end of file */
  read(offset: number, length: number): Promise<Uint8Array>;
}
