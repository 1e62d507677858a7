// The symbolization service end to end on the committed fixtures: maps → module → ELF address → frames,
// symbol search, binary verification, leaf/caller lookups, perf maps, Python pseudo-addresses, bad files.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProcessSeries } from '../model/model.js';
import { parseMaps, type MapsEntry } from '../formats/proc-maps.js';
import { nodeInflate, NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { PT_LOAD, readElfInfo, type InflateFn } from './elf.js';
import type { SymbolFile, SymbolFileSource } from './files.js';
import { parsePerfMap } from './perf-map.js';
import { isPythonPseudoAddress, layoutOf, parsePyFrames } from '../formats/pyframes.js';
import { parseGnuAddr2line, type RefFrame } from './reference.js';
import {
  formatUnresolved,
  symbolAt,
  symbolEntry,
  symbolizeProcess,
  Symbolizer,
  type SymbolizedAddress,
} from './symbolize.js';
import { Addr2lineInstance, compileAddr2line, type CompiledWasm } from './wasm-addr2line.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'symbols');
const BUILD_ID = '1ee12e247c555a0a82da0f2c20c5dc4980bbf8bb';
let wasm: CompiledWasm;

beforeAll(async () => {
  wasm = await compileAddr2line(await readAddr2lineWasm());
});

/** A process with the given stacks (leaf first) over hex addresses. */
function processOf(stacks: bigint[][], maps: MapsEntry[] | null, pid: number | null = 4242): ProcessSeries {
  const hex: string[] = [];
  const index = new Map<string, number>();
  const offsets = [0];
  const frames: number[] = [];
  for (const s of stacks) {
    for (const a of s) {
      const h = '0x' + a.toString(16);
      let id = index.get(h);
      if (id === undefined) {
        id = hex.length;
        hex.push(h);
        index.set(h, id);
      }
      frames.push(id);
    }
    offsets.push(frames.length);
  }
  return {
    key: 'test',
    pid,
    pidNamespace: null,
    prefix: 'jeprof',
    snapshots: [],
    stacks: { count: stacks.length, offsets, frames: Uint32Array.from(frames), allocatorDepth: stacks.map(() => 0) },
    addresses: { hex, index },
    maps,
    endedWithoutFinalDump: false,
    symbols: null,
  };
}

function runtime(name: string): { maps: MapsEntry[]; ras: bigint[]; expected: RefFrame[][] } {
  const text = readFileSync(join(FIX, 'runtime', `${name}.txt`), 'utf8');
  const mapsText = text
    .split('\n')
    .filter((l) => !l.startsWith('RA '))
    .join('\n');
  const ras = text
    .split('\n')
    .filter((l) => l.startsWith('RA '))
    .map((l) => BigInt(l.slice(3)));
  const expected = [...parseGnuAddr2line(readFileSync(join(FIX, 'runtime', `${name}.expected.txt`), 'utf8')).values()];
  return { maps: parseMaps(mapsText).entries, ras, expected };
}

function simple(s: SymbolizedAddress | undefined): RefFrame[] {
  return (s?.frames ?? []).map((f) => ({
    function: f.function,
    file: f.file ? f.file.slice(f.file.lastIndexOf('/') + 1) : null,
    line: f.line,
  }));
}

/** Maps lines for an ELF file loaded at `base`, as the kernel would write them. */
async function mapsFor(path: string, mappedAs: string, base: bigint): Promise<MapsEntry[]> {
  const f = await new NodeSymbolFileSource().open(path);
  if (!f) throw new Error(path);
  const info = await readElfInfo(f);
  await f.close();
  const page = 4096n;
  return info.programHeaders
    .filter((p) => p.type === PT_LOAD)
    .map((p) => {
      const start = base + p.vaddr - (p.vaddr % page);
      const end = base + ((p.vaddr + p.filesz + page - 1n) / page) * page;
      const perms = `${p.flags & 4 ? 'r' : '-'}${p.flags & 2 ? 'w' : '-'}${p.flags & 1 ? 'x' : '-'}p`;
      return {
        start,
        end,
        perms,
        offset: p.offset - (p.offset % page),
        dev: 'fe:00',
        inode: 7,
        path: mappedAs,
        deleted: false,
      };
    });
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'heaplens-sym-'));
}

