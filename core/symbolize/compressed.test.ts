// Compressed debug sections (SHF_COMPRESSED zlib, as in Debian's /usr/lib/debug files): the host's inflate
// (Node's zlib) and the module's own miniz must give the same frames as the uncompressed file. The compressed
// copy is made with objcopy (binutils, in apt-packages.txt); the test is skipped without it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeInflate, NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { hasCompressedSections, inflateSections, readElfInfo, type InflateFn } from './elf.js';
import { Addr2lineInstance, compileAddr2line, type CompiledWasm, type RawFrame } from './wasm-addr2line.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'symbols');
const source = new NodeSymbolFileSource();
let objcopy = true;
try {
  execFileSync('objcopy', ['--version'], { stdio: 'ignore' });
} catch {
  objcopy = false;
}
if (!objcopy)
  console.warn('compressed.test: skipped, objcopy (binutils) is not installed; it makes the compressed-debug copy');

let wasm: CompiledWasm;
let dir: string;
let compressed: string;
const plain = join(FIX, 'bin', 'cxx-pie');

beforeAll(async () => {
  wasm = await compileAddr2line(await readAddr2lineWasm());
  dir = mkdtempSync(join(tmpdir(), 'heaplens-zdebug-'));
  compressed = join(dir, 'cxx-pie.z');
  if (objcopy) execFileSync('objcopy', ['--compress-debug-sections=zlib-gabi', plain, compressed]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function lookup(path: string, inflate?: InflateFn): Promise<{ frames: RawFrame[][]; compressedDebug: boolean }> {
  const list = readFileSync(join(FIX, 'ref', 'cxx-pie.addrs'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => BigInt(l));
  const inst = await Addr2lineInstance.create(wasm);
  const file = await source.open(path);
  if (!file) throw new Error(`missing ${path}`);
  try {
    const info = await readElfInfo(file);
    const h = await inst.load(file, info, 1 << 30, inflate);
    return { frames: inst.lookup(h, list), compressedDebug: inst.info(h).compressedDebug };
  } finally {
    await file.close();
  }
}

describe('compressed debug sections', () => {
  it.skipIf(!objcopy)('host-inflated, module-inflated and uncompressed give the same frames', async () => {
    const file = await source.open(compressed);
    expect(file).not.toBeNull();
    const info = await readElfInfo(file!);
    expect(hasCompressedSections(info)).toBe(true);
    const inflated = await inflateSections(file!, info, nodeInflate, 1 << 30);
    expect(inflated.size).toBeGreaterThan(0);
    await file!.close();

    const base = await lookup(plain);
    const byModule = await lookup(compressed);
    const byHost = await lookup(compressed, nodeInflate);
    expect(byModule.compressedDebug).toBe(true);
    expect(byHost.compressedDebug).toBe(false);
    expect(byModule.frames).toEqual(base.frames);
    expect(byHost.frames).toEqual(base.frames);
  });

  it.skipIf(!objcopy)('a failing host inflate leaves the sections to the module', async () => {
    const failing: InflateFn = () => Promise.resolve(null);
    const r = await lookup(compressed, failing);
    expect(r.compressedDebug).toBe(true);
    expect(r.frames).toEqual((await lookup(plain)).frames);
  });
});
