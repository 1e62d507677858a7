// Randomly corrupted ELF files through the whole path (header reading, compact image, WASM parse, lookups):
// every outcome must be a result or an ElfError/WasmTrapError, never a hang or another exception, and a
// trapped instance is replaced. Deterministic seed, so a failure reproduces.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { ElfError, readElfInfo } from './elf.js';
import type { SymbolFile } from './files.js';
import { Addr2lineInstance, compileAddr2line, WasmTrapError } from './wasm-addr2line.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'symbols');

function memFile(path: string, bytes: Uint8Array): SymbolFile {
  return {
    path,
    size: bytes.length,
    mtimeMs: null,
    read: async (o: number, n: number) => bytes.slice(o, Math.min(bytes.length, o + n)),
    close: async () => undefined,
  };
}

describe('corrupted ELF files', () => {
  it('300 mutants of the fixture binaries: results or errors, never a crash', async () => {
    const wasm = await compileAddr2line(await readAddr2lineWasm());
    const originals = ['bin/c-pie', 'bin/cxx-pie', 'lib/libsolib.so'].map(
      (p) => new Uint8Array(readFileSync(join(FIX, p))),
    );
    let seed = 0x9e3779b9;
    const rnd = (n: number): number => {
      seed ^= seed << 13;
      seed >>>= 0;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      seed >>>= 0;
      return seed % n;
    };
    let inst = await Addr2lineInstance.create(wasm);
    const outcome = { ok: 0, elfError: 0, trap: 0 };
    // Per-mutant time budget: a slow mutant fails by name, not by the whole test's timeout.
    const BUDGET_MS = 5_000;
    let slowest = { i: -1, ms: 0 };
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      const orig = originals[i % originals.length];
      const b = orig.slice();
      // Mostly small targeted damage (headers, section table, DWARF), sometimes many random bytes.
      const flips = rnd(4) === 0 ? 200 : 1 + rnd(8);
      for (let k = 0; k < flips; k++) {
        const where = rnd(3) === 0 ? rnd(Math.min(b.length, 128)) : rnd(b.length);
        b[where] = rnd(256);
      }
      try {
        const f = memFile(`mutant-${i}`, b);
        const info = await readElfInfo(f);
        const h = await inst.load(f, info, 64 << 20);
        // one answer per address asked, whatever the damage
        expect(inst.lookup(h, [0x1000n, 0x1129n, 0x1800n, 0x2000n, 0x10e5n])).toHaveLength(5);
        inst.unload(h);
        outcome.ok++;
      } catch (e) {
        if (e instanceof ElfError) outcome.elfError++;
        else if (e instanceof WasmTrapError) {
          outcome.trap++;
          inst = await Addr2lineInstance.create(wasm);
        } else if (e instanceof RangeError) {
          throw new Error(`mutant ${i}: unchecked read: ${e.message}`, { cause: e });
        } else {
          throw e;
        }
      }
      const ms = performance.now() - t0;
      if (ms > slowest.ms) slowest = { i, ms };
      expect(ms, `mutant ${i} took ${ms.toFixed(0)} ms`).toBeLessThan(BUDGET_MS);
    }
    console.log('mutants:', outcome, 'slowest:', slowest);
    // the mutations reach both outcomes: some files still load and answer, others are refused
    expect(outcome.ok).toBeGreaterThan(0);
    expect(outcome.elfError + outcome.trap).toBeGreaterThan(0);
    // The instance still works on a good file.
    const good = memFile('good', originals[0]);
    const h = await inst.load(good, await readElfInfo(good), 64 << 20);
    expect(inst.lookup(h, [0x1129n])[0].length).toBeGreaterThan(0);
  }, 120_000);
});
