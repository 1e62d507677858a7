// The start-up fold on real stacks: the trainer of fixtures/oom-job (CPython 3.12 under jemalloc, killed by the
// kernel's OOM killer) and the Python fixtures (3.11, 3.12, 3.13). What is expected comes from outside heaplens:
// the script's frames and lines from the workload's own source (oom_job.py: `main()` at the bottom, StepLog.add
// appending the history), the chain from main() to the first Python frame from CPython's Modules/main.c and
// Python/pythonrun.c, and the bytes of the leak stack from the workload's counters (expected.json).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job, ProcessSeries } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import { FrameCatalog } from '../frames/catalog.js';
import { startupKind, startupRun } from '../frames/startup.js';
import { buildCallTree } from '../stats/call-tree.js';
import { symbolizeJob } from '../symbolize/symbolize-job.js';
import { compileAddr2line } from '../symbolize/wasm-addr2line.js';
import { collectInputFiles, nodeInputFile } from '../../node/io/node-files.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { PY_FIXTURES, VERSIONS } from '../../fixtures/python/fixture-helpers.js';
import { compareByName, StartupFolder } from './flame-startup.js';

const OOM = join(import.meta.dirname, '..', '..', 'fixtures', 'oom-job');
const expected = JSON.parse(readFileSync(join(OOM, 'expected.json'), 'utf8')) as {
  trainer: { pid: number };
  leak: { function: string; file: string; historyBytes: number };
};
const script = readFileSync(join(OOM, 'workload', 'oom_job.py'), 'utf8').split('\n');
const lineOf = (re: RegExp): number => script.findIndex((l) => re.test(l)) + 1;

async function symbolized(job: Job): Promise<Job> {
  await symbolizeJob(job, {
    source: new NodeSymbolFileSource(),
    wasm: await compileAddr2line(await readAddr2lineWasm()),
    symbolDirs: [],
    sysroot: null,
    hostPaths: true,
    cacheStore: null,
  });
  return job;
}

let trainer: ProcessSeries;
/** the same dumps without symbols: as a laptop reads them with no copy of the job machine's libc */
let bare: ProcessSeries;
let python: Job;
beforeAll(async () => {
  // the trainer's dumps (its last, the exit dump after teardown, holds no history: the one before it does)
  const dir = join(OOM, 'dumps');
  const files = readdirSync(dir)
    .filter((n) => n.startsWith(`job.${expected.trainer.pid}.`))
    .sort()
    .map((n) => nodeInputFile(join(dir, n), `oom-job/dumps/${n}`, statSync(join(dir, n)).size, 0));
  trainer = (await symbolized(await loadJob(files))).processes[0];
  bare = (await loadJob(files)).processes[0];
  python = await symbolized(await loadJob(await collectInputFiles(VERSIONS.map((v) => join(PY_FIXTURES, v)))));
}, 180_000);

const VIEWS: ViewOptions[] = [
  { mode: 'python-first', hideAllocator: true },
  { mode: 'merged', hideAllocator: true },
  { mode: 'native', hideAllocator: true },
];

/** The leak's stack in the trainer's fullest dump: the one through StepLog.add holding the most bytes. */
function leak(cat: FrameCatalog, view: ViewOptions): { id: number; bytes: number; keys: Int32Array } {
  const s = trainer.snapshots.reduce((a, b) =>
    b.liveBytes.reduce((x, y) => x + y, 0) > a.liveBytes.reduce((x, y) => x + y, 0) ? b : a,
  );
  let best: { id: number; bytes: number; keys: Int32Array } = { id: -1, bytes: -1, keys: new Int32Array(0) };
  s.stackIds.forEach((id, j) => {
    const keys = cat.stackKeys(id, { mode: 'merged', hideAllocator: true });
    if (!Array.from(keys).some((k) => cat.frames[k].function === expected.leak.function)) return;
    if (s.liveBytes[j] > best.bytes) best = { id, bytes: s.liveBytes[j], keys: cat.stackKeys(id, view) };
  });
  return best;
}

