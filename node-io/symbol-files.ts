// Node implementation of the symbolizer's file access (symbolize/files.ts), and the loader for the bundled
// addr2line WebAssembly module. Reads use positioned fs reads, so only the bytes asked for are read.

import { open, readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SymbolFile, SymbolFileSource } from '../symbolize/files.js';

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
      const st = await stat(path);
      if (!st.isFile()) return null;
      const handle = await open(path, 'r');
      return new NodeSymbolFile(path, st.size, st.mtimeMs, handle);
    } catch {
      return null;
    }
  }
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
