import { describe, expect, it } from 'vitest';
import {
  isInterpreterModule,
  parseStackMode,
  pythonFrameJson,
  pythonFramesForDump,
  viewStack,
  type PythonFrameView,
  type StackView,
} from './python-stacks.js';
import { findPyFramesInDump, isPythonPseudoAddress, parsePyFrames, type PyFrameTable } from '../formats/pyframes.js';
import { findMapping, parseMaps } from '../formats/proc-maps.js';
import {
  childDump,
  evalRanges,
  jeprofTotals,
  listDumps,
  parentLastDump,
  unbiasedBytes,
  VERSIONS,
  workloadLines,
  type FixtureDump,
  type FixtureRecord,
} from '../../fixtures/python/fixture-helpers.js';

function tableOf(d: FixtureDump): PyFrameTable {
  const t = d.sidecar !== null ? parsePyFrames(d.sidecar, 'sidecar') : findPyFramesInDump(d.text);
  if (!t) throw new Error(`${d.name}: no table`);
  return t;
}

const tags = workloadLines();
const lineOf = (tag: string): number => {
  const t = tags.get(tag);
  if (!t) throw new Error(`no tag ${tag}`);
  return t.line;
};

const pyOnly = (v: StackView): PythonFrameView[] => v.frames.filter((f): f is PythonFrameView => f.kind === 'python');
const sig = (fs: PythonFrameView[]): string[] => fs.map((f) => `${f.function}:${f.line}`);

/** The records whose Python view starts (leaf first) with the given function:line list. */
function findPath(d: FixtureDump, t: PyFrameTable, path: string[]): { rec: FixtureRecord; view: StackView }[] {
  const out: { rec: FixtureRecord; view: StackView }[] = [];
  for (const rec of d.records) {
    const view = viewStack(rec.frames, t, 'python');
    const s = sig(pyOnly(view));
    if (path.every((p, i) => s[i] === p)) out.push({ rec, view });
  }
  return out;
}

