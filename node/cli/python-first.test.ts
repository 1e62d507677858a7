// The Python-first default view on the real Python fixtures: expected stacks from the workload's `# @tag` lines,
// every byte kept by folding (totals equal jeprof's), labels that lead with the Python call site.
import { describe, expect, it } from 'vitest';
import { runCaptured, runCapturedAt } from './run-captured.js';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
import { isInterpreterModule } from '../../core/frames/python-stacks.js';
import {
  jeprofTotals,
  listDumps,
  parentLastDump,
  PY_FIXTURES,
  VERSIONS,
  workloadLines,
} from '../../fixtures/python/fixture-helpers.js';

const cli = runCaptured;

interface JFrame {
  kind: string;
  module: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
}
interface JStack {
  pid: number;
  stackId: number;
  stackIds?: number[];
  liveBytes: number;
  frames: JFrame[];
  folded?: { index: number; reason: string; count: number }[];
}

const tags = workloadLines();
const line = (tag: string): number => {
  const t = tags.get(tag);
  if (!t) throw new Error(`no # @${tag} in the workload`);
  return t.line;
};
const sig = (f: JFrame): string => `${f.function}:${f.line}`;
const totals = jeprofTotals();

describe.each(VERSIONS)('Python-first view on %s', (v) => {
  const parent = parentLastDump(listDumps(v));
  const dump = join(PY_FIXTURES, v, parent.name);

  it('the leak reads make_record ← leaky_handler ← Pipeline.step ← main, first, with no interpreter frame left', async () => {
    const r = await cli('top', dump, '--json', '--no-symbols', '-n', '100000');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { stacks: JStack[] };
    const stacks = doc.stacks.filter((s) => s.pid === parent.pid);
    const leak = stacks.filter((s) => s.frames[0]?.function === 'make_record');
    expect(leak.length).toBeGreaterThan(0);
    for (const s of leak) {
      expect(s.frames.slice(0, 3).map(sig)).toEqual([
        `make_record:${line('leak-alloc')}`,
        `leaky_handler:${line('leak-call')}`,
        `Pipeline.step:${line('pipeline-leak')}`,
      ]);
      expect([`main:${line('main-step')}`, `main:${line('main-step-2')}`]).toContain(sig(s.frames[3]));
      // the interpreter's allocation plumbing (PyByteArray_Resize, type_call, …) is folded leafward of make_record
      expect(s.folded?.[0]).toMatchObject({ index: 0, reason: 'interpreter' });
    }
    for (const s of stacks)
      for (const f of s.frames) expect(f.kind === 'native' && isInterpreterModule(f.module)).toBe(false);
    // the deep recursion and the Unicode module keep their call sites first too
    expect(stacks.some((s) => sig(s.frames[0]) === `recurse:${line('deep-alloc')}`)).toBe(true);
    expect(stacks.some((s) => s.frames[0]?.function === '分配_é.<locals>.<lambda>')).toBe(true);
  });

  it('folding keeps every byte: Σ rows = the snapshot total = jeprof; every frame is shown or counted in a fold', async () => {
    const first = JSON.parse((await cli('top', dump, '--json', '--no-symbols', '-n', '100000')).out) as {
      stacks: JStack[];
      processes: { pid: number; snapshot: { liveBytes: number } }[];
    };
    const merged = JSON.parse(
      (await cli('top', dump, '--json', '--no-symbols', '-n', '100000', '--stacks', 'merged')).out,
    ) as { stacks: JStack[] };
    const sum = (xs: JStack[]) => xs.filter((s) => s.pid === parent.pid).reduce((a, s) => a + s.liveBytes, 0);
    const total = first.processes.find((p) => p.pid === parent.pid)?.snapshot.liveBytes ?? NaN;
    expect(sum(first.stacks)).toBeCloseTo(total, 3);
    expect(sum(merged.stacks)).toBeCloseTo(total, 3);
    expect(Math.abs(total - (totals.get(`${v}/${parent.name}`) ?? NaN))).toBeLessThanOrEqual(1);
    const mergedById = new Map(merged.stacks.filter((s) => s.pid === parent.pid).map((s) => [s.stackId, s] as const));
    let checked = 0;
    for (const s of first.stacks) {
      if (s.pid !== parent.pid || s.stackIds) continue;
      const m = mergedById.get(s.stackId);
      if (!m) continue;
      const folded = (s.folded ?? []).reduce((a, f) => a + f.count, 0);
      expect(s.frames.length + folded).toBe(m.frames.length);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('the terminal table starts every Python row with its call site', async () => {
    const r = await cli('top', dump, '--no-symbols', '-n', '3', '--pid', String(parent.pid));
    const rows = r.out.split('\n').filter((l) => /^\s+\d+\s/.test(l));
    expect(rows.length).toBe(3);
    for (const row of rows) expect(row).toMatch(/\d\s{2}(make_record \(workload\.py:\d+\)|分配_é|recurse \(workload)/);
    expect(r.out).toMatch(/\[\+\d+ interpreter frames\]/);
    expect(r.out).not.toMatch(/libpython3\.\d+\.so[^ ]*\+0x[0-9a-f]+ ←/);
  });
});

describe('--fold-imports', () => {
  it('folds <frozen importlib._bootstrap…> frames into import-machinery runs, keeping the totals', async () => {
    const dump = join(PY_FIXTURES, 'py312', parentLastDump(listDumps('py312')).name);
    const plain = JSON.parse(
      (await cli('top', dump, '--json', '--no-symbols', '-n', '100000', '--stacks', 'python')).out,
    ) as { stacks: JStack[] };
    const folded = JSON.parse(
      (await cli('top', dump, '--json', '--no-symbols', '-n', '100000', '--stacks', 'python', '--fold-imports')).out,
    ) as { stacks: JStack[] };
    const isImport = (f: JFrame) => (f.file ?? '').startsWith('<frozen importlib._bootstrap');
    expect(plain.stacks.some((s) => s.frames.some(isImport))).toBe(true);
    expect(folded.stacks.some((s) => s.frames.some(isImport))).toBe(false);
    expect(folded.stacks.some((s) => s.folded?.some((f) => f.reason === 'import'))).toBe(true);
    const sum = (xs: JStack[]) => xs.reduce((a, s) => a + s.liveBytes, 0);
    expect(sum(folded.stacks)).toBeCloseTo(sum(plain.stacks), 3);
  });
});

describe('terminal width', () => {
  it('rows fit the given width and keep the first surviving frame in the first columns', async () => {
    const { displayWidth, terminalColumns } = await import('./format.js');
    const dump = join(PY_FIXTURES, 'py312', parentLastDump(listDumps('py312')).name);
    for (const columns of [60, 100, 160]) {
      const lines = (await runCapturedAt(columns, 'top', dump, '--no-symbols', '-n', '5')).out.split('\n');
      for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(columns);
      const at = lines.findIndex((l) => /^\s+1\s/.test(l));
      if (columns >= 100) expect(lines[at]).toMatch(/\d\s{2}make_record \(workload\.py/);
      // too narrow for the stack beside the figures: it goes whole on its own line, under its row
      else expect(lines[at + 1]).toMatch(/^\s{4,}make_record \(workload\.py:\d+\) ← /);
    }
    // the job-wide growth table on a 100-column pipe: the top suspect's Python call site is whole (the
    // workload's own expected.json names it), on its own line under its row
    const job = JSON.parse(readFileSync(join(ROOT, 'fixtures/job/expected.json'), 'utf8')) as {
      sites: { leak: { function: string; file: string; line: number } };
    };
    const leak = job.sites.leak;
    const lines = (
      await runCapturedAt(100, 'growth', join(ROOT, 'fixtures/job/dumps'), '--no-symbols', '-n', '3')
    ).out.split('\n');
    for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(100);
    const top = lines.findIndex((l) => /^\s+1\s/.test(l));
    expect(lines[top]).toMatch(/steady/);
    expect(lines[top + 1]).toContain(`${leak.function} (${leak.file}:${leak.line}) ← `);
    expect(terminalColumns({ isTTY: false }, {})).toBe(100);
    expect(terminalColumns({ isTTY: false }, { COLUMNS: '132' })).toBe(132);
    expect(terminalColumns({ isTTY: true, columns: 90 }, { COLUMNS: '132' })).toBe(90);
  });
});