describe('symbolizeProcess on real runtime maps', () => {
  for (const name of ['c-pie', 'c-nopie']) {
    it(`${name}: return addresses resolve through the maps to GNU addr2line's answer for RA-1`, async () => {
      const { maps, ras, expected } = runtime(name);
      expect(ras.length).toBe(3);
      // One stack, leaf first: an extra leaf in main's code, then the three recorded return addresses.
      const proc = processOf([[ras[2] + 8n, ...ras]], maps);
      const sym = new Symbolizer(new NodeSymbolFileSource(), {
        wasm,
        symbolDirs: [join(FIX, 'bin')],
        hostPaths: false,
      });
      const table = await symbolizeProcess(proc, sym);
      for (let i = 0; i < 3; i++) {
        const id = proc.addresses.index.get('0x' + ras[i].toString(16));
        expect(id).toBeDefined();
        const s = table.caller[id!];
        expect(s?.status).toBe('symbolized');
        expect(s?.binary).toBe('verified');
        expect(s?.module).toBe(name);
        expect(simple(s)).toEqual(expected[i]);
      }
      expect(table.modules).toHaveLength(1);
      expect(table.modules[0].binaryPath).toBe(join(FIX, 'bin', name));
      await sym.dispose();
    });
  }

  it('an address seen as leaf and as caller is looked up at PC and at PC-1', async () => {
    const { maps, ras } = runtime('c-pie');
    const ra = ras[2]; // in main, right after `call level1`
    const proc = processOf(
      [
        [ra, 0x1n],
        [0x2n, ra],
      ],
      maps,
    );
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false });
    const table = await sym.symbolizeProcess(proc);
    const id = proc.addresses.index.get('0x' + ra.toString(16))!;
    const leaf = table.leaf[id];
    const caller = table.caller[id];
    expect(leaf && caller).toBeTruthy();
    const start = maps.find((m) => m.path.endsWith('/c-pie') && m.offset === 0n)!.start;
    const vaddr = ra - start;
    const gnu = parseGnuAddr2line(gunzipSync(readFileSync(join(FIX, 'ref', 'c-pie.gnu.txt.gz'))).toString());
    // The leaf is the instruction at the return address itself, which the reference covers.
    expect(simple(leaf)).toEqual(gnu.get(vaddr.toString(16)));
    expect(simple(caller)).toEqual(gnu.get((vaddr - 1n).toString(16)));
    expect(simple(leaf)).not.toEqual(simple(caller));
    await sym.dispose();
    // Both report the module offset of the address as written in the dump.
    expect(leaf!.moduleOffset).toBe('0x' + (ra - start).toString(16));
    expect(caller!.moduleOffset).toBe(leaf!.moduleOffset);
    const symbolized = { ...proc, symbols: table };
    expect(symbolAt(symbolized, id, 0)).toBe(leaf);
    expect(symbolAt(symbolized, id, 3)).toBe(caller);
    // Addresses outside every mapping stay visible as raw addresses (made from the address, no entry kept).
    const at1 = proc.addresses.index.get('0x1')!;
    expect(table.caller[at1]).toBeUndefined();
    const lost = symbolEntry(symbolized, at1, true)!;
    expect(lost.status).toBe('unresolved');
    expect(formatUnresolved(lost)).toBe('0x1');
  });
});