describe('merged / python / native views of the real fixture stacks', () => {
  for (const v of VERSIONS) {
    const dumps = listDumps(v);
    const parent = parentLastDump(dumps);
    const t = tableOf(parent);

    it(`${v}: the steady leak path has the right functions and lines, and grows`, () => {
      const path = [
        `make_record:${lineOf('leak-alloc')}`,
        `leaky_handler:${lineOf('leak-call')}`,
        `Pipeline.step:${lineOf('pipeline-leak')}`,
      ];
      const hits = findPath(parent, t, path);
      expect(hits.length).toBeGreaterThan(0);
      // both loops of main() leak through it
      const callers = new Set(hits.map((h) => sig(pyOnly(h.view))[3]));
      expect(callers).toContain(`main:${lineOf('main-step')}`);
      expect(callers).toContain(`main:${lineOf('main-step-2')}`);
      const live = hits.reduce((s, h) => s + unbiasedBytes(h.rec.liveObjects, h.rec.liveBytes, parent.period), 0);
      // 3000 records of 4096..7680 bytes are kept (~17 MB); sampling gives an estimate
      expect(live).toBeGreaterThan(10e6);
      expect(live).toBeLessThan(30e6);
    });

    it(`${v}: allocate-and-free shows only in the accumulated columns`, () => {
      const hits = findPath(parent, t, [
        `transient_handler:${lineOf('transient-alloc')}`,
        `Pipeline.step:${lineOf('pipeline-transient')}`,
      ]);
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.reduce((s, h) => s + h.rec.liveBytes, 0)).toBe(0);
      // 3,000 × 64 KiB (+1: an 80 KiB size class) allocated in total: ~200-250 MB, estimated from samples
      const accum = hits.reduce((s, h) => s + unbiasedBytes(h.rec.accumObjects, h.rec.accumBytes, parent.period), 0);
      expect(accum).toBeGreaterThan(120e6);
      expect(accum).toBeLessThan(500e6);
    });

    it(`${v}: deep recursion is cut by the producer and marked truncated`, () => {
      const hits = findPath(parent, t, [`recurse:${lineOf('deep-alloc')}`, `recurse:${lineOf('deep-call')}`]);
      expect(hits.length).toBe(1);
      const [{ view, rec }] = hits;
      expect(view.truncated).toBe(true);
      const fs = pyOnly(view);
      expect(fs.length).toBe(96);
      expect(fs.every((f) => f.function === 'recurse')).toBe(true);
      // the 4 MB object is live
      expect(rec.liveBytes).toBeGreaterThanOrEqual(4_000_000);
      expect(viewStack(rec.frames, t, 'merged').truncated).toBe(true);
    });

    it(`${v}: a thread that released the GIL still gets its Python frames`, () => {
      const scanner = parent.records.filter(
        (r) => sig(pyOnly(viewStack(r.frames, t, 'python')))[0] === `scanner:${lineOf('scanner-listdir')}`,
      );
      expect(scanner.length).toBeGreaterThan(0);
      for (const r of scanner) {
        const fs = pyOnly(viewStack(r.frames, t, 'python'));
        expect(fs[1].function).toBe('Thread.run');
        expect(fs[fs.length - 1].function).toBe('Thread._bootstrap');
        expect(r.threads).not.toContain(0); // not the main thread
      }
      expect(scanner.reduce((s, r) => s + r.accumObjects, 0)).toBeGreaterThan(0);
    });

    it(`${v}: non-ASCII names and a lambda`, () => {
      const hits = findPath(parent, t, [
        `分配_é.<locals>.<lambda>:${lineOf('unicode-lambda')}`,
        `分配_é:${lineOf('unicode-alloc')}`,
        `main:${lineOf('unicode-call')}`,
      ]);
      expect(hits.length).toBeGreaterThan(0);
      expect(pyOnly(hits[0].view)[1].file?.endsWith('dir with space 100% ünï/模块_mod.py')).toBe(true);
    });

    it(`${v}: merged view replaces each group's eval frame, keeps the other natives, and resolves everything`, () => {
      const maps = parseMaps(parent.mapsText).entries;
      const ranges = evalRanges(v);
      expect(ranges.length).toBeGreaterThan(0);
      let groups = 0;
      for (const rec of parent.records) {
        const merged = viewStack(rec.frames, t, 'merged');
        const native = viewStack(rec.frames, t, 'native');
        const python = viewStack(rec.frames, t, 'python');
        expect(merged.unmerged).toBe(false);
        expect(python.frames.every((f) => f.kind === 'python' && f.resolved)).toBe(true);
        expect(native.frames.every((f) => f.kind === 'native' && !isPythonPseudoAddress(f.addr))).toBe(true);
        // the native frame right after each Python group is the interpreter's eval loop: its return
        // address - 1 lies in libpython's _PyEval_EvalFrameDefault (file offset = ELF address there)
        const hidden = native.frames.filter(
          (n) => !merged.frames.some((m) => m.kind === 'native' && m.index === n.index),
        );
        for (const h of hidden) {
          const pc = BigInt(h.addr) - 1n;
          const m = findMapping(maps, pc);
          expect(m?.path ?? '', h.addr).toMatch(/libpython3\.1[123]/);
          if (!m) continue;
          const off = pc - m.start + m.offset;
          expect(
            ranges.some((r) => m.path.endsWith('/' + r.library) && off >= r.start && off < r.end),
            `${h.addr} at ${m.path}+0x${off.toString(16)}`,
          ).toBe(true);
          groups++;
        }
        expect(merged.frames.length).toBe(native.frames.length - hidden.length + python.frames.length);
        // markers are never frames
        expect(merged.frames.length + hidden.length).toBeLessThanOrEqual(rec.frames.length);
      }
      expect(groups).toBeGreaterThan(10);
    });

    it(`${v}: regrouping by Python view loses no bytes; totals match jeprof`, () => {
      const totals = jeprofTotals();
      for (const d of dumps) {
        const want = totals.get(`${v}/${d.name}`);
        expect(want, d.name).toBeDefined();
        const tab = tableOf(d);
        let total = 0;
        const byPython = new Map<string, number>();
        for (const r of d.records) {
          const b = unbiasedBytes(r.liveObjects, r.liveBytes, d.period);
          total += b;
          const key = sig(pyOnly(viewStack(r.frames, tab, 'python'))).join(';');
          byPython.set(key, (byPython.get(key) ?? 0) + b);
        }
        expect(Math.floor(total)).toBe(want);
        expect(Math.floor([...byPython.values()].reduce((a, b) => a + b, 0) + 1e-6)).toBe(want);
      }
    });
  }

  it('py312: the leak grows between snapshots; the forked child has its own path', () => {
    const dumps = listDumps('py312');
    const first = dumps.find((d) => d.name.endsWith('.0.m0.heap'));
    const last = parentLastDump(dumps);
    if (!first) throw new Error('no m0');
    const leak = (d: FixtureDump): number =>
      findPath(d, tableOf(d), [`make_record:${lineOf('leak-alloc')}`]).reduce(
        (s, h) => s + unbiasedBytes(h.rec.liveObjects, h.rec.liveBytes, d.period),
        0,
      );
    expect(leak(last)).toBeGreaterThan(1.5 * leak(first));
    const child = childDump(dumps);
    if (!child) throw new Error('no child dump');
    const hits = findPath(child, tableOf(child), [
      `child_work:${lineOf('child-alloc')}`,
      `main:${lineOf('child-call')}`,
    ]);
    expect(hits.length).toBeGreaterThan(0);
    // inherited stacks: the child's dump also holds the parent's leak path
    expect(leak(child)).toBeGreaterThan(0);
  });
});

