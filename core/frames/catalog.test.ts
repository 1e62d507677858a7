import { describe, expect, it } from 'vitest';
import type { ProcessSeries } from '../model/model.js';
import { isAllocatorPath } from '../model/process-builder.js';
import { findMapping, type MapsEntry } from '../formats/proc-maps.js';
import { FrameCatalog } from './catalog.js';
import { guessMainExecutable, moduleRole } from './describe.js';

const map = (start: bigint, end: bigint, path: string, offset = 0n): MapsEntry => ({
  start,
  end,
  perms: 'r-xp',
  offset,
  dev: '00:00',
  inode: 1,
  path,
  deleted: false,
});
const MAPS = [
  map(0x1000n, 0x2000n, '/opt/app/trainer', 0x1000n),
  map(0x7000n, 0x8000n, '/usr/lib/libjemalloc.so.2'),
  map(0x9000n, 0xa000n, '/usr/lib/libc.so.6'),
];

function proc(stacks: string[][], alloc: number[]): ProcessSeries {
  const hex: string[] = [];
  const index = new Map<string, number>();
  const frames: number[] = [];
  const offsets = [0];
  for (const s of stacks) {
    for (const h of s) {
      if (!index.has(h)) {
        index.set(h, hex.length);
        hex.push(h);
      }
      frames.push(index.get(h) as number);
    }
    offsets.push(frames.length);
  }
  return {
    key: 'k',
    pid: 1,
    pidNamespace: null,
    prefix: 'p',
    snapshots: [],
    stacks: { count: stacks.length, offsets, frames: Uint32Array.from(frames), allocatorDepth: alloc },
    addresses: { hex, index },
    maps: MAPS,
    endedWithoutFinalDump: true,
    symbols: null,
  };
}

describe('frame helpers', () => {
  it('finds mappings, the allocator and module roles', () => {
    expect(findMapping(MAPS, 0x1234n)).toBe(MAPS[0]);
    expect(findMapping(MAPS, 0x8000n)).toBeNull();
    expect(guessMainExecutable(MAPS)).toBe('/opt/app/trainer');
    // the one allocator rule (model's allocatorDepth and the frames' kind): jemalloc, its je_ build, tcmalloc
    expect(isAllocatorPath('/usr/lib/libjemalloc.so.2')).toBe(true);
    expect(isAllocatorPath('/opt/lib/libje_malloc.so')).toBe(true);
    expect(isAllocatorPath('/usr/lib/libtcmalloc_minimal.so.4')).toBe(true);
    expect(isAllocatorPath('/usr/local/lib/libjemalloc.2.dylib')).toBe(true);
    expect(isAllocatorPath('/usr/lib/libc.so.6')).toBe(false);
    expect(isAllocatorPath('/opt/app/libjemalloc_wrapper.txt')).toBe(false);
    expect(moduleRole('/opt/app/trainer', '/opt/app/trainer')).toBe('program');
    expect(moduleRole('/usr/lib/libc.so.6', '/opt/app/trainer')).toBe('library');
    expect(moduleRole('/usr/bin/python3.11', '/usr/bin/python3.11')).toBe('library');
    expect(moduleRole('[vdso]', '/opt/app/trainer')).toBe('unknown');
    expect(moduleRole(null, '/opt/app/trainer')).toBe('unknown');
  });
});

describe('FrameCatalog without symbols', () => {
  const p = proc(
    [
      ['0x7010', '0x1100', '0x9200'],
      ['0x7010', '0x1200', '0x9200'],
    ],
    [1, 1],
  );
  const t = new FrameCatalog(p);
  it('labels module+offset and hides allocator frames per view', () => {
    const k = t.stackKeys(0, { mode: 'merged', hideAllocator: true });
    expect(Array.from(k, (x) => t.frames[x].label)).toEqual(['trainer+0x1100', 'libc.so.6+0x200']);
    const all = t.stackKeys(0, { mode: 'merged', hideAllocator: false });
    expect(t.frames[all[0]].kind).toBe('allocator');
    expect(t.frames[k[0]].kind).toBe('native');
    expect(t.frames[k[0]].role).toBe('program');
    expect(t.frames[k[0]].group).toBe('program');
    // shared frames share keys
    expect(t.stackKeys(1, { mode: 'merged', hideAllocator: true })[1]).toBe(k[1]);
    expect(t.stackKeys(0, { mode: 'python', hideAllocator: true }).length).toBe(0);
  });
  it('details keep every frame, flagging allocator ones', () => {
    const d = t.stackDetail(0, 'merged');
    expect(d.map((f) => f.hidden)).toEqual([true, false, false]);
    expect(d[1].offset).toBe('0x1100');
    expect(t.hasPython).toBe(false);
  });
});