describe('symbol search', () => {
  const LIB_DEBUG = join(FIX, 'debug', '.build-id', BUILD_ID.slice(0, 2), BUILD_ID.slice(2) + '.debug');
  const libGnu = (): Map<string, RefFrame[]> =>
    parseGnuAddr2line(gunzipSync(readFileSync(join(FIX, 'ref', 'libsolib.gnu.txt.gz'))).toString());

  async function libProcess(
    mappedAs: string,
    base = 0x7f0000000000n,
  ): Promise<{ proc: ProcessSeries; vaddrs: bigint[] }> {
    const maps = await mapsFor(join(FIX, 'lib', 'libsolib.so'), mappedAs, base);
    // Every address of the reference that GNU addr2line places on a line, looked up as leaves.
    const vaddrs = [...libGnu()].filter(([, f]) => f.some((x) => x.line !== null)).map(([a]) => BigInt('0x' + a));
    expect(vaddrs.length).toBeGreaterThan(20);
    return {
      proc: processOf(
        vaddrs.map((v) => [base + v]),
        maps,
      ),
      vaddrs,
    };
  }

  async function expectLib(sym: Symbolizer, mappedAs: string, debugPathEnd: string): Promise<void> {
    const base = 0x7f0000000000n;
    const { proc, vaddrs } = await libProcess(mappedAs, base);
    const table = await sym.symbolizeProcess(proc);
    const gnu = libGnu();
    for (const v of vaddrs) {
      const s = table.leaf[proc.addresses.index.get('0x' + (base + v).toString(16))!];
      expect(s?.status).toBe('symbolized');
      expect(s?.binary).toBe('verified');
      expect(simple(s)).toEqual(gnu.get(v.toString(16)));
    }
    expect(table.modules[0].debugPath?.endsWith(debugPathEnd)).toBe(true);
    await sym.dispose();
  }

  it('finds a stripped library in a flat folder and its debug file by build-id', async () => {
    const sym = new Symbolizer(new NodeSymbolFileSource(), {
      wasm,
      symbolDirs: [join(FIX, 'lib'), join(FIX, 'debug')],
      hostPaths: false,
    });
    await expectLib(sym, '/opt/app/lib/libsolib.so', `.build-id/${BUILD_ID.slice(0, 2)}/${BUILD_ID.slice(2)}.debug`);
  });

  it('finds the debug file by .gnu_debuglink in .debug/ next to the binary', async () => {
    const d = tmp();
    mkdirSync(join(d, '.debug'));
    copyFileSync(join(FIX, 'lib', 'libsolib.so'), join(d, 'libsolib.so'));
    copyFileSync(LIB_DEBUG, join(d, '.debug', 'libsolib.so.debug'));
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [d], hostPaths: false });
    await expectLib(sym, '/opt/app/lib/libsolib.so', '/.debug/libsolib.so.debug');
  });

  it('looks binaries up under a sysroot and debug files under its usr/lib/debug/<dir>', async () => {
    const root = tmp();
    const dir = join(root, 'usr', 'lib', 'x86_64-linux-gnu');
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(FIX, 'lib', 'libsolib.so'), join(dir, 'libsolib.so'));
    const dbgDir = join(root, 'usr', 'lib', 'debug', 'usr', 'lib', 'x86_64-linux-gnu');
    mkdirSync(dbgDir, { recursive: true });
    copyFileSync(LIB_DEBUG, join(dbgDir, 'libsolib.so.debug'));
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, sysroot: root, hostPaths: false });
    await expectLib(
      sym,
      '/usr/lib/x86_64-linux-gnu/libsolib.so',
      '/usr/lib/debug/usr/lib/x86_64-linux-gnu/libsolib.so.debug',
    );
  });

  it('rejects a debug file whose build-id differs', async () => {
    const d = tmp();
    mkdirSync(join(d, '.debug'));
    copyFileSync(join(FIX, 'lib', 'libsolib.so'), join(d, 'libsolib.so'));
    // Another program's debug info under the debuglink name.
    copyFileSync(join(FIX, 'bin', 'c-pie'), join(d, '.debug', 'libsolib.so.debug'));
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [d], hostPaths: false });
    const { proc } = await libProcess('/opt/app/lib/libsolib.so');
    const table = await sym.symbolizeProcess(proc);
    expect(table.modules[0].debugPath).toBeNull();
    // Without debug info only .dynsym names are left: exported functions by name, no lines.
    const s = table.leaf[proc.addresses.index.get('0x7f0000001110')!];
    expect(s?.status).toBe('symbol-only');
    expect(s?.frames.at(-1)?.function).toBe('solib_entry');
    await sym.dispose();
  });

  it('marks a binary whose segments do not fit the mappings as a mismatch', async () => {
    const d = tmp();
    // c-nopie under the name the process mapped c-pie with: a different build of "the same" file.
    copyFileSync(join(FIX, 'bin', 'c-nopie'), join(d, 'c-pie'));
    const { maps, ras } = runtime('c-pie');
    const proc = processOf([[ras[0]]], maps);
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [d], hostPaths: false });
    const table = await sym.symbolizeProcess(proc);
    expect(table.modules[0].binary).toBe('mismatch');
    expect(table.leaf[0]?.binary).toBe('mismatch');
    await sym.dispose();
  });

  it('a .dynsym-only library gives exported names (as llvm-symbolizer does) and module+offset elsewhere', async () => {
    const base = 0x7f1000000000n;
    const maps = await mapsFor(join(FIX, 'lib', 'libsolib-dynsym.so'), '/x/libsolib-dynsym.so', base);
    const proc = processOf([[base + 0x1120n, base + 0x1150n, base + 0x1105n]], maps);
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [join(FIX, 'lib')], hostPaths: false });
    const table = await sym.symbolizeProcess(proc);
    expect(table.leaf[0]?.frames).toEqual([{ function: 'solib_entry', file: null, line: null }]);
    expect(table.leaf[0]?.status).toBe('symbol-only');
    expect(table.caller[1]?.frames.at(-1)?.function).toBe('solib_other');
    // 0x1104 (the caller lookup of 0x1105) is internal_scale, which .dynsym does not have.
    expect(table.caller[2]?.status).toBe('unresolved');
    expect(formatUnresolved(table.caller[2]!)).toBe('libsolib-dynsym.so+0x1105');
    await sym.dispose();
  });

  it('reports no-binary when nothing is found, and keeps module+offset', async () => {
    const maps = parseMaps(
      '7f0000000000-7f0000002000 r-xp 00001000 fe:00 9 /nowhere/libgone.so.3\n' +
        '7f0000002000-7f0000003000 r--p 00005000 fe:00 9 /nowhere/libgone.so.3\n',
    ).entries;
    // 0x7f0000002000 is a leaf (in the second mapping) and a caller (looked up at PC − 1: the first mapping)
    const proc = processOf([[0x7f0000000123n, 0x7f0000002000n], [0x7f0000002000n]], maps);
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [tmp()], hostPaths: false });
    const table = await sym.symbolizeProcess(proc);
    // no entry is kept for an address nothing was found for: it is made from the address and the maps when read
    expect(table.leaf.filter(Boolean)).toEqual([]);
    expect(table.caller.filter(Boolean)).toEqual([]);
    const symbolized = { ...proc, symbols: table };
    expect(symbolEntry(symbolized, 0, false)?.status).toBe('no-binary');
    expect(formatUnresolved(symbolEntry(symbolized, 0, false)!)).toBe('libgone.so.3+0x1123');
    // file offsets: 0x2000 − 0x2000 + 0x5000 as a leaf; 0x2000 − 0 + 0x1000 in the first mapping as a caller
    expect(formatUnresolved(symbolEntry(symbolized, 1, false)!)).toBe('libgone.so.3+0x5000');
    expect(formatUnresolved(symbolEntry(symbolized, 1, true)!)).toBe('libgone.so.3+0x3000');
    expect(symbolEntry(symbolized, 1, true)).toMatchObject({ status: 'no-binary', binary: null, frames: [] });
    expect(symbolEntry(symbolized, 0, true)).toBeUndefined();
    await sym.dispose();
  });
});