describe('view rules on synthetic stacks', () => {
  const table = parsePyFrames(
    [
      'PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=1 python=3.12.1',
      'F 0x7079100000000010 22 20 make_record /srv/app.py',
      'F 0x7079100000000020 30 28 handler /srv/app.py',
      'F 0x7079100000000030 5 1 <module> /srv/app.py',
      'END 3',
    ].join('\n'),
  );
  const EVAL1 = '0x7f0000001000';
  const EVAL2 = '0x7f0000002000';
  // leaf: malloc, PyBytes, [py make_record, handler], eval1, call plumbing, [py <module>], eval2, main
  const merged = [
    '0x7f0000000100',
    '0x7f0000000200',
    '0x7079100000000010',
    '0x7079100000000020',
    EVAL1,
    '0x7f0000000300',
    '0x7079100000000030',
    EVAL2,
    '0x555500000100',
  ];

  it('merged hides the eval frame after each group, python-only and native-only filter', () => {
    const m = viewStack(merged, table, 'merged');
    expect(m.frames.map((f) => (f.kind === 'python' ? f.function : f.addr))).toEqual([
      '0x7f0000000100',
      '0x7f0000000200',
      'make_record',
      'handler',
      '0x7f0000000300',
      '<module>',
      '0x555500000100',
    ]);
    const withInterp = viewStack(merged, table, 'merged', { isInterpreterFrame: (a) => a.startsWith('0x7f') });
    // leaf-side natives stay (allocation site); interpreter plumbing between groups goes
    expect(withInterp.frames.map((f) => (f.kind === 'python' ? f.function : f.addr))).toEqual([
      '0x7f0000000100',
      '0x7f0000000200',
      'make_record',
      'handler',
      '<module>',
      '0x555500000100',
    ]);
    expect(sig(pyOnly(viewStack(merged, table, 'python')))).toEqual(['make_record:22', 'handler:30', '<module>:5']);
    expect(viewStack(merged, table, 'native').frames.map((f) => f.addr)).toEqual(
      merged.filter((a) => !a.startsWith('0x7079')),
    );
  });

  it('undoes a -1 applied to tagged callers (jeprof style) and labels unresolved frames', () => {
    const minus1 = merged.map((a, i) => (i > 0 ? '0x' + (BigInt(a) - 1n).toString(16) : a));
    expect(sig(pyOnly(viewStack(minus1, table, 'python')))).toEqual(['make_record:22', 'handler:30', '<module>:5']);
    const v = viewStack(['0x7f0000000100', '0x7079100000000990', EVAL1], table, 'merged');
    const p = pyOnly(v)[0];
    expect(p.resolved).toBe(false);
    expect(p.label).toBe('[py] <unresolved 0x7079100000000990>');
    expect(pythonFrameJson(p)).toEqual({
      kind: 'python',
      function: '<unresolved 0x7079100000000990>',
      file: null,
      line: null,
    });
    const none = viewStack(['0x7079100000000010', EVAL1], null, 'merged');
    expect(pyOnly(none)[0].label).toBe('[py] <unresolved 0x7079100000000010>');
    expect(pyOnly(viewStack(['0x7079100000000010'], table, 'merged'))[0].label).toBe(
      '[py] make_record (/srv/app.py:22)',
    );
  });

  it('markers are flags, not frames; unknown frames are shown', () => {
    const v = viewStack(
      ['0x7f01', '0x7079100000000010', '0x7079400000000000', EVAL1, '0x7079500000000000', EVAL2, '0x7079400000000000'],
      table,
      'merged',
    );
    expect(v.truncated).toBe(true);
    expect(v.frames.map((f) => (f.kind === 'python' ? f.function : f.addr))).toEqual([
      '0x7f01',
      'make_record',
      '<unknown>',
    ]);
    expect(v.pythonFrames).toBe(2);
  });

  it('fallback layout: Python frames outward of the natives, or re-merged with an eval-frame test', () => {
    const fb = [
      '0x7f01',
      EVAL1,
      '0x7f03',
      EVAL2,
      '0x5501',
      '0x7079300000000000',
      '0x7079100000000010',
      '0x7079100000000020',
      '0x7079200000000000',
      '0x7079100000000030',
    ];
    const plain = viewStack(fb, table, 'merged');
    expect(plain.unmerged).toBe(true);
    expect(plain.frames.map((f) => (f.kind === 'python' ? f.function : f.addr))).toEqual([
      '0x7f01',
      EVAL1,
      '0x7f03',
      EVAL2,
      '0x5501',
      'make_record',
      'handler',
      '<module>',
    ]);
    const re = viewStack(fb, table, 'merged', { isEvalFrame: (a) => a === EVAL1 || a === EVAL2 });
    expect(re.frames.map((f) => (f.kind === 'python' ? f.function : f.addr))).toEqual([
      '0x7f01',
      'make_record',
      'handler',
      '0x7f03',
      '<module>',
      '0x5501',
    ]);
    expect(sig(pyOnly(viewStack(fb, table, 'python')))).toEqual(['make_record:22', 'handler:30', '<module>:5']);
  });

  it('tells pseudo-addresses from addresses; parses --stacks values', () => {
    expect(isPythonPseudoAddress('0x7079100000000010')).toBe(true);
    expect(isPythonPseudoAddress('0x707910000000000f')).toBe(true);
    expect(isPythonPseudoAddress('0x7f4bc7446b86')).toBe(false);
    expect(isPythonPseudoAddress('0x5059000005000083')).toBe(false);
    expect(isPythonPseudoAddress('0xffffffffff600000')).toBe(false);
    expect(parseStackMode('python')).toBe('python');
    expect(parseStackMode('mixed')).toBeNull();
    for (const m of [
      'libpython3.12.so.1.0',
      '/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0',
      'python3.11',
      'python3',
      'libpython3.13t.so.1.0',
    ])
      expect(isInterpreterModule(m), m).toBe(true);
    for (const m of [
      'libc.so.6',
      'libjemalloc.so.2',
      '_multiarray_umath.cpython-312-x86_64-linux-gnu.so',
      'pythonista',
      null,
    ])
      expect(isInterpreterModule(m), String(m)).toBe(false);
  });
});

