// CLI symbolization: --symbols/--sysroot/--no-symbols on the real leaky dumps.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from './run-captured.js';

const JE = join(import.meta.dirname, '..', '..', 'fixtures', 'jemalloc');
const JOB = join(JE, 'job');

interface JsonFrame {
  address: string;
  kind: string;
  module: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
  binary?: string;
}

const cli = (argv: readonly string[]) => runCaptured(...argv);

beforeAll(() => {
  // No results cache on disk during tests.
  process.env.HEAPLENS_SYMBOL_CACHE = '0';
});

describe('heaplens top with symbols', () => {
  // A sysroot that does not exist keeps the files on this machine out of the search.
  const symbolArgs = ['--symbols', join(JE, 'bin'), '--sysroot', join(JE, 'no-such-sysroot')];

  it('--json frames carry function, file, line, module and kind', async () => {
    const r = await cli(['top', JOB, ...symbolArgs, '--json', '-n', '5']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { stacks: { frames: JsonFrame[] }[] };
    const frames = doc.stacks.flatMap((s) => s.frames);
    const makeNode = frames.filter((f) => f.function === 'make_node');
    expect(makeNode.length).toBeGreaterThan(0);
    for (const f of makeNode) {
      expect(f.module).toBe('leaky');
      expect(f.kind).toBe('native');
      expect(f.file?.endsWith('leaky.c')).toBe(true);
      expect(f.line).toBe(38);
      expect(f.binary).toBe('verified');
    }
    // Leaf-first stacks: make_node is called by one of the three known callers.
    const callers = new Set(
      doc.stacks.map((s) => s.frames[s.frames.findIndex((f) => f.function === 'make_node') + 1]?.function),
    );
    expect([...callers].filter((c) => c === 'plateau' || c === 'leak_steady' || c === 'worker').length).toBeGreaterThan(
      0,
    );
  });

  it('text output names functions with file:line', async () => {
    const r = await cli(['top', JOB, ...symbolArgs, '-n', '3']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/make_node \(leaky\.c:38\) ← (plateau|leak_steady|worker) \(leaky\.c:\d+\)/);
  });

  it('--no-symbols keeps module+offset', async () => {
    const r = await cli(['top', JOB, '--no-symbols', '--json', '-n', '3']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { stacks: { frames: JsonFrame[] }[] };
    const frames = doc.stacks.flatMap((s) => s.frames).filter((f) => f.kind === 'native');
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((f) => f.function === undefined)).toBe(true);
    const text = await cli(['top', JOB, '--no-symbols', '-n', '3']);
    expect(text.out).toMatch(/leaky\+0x[0-9a-f]+/);
  });

  it('diff and growth accept the symbol options', async () => {
    for (const cmd of ['diff', 'growth']) {
      const r = await cli([cmd, JOB, ...symbolArgs, '-n', '3']);
      expect(r.code).toBe(0);
      expect(r.out).toContain('(leaky.c:');
    }
  });
});
