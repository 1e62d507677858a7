// End to end: the real jemalloc dumps of fixtures/jemalloc (program `leaky`, binary committed) symbolize to
// the functions and lines of its known allocation pattern. Expected lines are found in leaky.c by their text,
// not taken from any symbolizer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { symbolAt, Symbolizer } from './symbolize.js';
import { compileAddr2line } from './wasm-addr2line.js';

const JE = join(import.meta.dirname, '..', '..', 'fixtures', 'jemalloc');

function lineOf(text: string): number {
  const lines = readFileSync(join(JE, 'src', 'leaky.c'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`leaky.c has no line with ${JSON.stringify(text)}`);
  return i + 1;
}

describe('leaky dumps symbolize to the known pattern', () => {
  it('exact.* final dump: make_node ← leak_steady/plateau/worker ← main with their lines', async () => {
    const job = await loadJob(await collectInputFiles([join(JE, 'job')]));
    const procs = job.processes.filter((p) => p.prefix === 'exact' || p.prefix === 'sampled');
    expect(procs.length).toBeGreaterThan(0);
    const wasm = await compileAddr2line(await readAddr2lineWasm());
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [join(JE, 'bin')], hostPaths: false });
    const mk = `make_node leaky.c:${lineOf('void *p = malloc(size)')}`;
    const want = [
      [
        mk,
        `leak_steady leaky.c:${lineOf('leaked[step] = make_node')}`,
        `main leaky.c:${lineOf('    leak_steady(s);')}`,
      ],
      [mk, `plateau leaky.c:${lineOf('plateau_objs[i] = make_node')}`, `main leaky.c:${lineOf('  plateau();')}`],
      [mk, `worker leaky.c:${lineOf('worker_objs[i] = make_node')}`],
    ];
    for (const p of procs) {
      const table = await sym.symbolizeProcess(p);
      const leakyModule = table.modules.find((m) => m.mappingPath.endsWith('/leaky'));
      expect(leakyModule?.binary).toBe('verified');
      const seen: string[][] = [];
      for (let s = 0; s < p.stacks.count; s++) {
        const out: string[] = [];
        for (let k = p.stacks.offsets[s] + p.stacks.allocatorDepth[s]; k < p.stacks.offsets[s + 1]; k++) {
          const e = symbolAt({ ...p, symbols: table }, p.stacks.frames[k], k - p.stacks.offsets[s]);
          if (e?.module !== 'leaky') continue;
          const f = e.frames[e.frames.length - 1];
          // _start comes from crt1.o, which has no DWARF: a name from the symbol table only.
          if (f?.function === '_start') {
            expect(e.status).toBe('symbol-only');
            continue;
          }
          expect(e.status).toBe('symbolized');
          out.push(`${f.function} ${f.file?.slice(f.file.lastIndexOf('/') + 1)}:${f.line}`);
        }
        seen.push(out);
      }
      for (const w of want) expect(seen).toContainEqual(w);
    }
    await sym.dispose();
  });
});
