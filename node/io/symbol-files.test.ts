// The on-disk symbol cache: results survive into a new Symbolizer (a new session) without loading the module.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMaps } from '../../core/formats/proc-maps.js';
import type { ProcessSeries } from '../../core/model/model.js';
import { Symbolizer } from '../../core/symbolize/symbolize.js';
import { Addr2lineInstance, compileAddr2line } from '../../core/symbolize/wasm-addr2line.js';
import { NodeSymbolCacheStore, NodeSymbolFileSource, readAddr2lineWasm, wasmVersion } from './symbol-files.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'symbols');

function proc(): ProcessSeries {
  const text = readFileSync(join(FIX, 'runtime', 'c-pie.txt'), 'utf8');
  const maps = parseMaps(
    text
      .split('\n')
      .filter((l) => !l.startsWith('RA '))
      .join('\n'),
  ).entries;
  const hex = text
    .split('\n')
    .filter((l) => l.startsWith('RA '))
    .map((l) => '0x' + BigInt(l.slice(3)).toString(16));
  return {
    key: 'p',
    pid: 1,
    pidNamespace: null,
    prefix: 'x',
    snapshots: [],
    stacks: { count: 1, offsets: [0, hex.length], frames: Uint32Array.from(hex, (_, i) => i), allocatorDepth: [0] },
    addresses: { hex, index: new Map(hex.map((h, i) => [h, i])) },
    maps,
    endedWithoutFinalDump: false,
    symbols: null,
  };
}

describe('NodeSymbolCacheStore', () => {
  it('a second session answers from disk without loading the module into WASM', async () => {
    const bytes = await readAddr2lineWasm();
    const wasm = await compileAddr2line(bytes);
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-cache-'));
    const store = (): NodeSymbolCacheStore => new NodeSymbolCacheStore(dir, wasmVersion(bytes));
    const opts = { wasm, symbolDirs: [join(FIX, 'bin')], hostPaths: false };
    const first = new Symbolizer(new NodeSymbolFileSource(), { ...opts, cacheStore: store() });
    const a = await first.symbolizeProcess(proc());
    await first.dispose();
    expect(readdirSync(join(dir, wasmVersion(bytes))).length).toBe(1);

    let loads = 0;
    const realLoad = Addr2lineInstance.prototype.load;
    Addr2lineInstance.prototype.load = function (...args: Parameters<typeof realLoad>) {
      loads++;
      return realLoad.apply(this, args);
    };
    try {
      const second = new Symbolizer(new NodeSymbolFileSource(), { ...opts, cacheStore: store() });
      const b = await second.symbolizeProcess(proc());
      await second.dispose();
      expect(loads).toBe(0);
      expect(b.caller).toEqual(a.caller);
      expect(b.caller.filter((s) => s?.status === 'symbolized').length).toBe(2);
    } finally {
      Addr2lineInstance.prototype.load = realLoad;
    }
  });
});