describe('start-up frames on the oom-job trainer (CPython 3.12)', () => {
  it('python-first: the fold ends right above `<module>` at the line that calls main(), whatever the view', () => {
    const cat = new FrameCatalog(trainer);
    const callMain = lineOf(/^\s+main\(\)/);
    expect(callMain).toBeGreaterThan(100);
    for (const view of VIEWS.slice(0, 2)) {
      const { keys, bytes } = leak(cat, view);
      // the workload's history: 432 steps of 256 KiB when the trainer wrote its fullest dump (sampled)
      expect(bytes / expected.leak.historyBytes).toBeGreaterThan(0.8);
      const frames = Array.from(keys, (k) => cat.frames[k]).reverse(); // root first
      const run = startupRun(keys, cat.startupKindOf);
      expect(run?.kind, view.mode).toBe('process');
      const first = frames[run!.frames];
      expect([first.function, first.file?.endsWith('oom_job.py'), first.line], view.mode).toEqual([
        '<module>',
        true,
        callMain,
      ]);
      // every frame folded is the C runtime's or CPython's way from _start to the first Python frame
      for (const f of frames.slice(0, run!.frames))
        expect(
          f.kind === 'folded' ||
            /^(_start|__libc_start_main_impl|__libc_start_call_main|Py_BytesMain|pymain_\w+|Py_RunMain|_PyRun_\w+|pyrun_file|run_mod|run_eval_code_obj|PyEval_EvalCode|_PyEval_Vector|_PyEval_EvalFrame)$/.test(
              f.function ?? '',
            ),
          `${view.mode}: ${f.label}`,
        ).toBe(true);
      if (view.mode === 'merged') expect(frames[0].function).toBe('_start');
    }
  });

  it('unsymbolized (libc.so.6+0x…): the same fold, on the C runtime’s unnamed frames', () => {
    const cat = new FrameCatalog(bare);
    const ids = bare.snapshots[bare.snapshots.length - 2].stackIds;
    let checked = 0;
    for (const id of ids) {
      const keys = cat.stackKeys(id, VIEWS[0]);
      const frames = Array.from(keys, (k) => cat.frames[k]).reverse();
      const at = frames.findIndex((f) => f.function === '<module>' && f.file?.endsWith('oom_job.py'));
      if (at < 0) continue;
      // what the symbolized trainer names __libc_start_main_impl and __libc_start_call_main
      expect(frames.slice(0, at).map((f) => (f.kind === 'folded' ? f.label : f.module))).toEqual([
        'interpreter frames',
        'libc.so.6',
        'libc.so.6',
        'interpreter frames',
      ]);
      expect(startupRun(keys, cat.startupKindOf)).toEqual({ frames: at, kind: 'process' });
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
  });

  it('native view: the fold stops at the eval loop calling into the program (no Python frame to stop at)', () => {
    const cat = new FrameCatalog(trainer);
    const { keys } = leak(cat, VIEWS[2]);
    const frames = Array.from(keys, (k) => cat.frames[k]).reverse();
    const run = startupRun(keys, cat.startupKindOf)!;
    expect(frames[0].function).toBe('_start');
    expect(frames.slice(0, run.frames).map((f) => f.function)).toContain('PyEval_EvalCode');
    // what follows the fold is not start-up: the run is maximal, and it kept at least the leaf
    expect(run.frames).toBeLessThan(frames.length);
    expect(startupKind(frames[run.frames])).toBeNull();
  });

  it('the tree: one row for root and start-up, then <module> → main → StepLog.add; no byte lost or moved', () => {
    const cat = new FrameCatalog(trainer);
    const view = VIEWS[0];
    const s = trainer.snapshots[trainer.snapshots.length - 2];
    const values = { stackIds: s.stackIds, bytes: s.liveBytes };
    const plain = buildCallTree(trainer.stacks, values, { stackKeys: (id) => cat.stackKeys(id, view) });
    const folder = new StartupFolder(cat);
    const shaped = new Map<number, Int32Array>();
    s.stackIds.forEach((id, j) => shaped.set(id, folder.fold(cat.stackKeys(id, view), s.liveBytes[j])));
    const built = buildCallTree(trainer.stacks, values, { stackKeys: (id) => shaped.get(id)! });
    const { tree, folds } = folder.finish(built);
    expect(tree.total[0]).toBe(plain.total[0]);
    // every stack ends on the node of the same frame, or on the root when it was nothing but start-up
    s.stackIds.forEach((_, j) => {
      const a = plain.key[plain.stackNode[j]];
      const b = tree.key[tree.stackNode[j]];
      if (b !== -1) expect(b).toBe(a);
      else expect(cat.startupKindOf(a)).not.toBeNull();
    });
    const add = Array.from({ length: tree.size }, (_, n) => n).filter(
      (n) => n > 0 && cat.frames[tree.key[n]].function === expected.leak.function,
    );
    const heaviest = add.reduce((a, b) => (tree.total[b] > tree.total[a] ? b : a));
    // the program's frames start on the second row (the root's row holds the fold): StepLog.add is the 4th row
    expect(tree.depth[heaviest]).toBe(3);
    const before = Array.from({ length: plain.size }, (_, n) => n)
      .filter((n) => n > 0 && cat.frames[plain.key[n]].function === expected.leak.function)
      .map((n) => plain.depth[n]);
    expect(Math.min(...before)).toBe(7); // root, 4 start-up rows (2 of them interpreter markers), <module>, main
    const fold = folds.find((f) => f.inRoot);
    expect(fold?.kind).toBe('process');
    expect(fold?.frames).toEqual([
      'interpreter frames',
      '__libc_start_main_impl',
      '__libc_start_call_main',
      'interpreter frames',
    ]);
  });

  it('left-heavy or by name: the same nodes and bytes, siblings in another order', () => {
    const cat = new FrameCatalog(trainer);
    const s = trainer.snapshots[trainer.snapshots.length - 2];
    const values = { stackIds: s.stackIds, bytes: s.liveBytes };
    const stackKeys = (id: number) => cat.stackKeys(id, VIEWS[0]);
    const heavy = buildCallTree(trainer.stacks, values, { stackKeys });
    const named = buildCallTree(trainer.stacks, values, {
      stackKeys,
      order: 'key',
      compareKeys: compareByName(cat.frames),
    });
    expect(named.size).toBe(heavy.size);
    const children = (t: typeof heavy, p: number): number[] => {
      const out: number[] = [];
      for (let c = p + 1; c < t.end[p]; c = t.end[c]) out.push(c);
      return out;
    };
    let reordered = 0;
    for (let n = 0; n < named.size; n++) {
      const kids = children(named, n);
      const labels = kids.map((c) => cat.frames[named.key[c]].label);
      expect(labels).toEqual([...labels].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      const hk = children(heavy, n).map((c) => heavy.total[c]);
      for (let i = 1; i < hk.length; i++) expect(hk[i]).toBeLessThanOrEqual(hk[i - 1]);
      if (kids.length > 1) reordered++;
    }
    expect(reordered).toBeGreaterThan(0);
  });
});

describe('start-up frames on the Python fixtures', () => {
  it('every stack that starts at _start folds to a marker followed by a program frame (3.11, 3.12, 3.13)', () => {
    let seen = 0;
    for (const p of python.processes) {
      const cat = new FrameCatalog(p);
      for (const view of VIEWS.slice(0, 2)) {
        for (let id = 0; id < p.stacks.count; id++) {
          const merged = Array.from(cat.stackKeys(id, { mode: 'merged', hideAllocator: true }), (k) => cat.frames[k]);
          if (merged[merged.length - 1]?.function !== '_start') continue;
          const keys = cat.stackKeys(id, view);
          const run = startupRun(keys, cat.startupKindOf);
          expect(run?.kind, `${p.key} ${view.mode} #${id}`).toBe('process');
          seen++;
          const next = keys.length - run!.frames - 1;
          if (next < 0) continue; // a stack of nothing but start-up (the interpreter's own set-up)
          const f = cat.frames[keys[next]];
          // the program's first frame: a Python frame of the workload, the import machinery, or the
          // interpreter's own set-up work (parsing, compiling) in the merged view
          expect(startupKind(f), `${p.key} ${view.mode}: ${f.label}`).toBeNull();
        }
      }
    }
    expect(seen).toBeGreaterThan(50);
  });

  it('the dynamic loader’s initialisers are start-up; a cut stack of interpreter frames alone is not', () => {
    const ld = {
      kind: 'native',
      function: null,
      file: null,
      module: 'ld-linux-x86-64.so.2',
      label: 'ld-linux-x86-64.so.2+0x1aba0',
    };
    const callInit = { kind: 'native', function: 'call_init', file: null, module: 'ld-linux-x86-64.so.2' };
    const marker = { kind: 'folded', function: null, file: null, module: null, label: 'interpreter frames' };
    const record = { kind: 'python', function: 'make_record', file: '/w/workload.py', module: null };
    expect(startupRun([record, callInit, ld], startupKind)).toEqual({ frames: 2, kind: 'process' });
    expect(startupRun([record, marker], startupKind)).toBeNull();
    const thread = [
      record,
      { kind: 'python', function: 'Thread.run', file: '/usr/lib/python3.12/threading.py', module: null },
      { kind: 'python', function: 'Thread._bootstrap_inner', file: '/usr/lib/python3.12/threading.py', module: null },
      marker,
      { kind: 'native', function: 'start_thread', file: null, module: 'libc.so.6' },
      { kind: 'native', function: 'clone3', file: null, module: 'libc.so.6' },
    ];
    expect(startupRun(thread, startupKind)).toEqual({ frames: 5, kind: 'thread' });
  });
});
