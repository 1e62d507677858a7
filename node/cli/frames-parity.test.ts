// The CLI and the app name a frame alike: `heaplens top --json` and the app's frame catalog (core/frames/catalog.ts,
// what the worker's trees and tables show) give the same frames for every stack of the real jemalloc fixture, both
// symbolized through the one driver (core/symbolize/symbolize-job.ts). The expected call chain of the leak comes
// from leaky.c's own text, not from either side.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../core/load/load-job.js';
import { FrameCatalog } from '../../core/frames/catalog.js';
import { describeProcess, frameLines, type Frame } from '../../core/frames/describe.js';
import { symbolizeJob } from '../../core/symbolize/symbolize-job.js';
import { compileAddr2line } from '../../core/symbolize/wasm-addr2line.js';
import type { ViewOptions } from '../../core/model/vocab.js';
import { collectInputFiles } from '../io/node-files.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../io/symbol-files.js';
import { runJson } from './run-captured.js';

const JE = join(import.meta.dirname, '..', '..', 'fixtures', 'jemalloc');

interface CliStack {
  process: string;
  stackId: number;
  stackIds?: number[];
  liveBytes: number;
  frames: Frame[];
}

async function cliStacks(...argv: string[]): Promise<CliStack[]> {
  return (await runJson<{ stacks: CliStack[] }>(...argv)).stacks;
}

/**
 * A frame as both sides can say it: one entry per inlined function, innermost first. A named frame by its function
 * (the app's tree keys merge one function's addresses, as flame graphs do), an unnamed one by module+offset.
 */
function lineKeys(
  f: { kind: string; module: string | null; moduleOffset?: string | null; address: string },
  fn: string | null,
) {
  return fn ? `${f.kind}|${f.module ?? ''}|${fn}` : `${f.kind}|${f.module ?? ''}+${f.moduleOffset ?? f.address}`;
}

describe('the CLI and the app describe the same frames', () => {
  it('for every stack of fixtures/jemalloc/job, symbolized, merged and python-first, allocator hidden or shown', async () => {
    const files = await collectInputFiles([join(JE, 'job')]);
    const job = await loadJob(files);
    const problems = await symbolizeJob(job, {
      source: new NodeSymbolFileSource(),
      wasm: await compileAddr2line(await readAddr2lineWasm()),
      symbolDirs: [join(JE, 'bin')],
      // as the CLI asks without --sysroot: the maps' own paths are tried on this machine too (libc here)
      sysroot: null,
      hostPaths: true,
      cacheStore: null,
    });
    // the program's binary is the one mapped (its build is committed with the dumps)
    expect(problems.filter((p) => p.mappingPath?.endsWith('/leaky'))).toEqual([]);
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const lines = readFileSync(join(JE, 'src', 'leaky.c'), 'utf8').split('\n');
    expect(lines.some((l) => l.includes('leaked[step] = make_node'))).toBe(true);

    for (const showAllocator of [false, true]) {
      for (const mode of ['merged', 'python-first'] as const) {
        const view: ViewOptions = { mode, hideAllocator: !showAllocator };
        const argv = ['top', join(JE, 'job'), '--json', '--symbols', join(JE, 'bin'), '-n', '100000', '--stacks', mode];
        const cli = await cliStacks(...argv, ...(showAllocator ? ['--show-allocator'] : []));
        expect(cli.length).toBeGreaterThan(0);
        for (const p of job.processes) {
          const catalog = new FrameCatalog(p);
          const mine = cli.filter((s) => s.process === p.key);
          expect(mine.length, p.key).toBeGreaterThan(0);
          // each row's own stack (the rows it merged may differ in addresses within the same lines)
          for (const s of mine) {
            const app = Array.from(catalog.stackKeys(s.stackId, view), (k) => catalog.frames[k]).map((f) =>
              lineKeys({ kind: f.kind, module: f.module, moduleOffset: f.offset, address: f.address }, f.function),
            );
            const fromCli = s.frames.flatMap((f) => {
              const named = f.inlined ? f.inlined.some((l) => l.function) : !!f.function;
              return frameLines(f).map((l) => lineKeys(f, named ? l.function : null));
            });
            const at = `${p.key} stack ${s.stackId} (${mode}${showAllocator ? ', allocator shown' : ''})`;
            expect(app, at).toEqual(fromCli);
            // the stack panel keeps every address and line: equal to the CLI's frames with their offsets and lines
            if (mode === 'merged') {
              const panel = catalog
                .stackDetail(s.stackId, mode)
                .filter((f) => showAllocator || !f.hidden)
                .map((f) => `${f.kind}|${f.module ?? ''}+${f.offset ?? f.address}|${f.function ?? ''}|${f.line ?? ''}`);
              const cliLines = s.frames.flatMap((f) => {
                const named = f.inlined ? f.inlined.some((l) => l.function) : !!f.function;
                const where = `${f.kind}|${f.module ?? ''}+${f.moduleOffset ?? f.address}`;
                return frameLines(f).map((l) => `${where}|${named ? l.function : ''}|${named ? (l.line ?? '') : ''}`);
              });
              expect(panel, `${at}, stack panel`).toEqual(cliLines);
            }
          }
        }
      }
    }

    // and the leak reads as leaky.c writes it, on both sides: make_node ← leak_steady ← main
    const d = describeProcess(exact, 'merged');
    const s = exact.snapshots[exact.snapshots.length - 1];
    const leakId = s.stackIds[[...s.liveBytes].indexOf(20 * 3 * 16384)];
    const fns = d
      .frames(leakId)
      .filter((f) => f.kind !== 'allocator' && f.module === 'leaky')
      .map((f) => f.function);
    expect(fns.slice(0, 3)).toEqual(['make_node', 'leak_steady', 'main']);
    const catalog = new FrameCatalog(exact);
    const appFns = Array.from(
      catalog.stackKeys(leakId, { mode: 'merged', hideAllocator: true }),
      (k) => catalog.frames[k],
    )
      .filter((f) => f.module === 'leaky')
      .map((f) => f.function);
    expect(appFns.slice(0, 3)).toEqual(['make_node', 'leak_steady', 'main']);
    expect(catalog.frames[catalog.stackKeys(leakId, { mode: 'merged', hideAllocator: true })[0]].role).toBe('program');
  });
});
