// systing slots in a dump's stacks, named by a real systing-format code map (written from CPython
// 3.12's own code objects; the expected lines come from co_positions(), see fixtures/python/systing).
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runJson } from '../../node/cli/run-captured.js';

const SYSTING = resolve(import.meta.dirname, '../../fixtures/python/systing');
const MAP = 'pycode-4242-00c0ffee12345678-py312.map';
interface Expected {
  codes: { id: number; qualname: string; file: string; lines: (number | null)[] }[];
}
const expected = JSON.parse(readFileSync(join(SYSTING, 'expected-py312.json'), 'utf8')) as Expected;
const slot = (id: number, inst: number) =>
  '0x' + ((0x5059n << 48n) | (BigInt(id) << 24n) | BigInt(inst + 1)).toString(16);

const work = mkdtempSync(join(tmpdir(), 'heaplens-systing-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('systing Python slots', () => {
  it('are named from the code map (function, file, line of the instruction) in every stack mode', async () => {
    const [sample, cafe] = expected.codes;
    const eval1 = '0x7f0000001234';
    const stack = [
      '0x7f0000000100',
      slot(sample.id, 5),
      eval1,
      slot(cafe.id, 2),
      eval1,
      '0x5059000000000000',
      '0x7f0000000200',
    ].join(' ');
    writeFileSync(
      join(work, 'jeprof.4242.0.m0.heap'),
      `heap_v2/1\n  t*: 4: 4096 [0: 0]\n  t0: 4: 4096 [0: 0]\n@ ${stack}\n  t*: 4: 4096 [0: 0]\n  t0: 4: 4096 [0: 0]\n\nMAPPED_LIBRARIES:\n` +
        '7f0000000000-7f0000010000 r-xp 00000000 08:01 11 /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\n' +
        '7f1000000000-7f1000001000 rw-s 00000000 00:01 12 /memfd:systing-pycode-00c0ffee12345678 (deleted)\n',
    );
    copyFileSync(join(SYSTING, MAP), join(work, MAP));
    const frames = async (mode: string) => {
      const doc = await runJson<{
        stacks: { frames: { kind: string; function?: string; file?: string; line?: number; address: string }[] }[];
        warnings: unknown[];
      }>('top', work, '--json', '--no-symbols', '--stacks', mode);
      expect(doc.warnings, JSON.stringify(doc.warnings)).toEqual([]);
      return doc.stacks[0].frames;
    };
    const py = await frames('python');
    expect(py.map((f) => [f.kind, f.function, f.line])).toEqual([
      ['python', sample.qualname, sample.lines[5]],
      ['python', cafe.qualname, cafe.lines[2]],
    ]);
    expect(py[0].file).toBe(sample.file);
    const native = await frames('native');
    expect(
      native.every((f) => f.kind !== 'python' && !f.address.startsWith('0x5059') && !f.address.startsWith('0x7079')),
    ).toBe(true);
    const merged = await frames('merged');
    expect(merged.filter((f) => f.kind === 'python').map((f) => f.function)).toEqual([sample.qualname, cafe.qualname]);
  });

  it('without the code map, says so', async () => {
    const dir = join(work, 'nomap');
    (await import('node:fs')).mkdirSync(dir);
    writeFileSync(
      join(dir, 'jeprof.4243.0.m0.heap'),
      `heap_v2/1\n  t*: 1: 64 [0: 0]\n@ 0x7f0000000100 ${slot(1, 0)}\n  t*: 1: 64 [0: 0]\n`,
    );
    const doc = await runJson<{ warnings: { message: string }[] }>('summary', dir, '--json');
    expect(doc.warnings.some((w) => /systing Python slots/.test(w.message))).toBe(true);
  });
});
