// The WASM module against GNU addr2line and llvm-symbolizer-14 output on the committed fixture binaries
// (fixtures/symbols/make-symbol-fixtures.sh generated both the binaries and the reference files).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { readElfInfo } from './elf.js';
import { Addr2lineInstance, compileAddr2line, type CompiledWasm, type RawFrame } from './wasm-addr2line.js';
import { compareFrames, parseGnuAddr2line, parseLlvmSymbolizer, type RefFrame } from './reference.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'symbols');
const source = new NodeSymbolFileSource();
let wasm: CompiledWasm;

beforeAll(async () => {
  wasm = await compileAddr2line(await readAddr2lineWasm());
});

function ref(name: string, tool: 'gnu' | 'llvm'): Map<string, RefFrame[]> {
  const text = gunzipSync(readFileSync(join(FIX, 'ref', `${name}.${tool}.txt.gz`))).toString('utf8');
  return tool === 'gnu' ? parseGnuAddr2line(text) : parseLlvmSymbolizer(text);
}

function addrs(name: string): bigint[] {
  return readFileSync(join(FIX, 'ref', `${name}.addrs`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => BigInt(l));
}

function asRef(frames: RawFrame[]): RefFrame[] {
  return frames.map((f) => ({
    function: f.function,
    file: f.file ? f.file.slice(f.file.lastIndexOf('/') + 1) : null,
    line: f.line,
  }));
}

async function lookupFile(path: string, list: bigint[]): Promise<Map<string, RefFrame[]>> {
  const inst = await Addr2lineInstance.create(wasm);
  const file = await source.open(join(FIX, path));
  if (!file) throw new Error(`missing fixture ${path}`);
  try {
    const info = await readElfInfo(file);
    const h = await inst.load(file, info, 1 << 30);
    const res = inst.lookup(h, list);
    return new Map(list.map((a, i) => [a.toString(16), asRef(res[i])]));
  } finally {
    await file.close();
  }
}

const cases: [string, string][] = [
  ['c-pie', 'bin/c-pie'],
  ['c-nopie', 'bin/c-nopie'],
  ['cxx-pie', 'bin/cxx-pie'],
  ['libsolib', 'debug/.build-id/1e/e12e247c555a0a82da0f2c20c5dc4980bbf8bb.debug'],
];

describe('addr2line wasm vs GNU addr2line / llvm-symbolizer on fixture binaries', () => {
  for (const [name, path] of cases) {
    it(`${name}: ≥99.5% of frames (inlined included) have the reference file:line`, async () => {
      const list = addrs(name);
      expect(list.length).toBeGreaterThan(50);
      const ours = await lookupFile(path, list);
      const gnu = compareFrames(ref(name, 'gnu'), ours);
      const llvm = compareFrames(ref(name, 'llvm'), ours);
      const pct = (a: number, b: number): string => ((100 * a) / b).toFixed(2);
      console.log(
        `${name}: ${gnu.addresses} addresses; file:line vs GNU ${pct(gnu.sameLocation, gnu.frames)}% of ${gnu.frames} frames, ` +
          `vs llvm ${pct(llvm.sameLocation, llvm.frames)}% of ${llvm.frames}; function names vs GNU ${pct(gnu.sameFunction, gnu.frames)}%; ` +
          `whole stacks vs GNU ${pct(gnu.sameStack, gnu.addresses)}%, vs llvm ${pct(llvm.sameStack, llvm.addresses)}%`,
      );
      console.log(
        `  function names where GNU has a line: ${pct(gnu.sameFunctionLocated, gnu.locatedFrames)}% of ${gnu.locatedFrames}`,
      );
      for (const m of gnu.mismatches.slice(0, 3)) console.log('  location mismatch vs GNU', JSON.stringify(m));
      for (const m of gnu.functionMismatches.slice(0, 3)) console.log('  name mismatch vs GNU', JSON.stringify(m));
      // The comparison must not be vacuous: most reference frames carry a real file:line.
      expect(gnu.locatedFrames / gnu.frames).toBeGreaterThan(0.5);
      expect(gnu.sameLocation / gnu.frames).toBeGreaterThanOrEqual(0.995);
      expect(llvm.sameLocation / llvm.frames).toBeGreaterThanOrEqual(0.995);
      // C names need no demangling, so they must match too. (C++ names differ by demangler dialect and
      // cpp_demangle 0.4 bugs; see README.md.)
      if (!name.startsWith('cxx')) expect(gnu.sameFunctionLocated / gnu.locatedFrames).toBeGreaterThanOrEqual(0.995);
    });
  }
});
