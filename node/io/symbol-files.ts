// Node implementation of the symbolizer's file access (core/symbolize/files.ts), and the loader for the bundled
// addr2line WebAssembly module. Reads use positioned fs reads, so only the bytes asked for are read.

import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflate as zlibInflate } from 'node:zlib';
import type { SymbolFile, SymbolFileSource } from '../../core/symbolize/files.js';
import type { SymbolCacheStore } from '../../core/symbolize/symbolize.js';
import type { RawFrame } from '../../core/symbolize/wasm-addr2line.js';

class NodeSymbolFile implements SymbolFile {
  constructor(
    readonly path: string,
    readonly size: number,
    readonly mtimeMs: number | null,
    private readonly handle: import('node:fs/promises').FileHandle,
  ) {}

  async read(offset: number, length: number): Promise<Uint8Array> {
    const len = Math.max(0, Math.min(length, this.size - offset));
    const buf = new Uint8Array(len);
    const got = await this.readInto(offset, buf);
    return got === len ? buf : buf.subarray(0, got);
  }

  async readInto(offset: number, target: Uint8Array): Promise<number> {
    let done = 0;
    while (done < target.length) {
      const { bytesRead } = await this.handle.read(target, done, target.length - done, offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Opens host paths as they are ('/usr/lib/…' is the real file; sysroots and symbol folders are prefixes). */
export class NodeSymbolFileSource implements SymbolFileSource {
  async open(path: string): Promise<SymbolFile | null> {
    try {
      // A synchronous stat: most candidate paths (debug-file search, symbol folders) do not exist, and a
      // local stat costs microseconds where an async one waits for a free I/O thread.
      const st = statSync(path, { throwIfNoEntry: false });
      if (!st || !st.isFile()) return null;
      const handle = await open(path, 'r');
      return new NodeSymbolFile(path, st.size, st.mtimeMs, handle);
    } catch {
      return null;
    }
  }
}

/** Node's zlib for compressed debug sections (core/symbolize/elf.ts InflateFn): runs on the libuv thread pool, so
 *  the sections of a file inflate in parallel. */
export function nodeInflate(zlibData: Uint8Array, size: number): Promise<Uint8Array | null> {
  return new Promise((resolveInflate) => {
    // One output chunk of the known size: the default 16 KiB chunks cost 3× the inflate itself in callbacks
    // and the final concatenation.
    zlibInflate(zlibData, { maxOutputLength: size, chunkSize: Math.max(size, 64) }, (err, out) => {
      resolveInflate(err ? null : new Uint8Array(out.buffer, out.byteOffset, out.length));
    });
  });
}

/** Finds native-tools/addr2line/heaplens_addr2line.wasm from the source tree or from dist/. */
export function addr2lineWasmPath(): string {
  const env = process.env.HEAPLENS_ADDR2LINE_WASM;
  if (env) return resolve(env);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'native-tools', 'addr2line', 'heaplens_addr2line.wasm');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('heaplens_addr2line.wasm not found (set HEAPLENS_ADDR2LINE_WASM)');
}

export async function readAddr2lineWasm(): Promise<Uint8Array> {
  return new Uint8Array(await readFile(addr2lineWasmPath()));
}

/**
 * Symbol results on disk, one JSON file per module identity (build-id, or path/size/mtime), under
 * `<dir>/<module version>/`. The module version is part of the path so a rebuilt WASM module never reads
 * results an older one wrote.
 */
export class NodeSymbolCacheStore implements SymbolCacheStore {
  constructor(
    private readonly dir: string,
    private readonly version: string,
  ) {}

  private file(identity: string): string {
    const h = createHash('sha256').update(identity).digest('hex').slice(0, 32);
    return join(this.dir, this.version, `${h}.json`);
  }

  async load(identity: string): Promise<Map<string, RawFrame[]> | null> {
    try {
      const data = JSON.parse(await readFile(this.file(identity), 'utf8')) as {
        identity: string;
        entries: [string, RawFrame[]][];
      };
      if (data.identity !== identity || !Array.isArray(data.entries)) return null;
      return new Map(data.entries);
    } catch {
      return null;
    }
  }

  async save(identity: string, entries: Map<string, RawFrame[]>): Promise<void> {
    const path = this.file(identity);
    await mkdir(dirname(path), { recursive: true });
    // Write then rename, so a concurrent reader never sees half a file.
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ identity, entries: [...entries] }));
    await rename(tmp, path);
  }
}

/** The default cache folder: $HEAPLENS_SYMBOL_CACHE, else $XDG_CACHE_HOME/heaplens/symbols, else ~/.cache/…;
 *  null when HEAPLENS_SYMBOL_CACHE is "0" or "off". */
export function defaultSymbolCacheDir(): string | null {
  const env = process.env.HEAPLENS_SYMBOL_CACHE;
  if (env === '0' || env === 'off') return null;
  if (env) return resolve(env);
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'heaplens', 'symbols');
}

/** Short hash of the module bytes, for NodeSymbolCacheStore's version. */
export function wasmVersion(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}