describe('loading a job folder attaches the Python frame tables', () => {
  it('sidecar and in-dump tables reach ProcessSeries.pythonFrames; the CLI shows Python frames', async () => {
    const { collectInputFiles } = await import('../../node/io/node-files.js');
    const { loadJob } = await import('../load/load-job.js');
    const { run } = await import('../../node/cli/main.js');
    const { join } = await import('node:path');
    const { PY_FIXTURES } = await import('../../fixtures/python/fixture-helpers.js');
    const files = await collectInputFiles(VERSIONS.map((v) => join(PY_FIXTURES, v)));
    const job = await loadJob(files);
    expect(job.processes.length).toBe(5); // 3.12: parent + child; 3.11: parent; 3.13: parent + child
    for (const p of job.processes) {
      const t = p.pythonFrames;
      expect(t, p.key).toBeTruthy();
      if (!t) continue;
      expect(t.pid).toBe(p.pid);
      // every pseudo-address of the process's stacks is named
      const unresolved = p.addresses.hex.filter(
        (a) => isPythonPseudoAddress(a) && !t.frames.has(a) && !t.markers.has(a),
      );
      expect(unresolved).toEqual([]);
    }
    expect(job.processes.filter((p) => p.pythonFrames?.source === 'dump').length).toBe(2); // the 3.13 (append) set
    expect(job.warnings.filter((w) => /Python frame/.test(w.message))).toEqual([]);

    let out = '';
    const code = await run(['top', join(PY_FIXTURES, 'py312'), '-n', '3', '--json', '--stacks', 'python'], {
      out: (s) => (out += s),
      err: () => {},
    });
    expect(code).toBe(0);
    const doc = JSON.parse(out) as {
      stacks: { frames: { kind: string; function: string; file: string; line: number }[] }[];
    };
    const top = doc.stacks[0].frames;
    expect(top.every((f) => f.kind === 'python')).toBe(true);
    expect(top[0]).toMatchObject({ kind: 'python', function: 'make_record', line: lineOf('leak-alloc') });
    expect(top[0].file.endsWith('workload/workload.py')).toBe(true);
    // merged: Python frames in place of the eval loop's, every other frame kept (libpython's on both sides)
    out = '';
    await run(['top', join(PY_FIXTURES, 'py312'), '-n', '3', '--json', '--stacks', 'merged'], {
      out: (s) => (out += s),
      err: () => {},
    });
    const merged = JSON.parse(out) as {
      stacks: { frames: { kind: string; function: string; module: string | null }[] }[];
    };
    const mf = merged.stacks[0].frames;
    const firstPy = mf.findIndex((f) => f.kind === 'python');
    expect(firstPy).toBeGreaterThan(0); // leaf-side native frames (the allocation inside libpython) stay
    expect(
      mf.slice(firstPy).filter((f) => f.kind !== 'python' && isInterpreterModule(f.module)).length,
    ).toBeGreaterThan(0);
    expect(
      mf
        .filter((f) => f.kind === 'python')
        .map((f) => f.function)
        .slice(0, 3),
    ).toEqual(['make_record', 'leaky_handler', 'Pipeline.step']);
    // the default (python-first): the interpreter's frames folded, the Python call site first
    out = '';
    await run(['top', join(PY_FIXTURES, 'py312'), '-n', '3', '--json'], { out: (s) => (out += s), err: () => {} });
    const pf = (
      JSON.parse(out) as { stacks: { frames: { kind: string; function: string; module: string | null }[] }[] }
    ).stacks[0].frames;
    expect(pf[0]).toMatchObject({ kind: 'python', function: 'make_record' });
    expect(pf.filter((f) => f.kind !== 'python' && isInterpreterModule(f.module))).toEqual([]);
    out = '';
    await run(['top', join(PY_FIXTURES, 'py312'), '-n', '3', '--json', '--stacks', 'native'], {
      out: (s) => (out += s),
      err: () => {},
    });
    const nat = JSON.parse(out) as { stacks: { frames: { kind: string; address: string }[] }[] };
    expect(nat.stacks[0].frames.some((f) => f.kind === 'python' || isPythonPseudoAddress(f.address))).toBe(false);
  });
});

