// Compressed debug sections (SHF_COMPRESSED zlib, as in Debian's /usr/lib/debug files): the host's inflate
// (Node's zlib) and the module's own miniz must give the same frames as the uncompressed file. The compressed
// copy is made with objcopy (binutils, in apt-packages.txt); the test is skipped without it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeInflate, NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import type { ProcessSeries } from '../model/model.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import { hasCompressedSections, inflateSections, PT_LOAD, readElfInfo, type InflateFn } from './elf.js';
import { Symbolizer } from './symbolize.js';
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

/** Maps lines for an ELF file loaded at `base`, as the kernel writes them. */
async function mapsFor(path: string, mappedAs: string, base: bigint): Promise<MapsEntry[]> {
  const f = await source.open(path);
  if (!f) throw new Error(path);
  const info = await readElfInfo(f);
  await f.close();
  const page = 4096n;
  return info.programHeaders
    .filter((p) => p.type === PT_LOAD)
    .map((p) => ({
      start: base + p.vaddr - (p.vaddr % page),
      end: base + ((p.vaddr + p.filesz + page - 1n) / page) * page,
      perms: p.flags & 1 ? 'r-xp' : 'r--p',
      offset: p.offset - (p.offset % page),
      dev: 'fe:00',
      inode: 7,
      path: mappedAs,
      deleted: false,
    }));
}

describe('a module still inflating is looked up after the others', () => {
  it.skipIf(!objcopy)('same symbols and reports in the maps order, its lookup last', async () => {
    // two copies of cxx-pie, the first in the maps with compressed debug sections, the other without
    const lib = mkdtempSync(join(dir, 'lib-'));
    execFileSync('objcopy', ['--compress-debug-sections=zlib-gabi', plain, join(lib, 'zfirst')]);
    // (the fixture's own debug sections are compressed too)
    execFileSync('objcopy', ['--decompress-debug-sections', plain, join(lib, 'plain')]);
    const bases = [0x7f0000000000n, 0x7f1000000000n];
    const maps = [
      ...(await mapsFor(join(lib, 'zfirst'), '/opt/job/zfirst', bases[0])),
      ...(await mapsFor(join(lib, 'plain'), '/opt/job/plain', bases[1])),
    ];
    const vaddrs = readFileSync(join(FIX, 'ref', 'cxx-pie.addrs'), 'utf8')
      .trim()
      .split('\n')
      .slice(0, 40)
      .map(BigInt);
    const hex = bases.flatMap((b) => vaddrs.map((v) => '0x' + (b + v).toString(16)));
    const proc = (): ProcessSeries => ({
      key: 'test',
      pid: 1,
      pidNamespace: null,
      prefix: 'jeprof',
      snapshots: [],
      // one-frame stacks: every address is a leaf, looked up at its own PC
      stacks: {
        count: hex.length,
        offsets: hex.map((_, i) => i).concat(hex.length),
        frames: hex.map((_, i) => i),
        allocatorDepth: hex.map(() => 0),
      },
      addresses: { hex, index: new Map(hex.map((h, i) => [h, i])) },
      maps,
      endedWithoutFinalDump: false,
      symbols: null,
    });
    const run = async (inflate: InflateFn) => {
      const order: string[] = [];
      const sym = new Symbolizer(source, { wasm, symbolDirs: [lib], hostPaths: false, inflate });
      const table = await sym.symbolizeProcess(proc(), { onProgress: (_d, _t, m) => m && order.push(m) });
      await sym.dispose();
      return { table, order };
    };
    // the host's inflate answers only after the plain copy could have been looked up
    const slow: InflateFn = (data, size) => new Promise((r) => setTimeout(() => r(nodeInflate(data, size)), 100));
    const late = await run(slow);
    const soon = await run(nodeInflate);
    expect(late.order).toEqual(['/opt/job/plain', '/opt/job/zfirst']);
    expect(late.table.modules.map((m) => m.mappingPath)).toEqual(['/opt/job/zfirst', '/opt/job/plain']);
    expect(late.table.modules).toEqual(soon.table.modules);
    expect(late.table.leaf).toEqual(soon.table.leaf);
    // both copies name every address alike, and the lookups found names (the check can fail)
    const names = late.table.leaf.map((s) => s?.frames.map((f) => f.function).join('<') ?? '');
    expect(names.slice(0, vaddrs.length)).toEqual(names.slice(vaddrs.length));
    expect(names.filter((n) => n !== '').length).toBeGreaterThan(30);
  });
});
