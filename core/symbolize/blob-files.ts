// SymbolFileSource over in-memory file handles: the browser worker's dropped files (File/Blob) or any object
// with `size` and `slice(start, end).arrayBuffer()`. Paths are those of the dropped folder ('/'-separated);
// give them as --symbols-like folders to the Symbolizer (a dropped folder is a flat folder, a sysroot, or
// both). Pure: no DOM types needed, so it also runs under Node.

import type { SymbolFile, SymbolFileSource } from './files.js';

/** The part of a Blob we use. */
export interface BlobLike {
  readonly size: number;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

class BlobSymbolFile implements SymbolFile {
  constructor(
    readonly path: string,
    private readonly blob: BlobLike,
    readonly mtimeMs: number | null,
  ) {}

  get size(): number {
    return this.blob.size;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const end = Math.min(this.blob.size, offset + length);
    if (offset >= end) return new Uint8Array(0);
    return new Uint8Array(await this.blob.slice(offset, end).arrayBuffer());
  }

  async close(): Promise<void> {}
}

export class BlobSymbolFileSource implements SymbolFileSource {
  private readonly files = new Map<string, { blob: BlobLike; mtimeMs: number | null }>();

  /** `path` as the host names it, e.g. "symbols/usr/lib/libc.so.6" for a dropped folder "symbols". */
  add(path: string, blob: BlobLike, mtimeMs: number | null = null): void {
    this.files.set(path.replace(/\/{2,}/g, '/'), { blob, mtimeMs });
  }

  async open(path: string): Promise<SymbolFile | null> {
    const f = this.files.get(path.replace(/\/{2,}/g, '/'));
    return f ? new BlobSymbolFile(path, f.blob, f.mtimeMs) : null;
  }
}
