// The capture library on every CPython it reads (3.9–3.13, each build found on this machine) and on the
// ones it must refuse. Live runs of the fixture workload (fixtures/python/workload: a steady leak reached
// from two loops, allocate-and-free, a thread that released the GIL, 400-deep recursion, non-ASCII names, a
// fork), a multiprocessing `spawn` child, and a C extension's allocation under its Python caller, read
// back with our readers. Expected lines come from the programs' `# @tag` comments, expected names from
// their source (co_qualname from 3.11, co_name before: recordedName), sizes from the programs' arithmetic,
// the eval loop's addresses from nm/readelf of the interpreter the run mapped.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { viewStack, type PythonFrameView, type StackView } from '../../core/frames/python-stacks.js';
import { parsePyFrames, type PyFrameTable } from '../../core/formats/pyframes.js';
import { findMapping, parseMaps } from '../../core/formats/proc-maps.js';
import {
  childDump,
  parentLastDump,
  readDumpFile,
  unbiasedBytes,
  workloadLines,
  PY_FIXTURES,
  type FixtureDump,
  type FixtureRecord,
} from '../../fixtures/python/fixture-helpers.js';
import { SUPPORTED_MINORS, findPythons } from '../../tools/find-pythons.js';
import { JEMALLOC, LIBRARY, PYTHON_SEARCH, buildLibrary, captureReady, haveGcc, recordedName } from './test-support.js';

type Dump = Omit<FixtureDump, 'version'>;

const ready = captureReady;
if (!ready)
  console.warn(`capture-versions.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.9–3.13)`);
if (PYTHON_SEARCH.missing.length)
  console.warn(
    `capture-versions.test: no CPython ${PYTHON_SEARCH.missing.join(', ')} here: those versions are not tested`,
  );