describe('FrameCatalog with Python frames (PYFRAMES/1)', async () => {
  const { parsePyFrames } = await import('../formats/pyframes.js');
  const PY1 = '0x7079100000000010';
  const PY2 = '0x7079100000000020';
  const table = parsePyFrames(
    [
      'PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=1 python=3.12.1',
      `F ${PY1} 12 10 make_record /srv/app/records.py`,
      `F ${PY2} 40 35 handler /srv/app/server.py`,
      'END 2',
    ].join('\n'),
  );
  // leaf first: jemalloc, a libc frame, two Python frames, the eval frame (kept by the producer), main
  const p = { ...proc([['0x7010', '0x9200', PY1, PY2, '0x1500', '0x1100']], [1]), pythonFrames: table };
  const t = new FrameCatalog(p);
  const labels = (mode: 'merged' | 'python' | 'native'): string[] =>
    Array.from(t.stackKeys(0, { mode, hideAllocator: true }), (k) => t.frames[k].label);
  it('has the table', () => {
    expect(table?.frames.size).toBe(2);
    expect(t.hasPython).toBe(true);
  });
  it('merged: Python frames in place of the eval frame', () => {
    expect(labels('merged')).toEqual(['libc.so.6+0x200', 'make_record', 'handler', 'trainer+0x1100']);
  });
  it('python only and native only', () => {
    expect(labels('python')).toEqual(['make_record', 'handler']);
    expect(labels('native')).toEqual(['libc.so.6+0x200', 'trainer+0x1500', 'trainer+0x1100']);
  });
  it('stack details carry Python files and lines', () => {
    const d = t.stackDetail(0, 'merged');
    const py = d.filter((f) => f.kind === 'python');
    expect(py.map((f) => `${f.function} ${f.file}:${f.line}`)).toEqual([
      'make_record /srv/app/records.py:12',
      'handler /srv/app/server.py:40',
    ]);
  });
});

describe('FrameCatalog on a capture that names its frames (memleak, PyTorch)', async () => {
  const { loadJob } = await import('../load/load-job.js');
  const text =
    'Attaching to pid 9, Ctrl+C to quit.\n[10:00:01] Top 10 stacks with outstanding allocations:\n\t64 bytes in 1 allocations from stack\n\t\tgrow+0x1f [libjob.so]\n\t\tmain+0x10 [a.out]\n';
  const b = new TextEncoder().encode(text);
  const job = await loadJob([
    { path: 'm.txt', size: b.length, mtimeMs: 0, read: async (o: number, l: number) => b.subarray(o, o + l) },
  ]);
  const t = new FrameCatalog(job.processes[0]);
  it("memleak's native frames read as bcc prints them, as library frames", () => {
    const k = t.stackKeys(0, { mode: 'merged', hideAllocator: true });
    expect(Array.from(k, (x) => [t.frames[x].label, t.frames[x].kind, t.frames[x].role, t.frames[x].module])).toEqual([
      ['grow+0x1f [libjob.so]', 'native', 'library', 'libjob.so'],
      ['main+0x10 [a.out]', 'native', 'library', 'a.out'],
    ]);
  });
});

describe('hostile names (issue 13, item 5)', () => {
  it('control and bidi characters in a mapped path are marked visibly in labels and paths', () => {
    const p = proc([['0x1100']], [0]);
    p.maps = [map(0x1000n, 0x2000n, '/opt/x\u202E/lib\u001b[2Jfoo\u200F.so')];
    const t = new FrameCatalog(p);
    const f = t.frames[t.stackKeys(0, { mode: 'merged', hideAllocator: false })[0]];
    expect(f.label).toBe('lib<U+001B>[2Jfoo<U+200F>.so+0x100');
    expect(f.modulePath).toBe('/opt/x<U+202E>/lib<U+001B>[2Jfoo<U+200F>.so');
  });
});

describe("FrameCatalog folds as foldStack does (the CLI's folding), on the real Python fixtures", async () => {
  const { collectInputFiles } = await import('../../node/io/node-files.js');
  const { loadJob } = await import('../load/load-job.js');
  const { join } = await import('node:path');
  const { PY_FIXTURES, VERSIONS } = await import('../../fixtures/python/fixture-helpers.js');
  const { foldStack, MARKER_LABEL } = await import('./stack-labels.js');
  const { viewFolds } = await import('./view.js');
  const job = await loadJob(await collectInputFiles(VERSIONS.map((v) => join(PY_FIXTURES, v))));
  it.each([false, true])('python-first, import machinery folded too: %s', (foldImports) => {
    let folds = 0;
    for (const p of job.processes) {
      const t = new FrameCatalog(p);
      const view = { mode: 'python-first' as const, hideAllocator: true, foldImports };
      const opts = viewFolds(p, view);
      expect(opts.interpreter).toBe(true);
      for (let s = 0; s < p.stacks.count; s++) {
        // the same stack unfolded, folded by foldStack: a marker where each run was, then the frames
        const raw = Array.from(t.stackKeys(s, { ...view, unfold: true, foldImports: false }), (k) => t.frames[k]);
        const ref = foldStack(raw, opts);
        const want: string[] = [];
        for (let i = 0, fi = 0; i <= ref.frames.length; i++) {
          while (fi < ref.folds.length && ref.folds[fi].index === i) want.push(MARKER_LABEL[ref.folds[fi++].reason]);
          if (i < ref.frames.length) want.push(ref.frames[i].label);
        }
        folds += ref.folds.length;
        expect(
          Array.from(t.stackKeys(s, view), (k) => t.frames[k].label),
          `${p.key} stack ${s}`,
        ).toEqual(want);
      }
    }
    expect(folds).toBeGreaterThan(100);
  });
});