describe('a sidecar from another run is refused by its token', () => {
  it("keeps the matching table, drops one whose token differs from the dump's memfd mapping", async () => {
    const d = parentLastDump(listDumps('py312'));
    const good = d.sidecar ?? '';
    const file = (path: string, text: string) => {
      const bytes = new TextEncoder().encode(text);
      return {
        path,
        size: bytes.length,
        mtimeMs: null,
        read: async (o: number, n: number) => bytes.subarray(o, o + n),
      };
    };
    const warnings: { file: string; message: string }[] = [];
    const ok = await pythonFramesForDump(
      'x.heap',
      null,
      new Map([['x.heap.pyframes', file('x.heap.pyframes', good)]]),
      warnings,
      d.mapsText,
    );
    expect(ok?.frames.size).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
    const stale = good.replace(/token=[0-9a-f]+/, 'token=00000000deadbeef');
    const refused = await pythonFramesForDump(
      'x.heap',
      null,
      new Map([['x.heap.pyframes', file('x.heap.pyframes', stale)]]),
      warnings,
      d.mapsText,
    );
    expect(refused).toBeNull();
    expect(warnings[0].message).toMatch(/belongs to another run/);
    // without a token in the maps (another producer, or no memfd) the table is used
    expect(
      await pythonFramesForDump('x.heap', null, new Map([['x.heap.pyframes', file('x.heap.pyframes', stale)]]), [], ''),
    ).not.toBeNull();
  });
});

describe('top in the Python-only view', () => {
  it('stacks that differ only in hidden native frames are one row, their bytes summed', async () => {
    const { run } = await import('../../node/cli/main.js');
    const { join } = await import('node:path');
    const { PY_FIXTURES } = await import('../../fixtures/python/fixture-helpers.js');
    const dir = join(PY_FIXTURES, 'py312');
    const get = async (mode: string) => {
      let out = '';
      await run(['top', dir, '-n', '100000', '--json', '--no-symbols', '--stacks', mode], {
        out: (s) => (out += s),
        err: () => {},
      });
      return JSON.parse(out) as {
        stacks: {
          process: string;
          liveBytes: number;
          stackIds?: number[];
          frames: { function?: string; line?: number }[];
        }[];
      };
    };
    const py = await get('python');
    const merged = await get('merged');
    const keys = py.stacks.map((s) => s.process + '|' + s.frames.map((f) => `${f.function}:${f.line}`).join(';'));
    expect(new Set(keys).size).toBe(keys.length); // no two rows look the same
    expect(py.stacks.some((s) => (s.stackIds?.length ?? 1) > 1)).toBe(true);
    const sum = (d: { stacks: { liveBytes: number }[] }) => d.stacks.reduce((t, s) => t + s.liveBytes, 0);
    expect(sum(py)).toBeCloseTo(sum(merged), 3); // regrouping moves bytes, never loses them
  });
});