const work = mkdtempSync(join(tmpdir(), 'heaplens-capture-versions-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `args` under `python` with jemalloc (1 sample per 16 KiB, accumulated columns) and the library. */
function runCaptured(python: string, dir: string, args: string[], env: Record<string, string> = {}) {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync(python, args, {
    cwd: dir,
    env: {
      ...process.env,
      PYTHONMALLOC: 'malloc',
      PYTHONDONTWRITEBYTECODE: '1',
      LD_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
      MALLOC_CONF: `prof:true,prof_accum:true,lg_prof_sample:14,prof_prefix:${dir}/jeprof`,
      ...env,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

const dumpsIn = (dir: string): Dump[] =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.heap'))
    .sort()
    .map((n) => readDumpFile(join(dir, n)));

function tableOf(d: Dump): PyFrameTable {
  const t = d.sidecar !== null ? parsePyFrames(d.sidecar, 'sidecar') : null;
  if (!t) throw new Error(`${d.name}: no table`);
  return t;
}

const pyOnly = (v: StackView): PythonFrameView[] => v.frames.filter((f): f is PythonFrameView => f.kind === 'python');
const sig = (fs: PythonFrameView[]): string[] => fs.map((f) => `${f.function}:${f.line}`);

/** The records whose Python view starts (leaf first) with the given function:line list. */
function findPath(d: Dump, t: PyFrameTable, path: string[]): { rec: FixtureRecord; view: StackView }[] {
  const out: { rec: FixtureRecord; view: StackView }[] = [];
  for (const rec of d.records) {
    const view = viewStack(rec.frames, t, 'python');
    const s = sig(pyOnly(view));
    if (path.every((p, i) => s[i] === p)) out.push({ rec, view });
  }
  return out;
}

const liveOf = (d: Dump, hits: { rec: FixtureRecord }[]) =>
  hits.reduce((s, h) => s + unbiasedBytes(h.rec.liveObjects, h.rec.liveBytes, d.period), 0);

/**
 * An estimate from samples within 20 % of the program's arithmetic (at 1 sample per 16 KiB the objects
 * here are sampled 1 in 1-4 or more often: a few % of spread). Sizes are jemalloc's size classes of what
 * the program asks for: bytearray(n) allocates n + 1 bytes (its NUL), and jemalloc rounds 4,097-5,120 up
 * to 5,120, ... 7,169-8,192 to 8,192, 8,193-10,240 to 10,240, 16,385-20,480 to 20,480, 65,537-81,920 to
 * 81,920.
 */
function expectNear(estimate: number, expected: number): void {
  expect(estimate).toBeGreaterThan(0.8 * expected);
  expect(estimate).toBeLessThan(1.2 * expected);
}

/** `# @tag` lines of a program's source */
function tagLines(src: string): (tag: string) => number {
  const lines = src.split('\n');
  return (tag) => {
    const i = lines.findIndex((l) => l.includes(`# @${tag}`));
    if (i < 0) throw new Error(`no tag ${tag}`);
    return i + 1;
  };
}

/** The version string the interpreter gives itself (platform.python_version()). */
const versionOf = (python: string) =>
  execFileSync(python, ['-c', 'import platform; print(platform.python_version())'], { encoding: 'utf8' }).trim();

/**
 * `_PyEval_EvalFrameDefault` (and its .cold part) of an ELF file as file-offset ranges: symbols from nm (the
 * static table, else the dynamic one), turned into file offsets through the PT_LOAD headers readelf prints.
 */
function evalOffsets(path: string): { start: bigint; end: bigint }[] {
  const syms = (dyn: boolean) =>
    execFileSync('nm', ['-S', '--defined-only', ...(dyn ? ['-D'] : []), path], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length === 4 && /^_PyEval_EvalFrameDefault(\.cold)?$/.test(f[3]))
      .map((f) => ({ addr: BigInt('0x' + f[0]), size: BigInt('0x' + f[1]) }));
  let found = syms(false);
  if (found.length === 0) found = syms(true);
  const loads = execFileSync('readelf', ['-lW', path], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[0] === 'LOAD')
    .map((f) => ({ offset: BigInt(f[1]), vaddr: BigInt(f[2]), filesz: BigInt(f[4]) }));
  return found.map(({ addr, size }) => {
    const seg = loads.find((s) => addr >= s.vaddr && addr < s.vaddr + s.filesz);
    if (!seg) throw new Error(`${path}: 0x${addr.toString(16)} in no PT_LOAD`);
    const start = addr - seg.vaddr + seg.offset;
    return { start, end: start + size };
  });
}

const tag = (() => {
  const tags = workloadLines();
  return (t: string): number => {
    const x = tags.get(t);
    if (!x) throw new Error(`no tag ${t}`);
    return x.line;
  };
})();

describe.skipIf(!ready)('the capture library on every CPython it reads', () => {
  it('builds', () => buildLibrary(), 120_000);

  for (const { minor, path: python } of PYTHON_SEARCH.found) {
    const N = (qualname: string) => recordedName(qualname, minor);

    describe(`${python} (${minor}): the fixture workload`, () => {
      const dir = join(work, `workload-${python.replace(/\W+/g, '_')}`);
      let parent: Dump;
      let table: PyFrameTable;
      it('runs and dumps (parent twice, the forked child once)', () => {
        buildLibrary();
        runCaptured(python, dir, ['-W', 'ignore', join(PY_FIXTURES, 'workload', 'workload.py')]);
        const dumps = dumpsIn(dir);
        parent = parentLastDump(dumps);
        table = tableOf(parent);
        expect(table.python).toBe(versionOf(python));
        expect(dumps.length).toBe(3);
      }, 120_000);

      it('the steady leak: make_record ← leaky_handler ← step, from both loops of main, with its bytes', () => {
        const hits = findPath(parent, table, [
          `make_record:${tag('leak-alloc')}`,
          `leaky_handler:${tag('leak-call')}`,
          `${N('Pipeline.step')}:${tag('pipeline-leak')}`,
        ]);
        expect(hits.length).toBeGreaterThan(0);
        const callers = new Set(hits.map((h) => sig(pyOnly(h.view))[3]));
        expect(callers).toContain(`main:${tag('main-step')}`);
        expect(callers).toContain(`main:${tag('main-step-2')}`);
        // 3,000 bytearrays of 4,096 + (i % 8) * 512 bytes: 4,097..7,681 allocated, size classes 5,120 (twice),
        // 6,144 (twice), 7,168 (twice), 8,192 (twice): 3,000 × 6,656 = 19.97 MB
        expectNear(liveOf(parent, hits), 3000 * 6656);
      });

      it('allocate-and-free: only in the accumulated columns', () => {
        const hits = findPath(parent, table, [
          `transient_handler:${tag('transient-alloc')}`,
          `${N('Pipeline.step')}:${tag('pipeline-transient')}`,
        ]);
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.reduce((s, h) => s + h.rec.liveBytes, 0)).toBe(0);
        // 3,000 bytearrays of 65,536 bytes allocated (65,537: the 81,920 size class): 245.8 MB
        const accum = hits.reduce((s, h) => s + unbiasedBytes(h.rec.accumObjects, h.rec.accumBytes, parent.period), 0);
        expectNear(accum, 3000 * 81920);
      });

      it('non-ASCII names and a lambda', () => {
        const hits = findPath(parent, table, [
          `${N('分配_é.<locals>.<lambda>')}:${tag('unicode-lambda')}`,
          `分配_é:${tag('unicode-alloc')}`,
          `main:${tag('unicode-call')}`,
        ]);
        expect(hits.length).toBeGreaterThan(0);
        expect(pyOnly(hits[0].view)[1].file?.endsWith('dir with space 100% ünï/模块_mod.py')).toBe(true);
        // 800 bytearrays of 8,192..8,991 bytes (the 10,240 size class): 8.19 MB
        expectNear(liveOf(parent, hits), 800 * 10240);
      });

      it('400-deep recursion: the 4 MB object under its innermost frames, marked truncated', () => {
        const hits = findPath(parent, table, [`recurse:${tag('deep-alloc')}`, `recurse:${tag('deep-call')}`]);
        // the 4 MB object, and on 3.9/3.10 sometimes a sampled frame object of the recursion itself (frames are
        // malloc'd there past the free list) under the same lines: the object is the largest
        expect(hits.length).toBeGreaterThanOrEqual(1);
        const { view, rec } = hits.reduce((a, b) => (b.rec.liveBytes > a.rec.liveBytes ? b : a));
        expect(view.truncated).toBe(true);
        const fs = pyOnly(view);
        expect(fs.every((f) => f.function === 'recurse')).toBe(true);
        expect(rec.liveBytes).toBeGreaterThanOrEqual(4_000_000);
        // 3.11+ keep 96 (HEAPLENS_CAPTURE_MAX_PY_FRAMES); before 3.11 every Python call is a C call of
        // its own, so jemalloc's 128 native slots hold fewer Python frames
        if (Number(minor.split('.')[1]) >= 11) expect(fs.length).toBe(96);
        else {
          console.log(`capture-versions: ${minor} keeps ${fs.length} frames of the 400-deep recursion`);
          expect(fs.length).toBeGreaterThanOrEqual(20);
        }
      });

      it('a thread that released the GIL (os.listdir) gets its Python frames', () => {
        const scanner = parent.records.filter(
          (r) => sig(pyOnly(viewStack(r.frames, table, 'python')))[0] === `scanner:${tag('scanner-listdir')}`,
        );
        expect(scanner.length).toBeGreaterThan(0);
        for (const r of scanner) {
          const fs = pyOnly(viewStack(r.frames, table, 'python'));
          expect(fs[1].function).toBe(N('Thread.run'));
          expect(fs[fs.length - 1].function).toBe(N('Thread._bootstrap'));
          expect(r.threads).not.toContain(0);
        }
        expect(scanner.reduce((s, r) => s + r.accumObjects, 0)).toBeGreaterThan(0);
      });

      it("the forked child's own leak, under its caller", () => {
        const child = childDump(dumpsIn(dir));
        expect(child).toBeDefined();
        const hits = findPath(child!, tableOf(child!), [
          `child_work:${tag('child-alloc')}`,
          `main:${tag('child-call')}`,
        ]);
        expect(hits.length).toBeGreaterThan(0);
        // 200 bytearrays of 16 KiB (the 20,480 size class): 4.10 MB
        expectNear(liveOf(child!, hits), 200 * 20480);
      });

      it('merged: every stack placed, the native frame after each Python frame is the eval loop', () => {
        const maps = parseMaps(parent.mapsText).entries;
        const offsets = new Map<string, { start: bigint; end: bigint }[]>();
        let groups = 0;
        for (const rec of parent.records) {
          const merged = viewStack(rec.frames, table, 'merged');
          const native = viewStack(rec.frames, table, 'native');
          const py = viewStack(rec.frames, table, 'python');
          expect(merged.unmerged).toBe(false);
          expect(py.frames.every((f) => f.kind === 'python' && f.resolved)).toBe(true);
          const hidden = native.frames.filter(
            (n) => !merged.frames.some((m) => m.kind === 'native' && m.index === n.index),
          );
          for (const h of hidden) {
            const pc = BigInt(h.addr) - 1n;
            const m = findMapping(maps, pc);
            expect(m, h.addr).toBeDefined();
            if (!offsets.has(m!.path)) offsets.set(m!.path, evalOffsets(m!.path));
            const off = pc - m!.start + m!.offset;
            expect(
              offsets.get(m!.path)!.some((r) => off >= r.start && off < r.end),
              `${h.addr} at ${m!.path}+0x${off.toString(16)}`,
            ).toBe(true);
            groups++;
          }
          expect(merged.frames.length).toBe(native.frames.length - hidden.length + py.frames.length);
        }
        expect(groups).toBeGreaterThan(10);
      });
    });

    it(`${python} (${minor}): threads switching under the GIL, a generator and a coroutine each get their own frames`, () => {
      const dir = join(work, `shapes-${python.replace(/\W+/g, '_')}`);
      mkdirSync(dir, { recursive: true });
      const src = `import asyncio, ctypes, sys, threading

sys.setswitchinterval(1e-5)  # the two threads take turns every few bytecodes
kept_a, kept_b, kept_gen, kept_co = [], [], [], []


def leak_a():
    for _ in range(1000):
        kept_a.append(bytearray(20000))  # @thread-a


def leak_b():
    for _ in range(1000):
        kept_b.append(bytearray(30000))  # @thread-b


def rows():
    for _ in range(500):
        yield bytearray(12000)  # @gen-yield


async def fill():
    for _ in range(500):
        kept_co.append(bytearray(40000))  # @co-alloc
        await asyncio.sleep(0)


a = threading.Thread(target=leak_a)
b = threading.Thread(target=leak_b)
a.start(); b.start(); a.join(); b.join()
for r in rows():  # @gen-loop
    kept_gen.append(r)
asyncio.run(fill())  # @co-run
ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)
`;
      writeFileSync(join(dir, 'shapes.py'), src);
      runCaptured(python, dir, ['shapes.py']);
      const [d] = dumpsIn(dir);
      const t = tableOf(d);
      const line = tagLines(src);
      const a = findPath(d, t, [`leak_a:${line('thread-a')}`]);
      const b = findPath(d, t, [`leak_b:${line('thread-b')}`]);
      expect(a.length).toBeGreaterThan(0);
      expect(b.length).toBeGreaterThan(0);
      for (const h of [...a, ...b]) expect(pyOnly(h.view)[1].function).toBe(N('Thread.run'));
      // each sample carries its own thread's Python stack: the two threads' different sizes land each under its
      // own line (frames read from the other thread's state would mix them: ~26.6 MB under each)
      for (const rec of d.records) {
        const fns = pyOnly(viewStack(rec.frames, t, 'python')).map((f) => f.function);
        expect(fns.includes('leak_a') && fns.includes('leak_b'), fns.join(' ')).toBe(false);
      }
      // sizes: bytearray(n) is n + 1 bytes, in jemalloc's 20,480 / 32,768 / 12,288 / 40,960 size classes
      expectNear(liveOf(d, a), 1000 * 20480);
      expectNear(liveOf(d, b), 1000 * 32768);
      const gen = findPath(d, t, [`rows:${line('gen-yield')}`, `<module>:${line('gen-loop')}`]);
      expectNear(liveOf(d, gen), 500 * 12288);
      const co = findPath(d, t, [`fill:${line('co-alloc')}`]);
      expect(co.length).toBeGreaterThan(0);
      // the coroutine runs under the event loop, called from the program's asyncio.run line
      expect(sig(pyOnly(co[0].view))).toContain(`<module>:${line('co-run')}`);
      expectNear(liveOf(d, co), 500 * 40960);
    }, 120_000);

    it(`${python} (${minor}): a multiprocessing spawn child names its own leaking line`, () => {
      const dir = join(work, `spawn-${python.replace(/\W+/g, '_')}`);
      mkdirSync(dir, { recursive: true });
      const src = `import ctypes, multiprocessing as mp

held = []


def spawned_leak():
    for _ in range(300):
        held.append(bytearray(16384))  # @spawn-alloc
    ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)


if __name__ == "__main__":
    p = mp.get_context("spawn").Process(target=spawned_leak)
    p.start()
    p.join()
    print(p.pid)
`;
      writeFileSync(join(dir, 'spawner.py'), src);
      const r = runCaptured(python, dir, ['spawner.py']);
      const childPid = Number(r.stdout.trim());
      const dumps = dumpsIn(dir).filter((d) => d.pid === childPid);
      expect(dumps.length, readdirSync(dir).join(' ')).toBe(1);
      const hits = findPath(dumps[0], tableOf(dumps[0]), [`spawned_leak:${tagLines(src)('spawn-alloc')}`]);
      expect(hits.length).toBeGreaterThan(0);
      // called by Process.run, in the fresh interpreter multiprocessing's own entry point started
      const callers = pyOnly(hits[0].view).map((f) => f.function);
      expect(callers[1]).toBe(N('BaseProcess.run'));
      expect(callers).toContain('spawn_main');
      // 300 bytearrays of 16 KiB (the 20,480 size class): 6.14 MB
      expectNear(liveOf(dumps[0], hits), 300 * 20480);
    }, 120_000);

    it(`${python} (${minor}): a C extension's allocation sits under its Python caller`, () => {
      const dir = join(work, `ext-${python.replace(/\W+/g, '_')}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'hlext.c'),
        `#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>
static void *held[4096];
static int n_held;
static PyObject *hold(PyObject *self, PyObject *args) {
    int n; Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "in", &n, &size)) return NULL;
    for (int i = 0; i < n && n_held < 4096; i++) { void *p = malloc((size_t)size); memset(p, 1, (size_t)size); held[n_held++] = p; }
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {{"hold", hold, METH_VARARGS, "keeps n malloc'd blocks"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "hlext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_hlext(void) { return PyModule_Create(&mod); }
`,
      );
      const include = execFileSync(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["include"])'], {
        encoding: 'utf8',
      }).trim();
      execFileSync('gcc', [
        '-O1',
        '-g',
        '-fPIC',
        '-shared',
        `-I${include}`,
        '-o',
        join(dir, 'hlext.so'),
        join(dir, 'hlext.c'),
      ]);
      const src = `import ctypes
import hlext


def load_shards():
    hlext.hold(200, 65536)  # @ext-call


load_shards()  # @ext-root
ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)
`;
      writeFileSync(join(dir, 'ext.py'), src);
      runCaptured(python, dir, ['ext.py']);
      const [d] = dumpsIn(dir);
      const t = tableOf(d);
      const line = tagLines(src);
      const hits = findPath(d, t, [`load_shards:${line('ext-call')}`, `<module>:${line('ext-root')}`]);
      expect(hits.length).toBeGreaterThan(0);
      // the extension's frame is leafward of its Python caller in the merged stack (the kernel's maps place it)
      const maps = parseMaps(d.mapsText).entries;
      for (const { rec } of hits) {
        const merged = viewStack(rec.frames, t, 'merged').frames;
        const firstPy = merged.findIndex((f) => f.kind === 'python');
        const inExt = merged
          .slice(0, firstPy)
          .some((f) => f.kind === 'native' && findMapping(maps, BigInt(f.addr) - 1n)?.path === join(dir, 'hlext.so'));
        expect(inExt, merged.map((f) => f.addr).join(' ')).toBe(true);
      }
      // 200 blocks of 64 KiB kept: 13.1 MB
      expectNear(liveOf(d, hits), 200 * 65536);
    }, 120_000);
  }
});

// Interpreters the library has no layout for: one line naming them and the versions it reads, no Python
// frames (a context-only table), never a guess at offsets.
const OLDER = findPythons(['2.7', '3.6', '3.7', '3.8']).found;
const SUPPORTED_LIST = SUPPORTED_MINORS.join(', ');
const refusal = (version: string) =>
  `heaplens-capture: Python ${version} is not supported (Python frames on CPython ${SUPPORTED_LIST}); native stacks only`;

describe.skipIf(!existsSync(JEMALLOC) || !haveGcc)('interpreters the library does not read', () => {
  it('py_offsets.h describes exactly the supported versions', () => {
    const h = readFileSync(join(import.meta.dirname, 'py_offsets.h'), 'utf8');
    expect([...h.matchAll(/\.minor = (\d+),/g)].map((m) => `3.${m[1]}`)).toEqual([...SUPPORTED_MINORS]);
  });

  if (!OLDER.some((f) => f.minor === '3.8'))
    console.warn('capture-versions.test: no CPython 3.8 here: its refusal is not tested');
  for (const { minor, path: python } of OLDER) {
    it(`${python} (${minor}): one line naming it and the supported versions; a context-only table`, () => {
      buildLibrary();
      const dir = join(work, `old-${python.replace(/\W+/g, '_')}`);
      const r = runCaptured(python, dir, [
        '-c',
        'import ctypes; ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)',
      ]);
      const ours = r.stderr.split('\n').filter((l) => l.startsWith('heaplens-capture:'));
      expect(ours).toEqual([refusal(versionOf(python))]);
      const [d] = dumpsIn(dir);
      expect(d.sidecar).toMatch(/^PYFRAMES\/1 .* python=- /);
      expect(d.sidecar).toMatch(/^END 0$/m);
      expect(d.sidecar).not.toMatch(/^F /m);
    }, 60_000);
  }

  // No 3.14 build here: a stand-in program exporting Py_Version as 3.14.0 final does what a 3.14
  // interpreter does at load time (the library reads nothing else before refusing).
  it('a Py_Version of 3.14.0 (a stand-in executable): refused by name', () => {
    buildLibrary();
    const dir = join(work, 'py314');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'fake314.c'),
      `#include <stdlib.h>
#include <string.h>
const unsigned long Py_Version = 0x030E00F0UL; /* PY_VERSION_HEX of 3.14.0 final */
int main(void) { char *p = malloc(1 << 20); memset(p, 1, 1 << 20); free(p); return 0; }
`,
    );
    execFileSync('gcc', ['-rdynamic', '-o', join(dir, 'fake314'), join(dir, 'fake314.c')]);
    const r = spawnSync(join(dir, 'fake314'), [], {
      env: { ...process.env, LD_PRELOAD: `${JEMALLOC} ${LIBRARY}`, MALLOC_CONF: 'prof:true' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('heaplens-capture:'))).toEqual([refusal('3.14.0')]);
  });
});