describe('perf maps and Python frames', () => {
  it('resolves anonymous JIT code through perf-<pid>.map and never looks up Python pseudo-addresses', async () => {
    const maps = parseMaps('7f5000000000-7f5000100000 rwxp 00000000 00:00 0 \n').entries;
    const perf = parsePerfMap(
      '7f5000001000 40 py::compute:/app/x.py\n7f5000002000 10 [trampoline]\n',
      '/dumps/perf-4242.map',
    );
    const other = parsePerfMap('7f5000001000 40 wrong-process\n', '/dumps/perf-1.map');
    const py = 0x7079000000000005n;
    expect(isPythonPseudoAddress('0x' + py.toString(16))).toBe(true);
    const proc = processOf([[py, 0x7f5000001010n, 0x7f5000003000n]], maps, 4242);
    let opened = 0;
    const counting: SymbolFileSource = {
      open: async (p: string): Promise<SymbolFile | null> => {
        opened++;
        return new NodeSymbolFileSource().open(p);
      },
    };
    const sym = new Symbolizer(counting, { wasm, hostPaths: false });
    const table = await sym.symbolizeProcess(proc, { perfMaps: [other, perf] });
    expect(table.leaf[0]).toBeUndefined();
    expect(table.caller[0]).toBeUndefined();
    // a CPython -X perf trampoline is a Python frame: qualname and file from its name
    expect(table.caller[1]?.frames).toEqual([{ function: 'compute', file: '/app/x.py', line: null }]);
    expect(table.caller[1]?.python).toBe(true);
    expect(table.caller[1]?.module).toBe('perf-4242.map');
    expect(table.caller[2]?.status).toBe('unresolved');
    expect(opened).toBe(0);
    await sym.dispose();
  });
});

describe('Python frames in the layout their table declares', () => {
  it('are never looked up, whatever tag the table names (here 0x5059)', async () => {
    const maps = parseMaps('7f5000000000-7f5000100000 r-xp 00000000 08:01 7 /usr/lib/libpy.so\n').entries;
    const table = parsePyFrames(
      'PYFRAMES/1 tag=0x5059 kind_shift=44 id_shift=4 pid=4242\nF 0x5059100000000010 1 1 f f.py\nEND 1\n',
    );
    expect(table?.tagHex).toBe('5059');
    const py = 0x5059100000000010n;
    expect(isPythonPseudoAddress('0x' + py.toString(16), layoutOf(table))).toBe(true);
    const proc = { ...processOf([[0x7f5000001000n, py]], maps, 4242), pythonFrames: table ?? undefined };
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, hostPaths: false });
    const t = await sym.symbolizeProcess(proc);
    // the native leaf is looked up (its module is not found), the Python frame is not
    expect(symbolEntry({ ...proc, symbols: t }, 0, false)?.status).toBe('no-binary');
    expect(symbolEntry({ ...proc, symbols: t }, 1, true)).toBeUndefined();
    expect(t.caller[1]).toBeUndefined();
    expect(t.leaf[1]).toBeUndefined();
    expect(t.modules.map((m) => m.addresses)).toEqual([1]);
    await sym.dispose();
  });
});

describe('caching and bad files', () => {
  it('a second process with the same module is answered from the cache without reading files', async () => {
    const { maps, ras } = runtime('c-pie');
    let reads = 0;
    const node = new NodeSymbolFileSource();
    const counting: SymbolFileSource = {
      open: async (p: string): Promise<SymbolFile | null> => {
        const f = await node.open(p);
        if (!f) return null;
        return {
          path: f.path,
          size: f.size,
          mtimeMs: f.mtimeMs,
          read: (o: number, n: number): Promise<Uint8Array> => {
            reads++;
            return f.read(o, n);
          },
          close: () => f.close(),
        };
      },
    };
    const sym = new Symbolizer(counting, { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false });
    const first = await sym.symbolizeProcess(processOf([ras], maps));
    const before = reads;
    expect(before).toBeGreaterThan(0);
    const second = await sym.symbolizeProcess(processOf([ras], maps));
    expect(reads).toBe(before);
    expect(second.leaf[0]).toEqual(first.leaf[0]);
    expect(second.caller[1]).toEqual(first.caller[1]);
    await sym.dispose();
  });

  it('processes mapping the same build at other addresses share the loaded module and close their files', async () => {
    const { maps, ras } = runtime('c-pie');
    const shift = 0x10000000n;
    const moved = maps.map((m) =>
      m.path.endsWith('/c-pie') ? { ...m, start: m.start + shift, end: m.end + shift } : m,
    );
    let loads = 0;
    let open = 0;
    const node = new NodeSymbolFileSource();
    const counting: SymbolFileSource = {
      open: async (p: string): Promise<SymbolFile | null> => {
        const f = await node.open(p);
        if (!f) return null;
        open++;
        return {
          ...f,
          path: f.path,
          size: f.size,
          mtimeMs: f.mtimeMs,
          read: (o, n) => f.read(o, n),
          close: () => (open--, f.close()),
        };
      },
    };
    const realLoad = Addr2lineInstance.prototype.load;
    Addr2lineInstance.prototype.load = function (...args: Parameters<typeof realLoad>) {
      loads++;
      return realLoad.apply(this, args);
    };
    try {
      const sym = new Symbolizer(counting, { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false });
      await sym.symbolizeProcess(processOf([ras], maps));
      expect(open).toBe(0);
      // Other addresses (the leaf lookups of the same return addresses) in a process loaded elsewhere.
      const t = await sym.symbolizeProcess(processOf([[ras[1] + shift], [ras[0] + shift]], moved));
      expect(loads).toBe(1);
      expect(open).toBe(0);
      expect(t.leaf[0]?.status).toBe('symbolized');
      expect(t.leaf[0]?.moduleOffset).toBe(
        '0x' + (ras[1] - maps.find((m) => m.path.endsWith('/c-pie'))!.start).toString(16),
      );
      await sym.dispose();
    } finally {
      Addr2lineInstance.prototype.load = realLoad;
    }
  });

  it('a module over ownInstanceBytes gets its own instance, dropped after each batch, with the same results', async () => {
    const { maps, ras, expected } = runtime('c-pie');
    const opts = { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false };
    const shared = new Symbolizer(new NodeSymbolFileSource(), opts);
    const own = new Symbolizer(new NodeSymbolFileSource(), { ...opts, ownInstanceBytes: 1 });
    const a = await shared.symbolizeProcess(processOf([ras], maps));
    const b = await own.symbolizeProcess(processOf([ras], maps));
    expect(b).toEqual(a);
    // New addresses after the instance was dropped: loaded again, still right.
    const c = await own.symbolizeProcess(processOf([[ras[2] + 1n, ras[1]]], maps));
    expect(simple(c.caller[1])).toEqual(expected[1]);
    await shared.dispose();
    await own.dispose();
  });

  it('malformed ELF files give errors or unresolved frames, never a crash', async () => {
    const d = tmp();
    const good = readFileSync(join(FIX, 'bin', 'c-pie'));
    const { maps, ras } = runtime('c-pie');
    const goodFile = (await new NodeSymbolFileSource().open(join(FIX, 'bin', 'c-pie')))!;
    const info = await readElfInfo(goodFile);
    await goodFile.close();
    const debugInfo = info.sections.find((s) => s.name === '.debug_info')!;
    const variants: [string, (b: Buffer) => Buffer][] = [
      ['truncated', (b) => b.subarray(0, 3000)],
      ['bad-magic', (b) => Buffer.concat([Buffer.from('\x7fELG'), b.subarray(4)])],
      ['huge-shoff', (b) => (b.writeBigUInt64LE(0xffffffffff00n, 40), b)],
      ['shnum-lie', (b) => (b.writeUInt16LE(5000, 60), b)],
      [
        'garbage-debug-info',
        (b) => {
          for (let i = 0; i < Number(debugInfo.size); i += 7) b[Number(debugInfo.offset) + i] = (i * 131) & 0xff;
          return b;
        },
      ],
      [
        'section-past-eof',
        (b) => {
          const shoff = Number(b.readBigUInt64LE(40));
          const idx = info.sections.indexOf(debugInfo);
          b.writeBigUInt64LE(0x7fffffffn, shoff + idx * 64 + 32);
          return b;
        },
      ],
    ];
    for (const [name, mutate] of variants) {
      const dir = join(d, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'c-pie'), mutate(Buffer.from(good)));
      const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [dir], hostPaths: false });
      const table = await sym.symbolizeProcess(processOf([ras], maps));
      for (const s of [...table.leaf, ...table.caller]) {
        if (!s) continue;
        expect(['symbolized', 'symbol-only', 'unresolved', 'no-binary']).toContain(s.status);
      }
      await sym.dispose();
    }
    // The module still works for good files afterwards.
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false });
    const table = await sym.symbolizeProcess(processOf([ras], maps));
    expect(table.caller[1]?.status).toBe('symbolized');
    await sym.dispose();
  });
});

let objcopy = true;
try {
  execFileSync('objcopy', ['--version'], { stdio: 'ignore' });
} catch {
  objcopy = false;
}
if (!objcopy) console.warn('symbolize.test: the inflating-module test is skipped, objcopy (binutils) is not installed');

describe('a module still inflating is looked up after the others', () => {
  it.skipIf(!objcopy)('same symbols and reports in the maps order, its lookup last', async () => {
    // two copies of cxx-pie, the first in the maps with compressed debug sections, the other without (the
    // fixture's own are compressed)
    const lib = tmp();
    const cxx = join(FIX, 'bin', 'cxx-pie');
    execFileSync('objcopy', ['--compress-debug-sections=zlib-gabi', cxx, join(lib, 'zfirst')]);
    execFileSync('objcopy', ['--decompress-debug-sections', cxx, join(lib, 'plain')]);
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
    // one-frame stacks: every address is a leaf, looked up at its own PC
    const leaves = bases.flatMap((b) => vaddrs.map((v) => [b + v]));
    const run = async (inflate: InflateFn) => {
      const order: string[] = [];
      const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [lib], hostPaths: false, inflate });
      const table = await sym.symbolizeProcess(processOf(leaves, maps), {
        onProgress: (_d, _t, m) => m && order.push(m),
      });
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
