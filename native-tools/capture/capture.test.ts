// The producer, live: build libheaplens_capture.so with gcc, run a small Python program under
// jemalloc + the library for each installed CPython 3.9–3.13, and read the dumps back. The
// expected functions and lines come from the program's own source text.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { postmortemQuery } from '../../core/query/postmortem.js';
import { loadJob } from '../../core/load/load-job.js';
import { run } from '../../node/cli/main.js';
import { processLimit } from '../../core/model/memory-context.js';
import {
  JEMALLOC,
  PYTHONS,
  PYTHON_SEARCH,
  buildLibrary,
  captureReady,
  ownMemoryCgroup,
  recordedName,
  root,
} from './test-support.js';

if (PYTHON_SEARCH.missing.length)
  console.warn(
    `capture.test: no CPython ${PYTHON_SEARCH.missing.join(', ')} here (pyenv, PATH or HEAPLENS_TEST_PYTHONS): those versions are not tested`,
  );
const ready = captureReady;
if (!ready) console.warn(`capture.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.9–3.13)`);

const PROGRAM = `import ctypes, threading

class Buffer:
    def __init__(self):
        self.rows = []

    def append_rows(self, n):
        for _ in range(n):
            self.rows.append(bytearray(4096))  # @leak

def keep_growing(buf):
    for _ in range(40):
        buf.append_rows(50)  # @caller

buf = Buffer()
t = threading.Thread(target=keep_growing, args=(buf,), name="grower")
t.start()
t.join()
ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)
import time; time.sleep(0.5)  # the program goes on: the context thread reads jemalloc's stats meanwhile
`;
/** The environment of a Python run under jemalloc's profiling and the capture library (every allocation through malloc). */
const capturedEnv = (mallocConf: string) => ({
  ...process.env,
  PYTHONMALLOC: 'malloc',
  LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
  MALLOC_CONF: mallocConf,
});
const lineOf = (tag: string) => PROGRAM.split('\n').findIndex((l) => l.includes(`# @${tag}`)) + 1;
const work = mkdtempSync(join(tmpdir(), 'heaplens-capture-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!ready)('libheaplens_capture, built and preloaded into real Python runs', () => {
  it('builds with gcc alone', () => {
    buildLibrary(true);
    expect(existsSync(join(root, 'native-tools/capture/build/libheaplens_capture.so'))).toBe(true);
  }, 120_000);

  it('a process without Python (a subprocess inheriting LD_PRELOAD) gets a context-only table; its parent is named', async () => {
    const dir = join(work, 'nopython');
    execFileSync('mkdir', ['-p', dir]);
    // sh runs ls under the preload; prof_final makes each write a final dump at exit
    const r = spawnSync('/bin/sh', ['-c', 'ls / > /dev/null; exit 0'], {
      cwd: dir,
      env: {
        ...process.env,
        LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
        MALLOC_CONF: `prof:true,prof_final:true,prof_prefix:${dir}/jeprof`,
      },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const job = await loadJob(await collectInputFiles([dir]));
    const ls = job.processes.find((p) => p.snapshots[0]?.context?.comm === 'ls');
    expect(ls, job.processes.map((p) => p.snapshots[0]?.context?.comm).join(' ')).toBeDefined();
    const c = ls!.snapshots[0].context!;
    expect(c.cmdline).toEqual(['ls', '/']);
    expect(ls!.pythonFrames ?? null).toBeNull(); // no Python frame table, only the context
    expect(c.jemalloc?.allocated).toBeGreaterThan(0);
    expect(c.rss).toBeGreaterThan(0);
    // sh forked ls (or exec'd it): either way its ppid is sh's pid or sh's parent
    expect(c.ppid).toBeGreaterThan(0);
  }, 120_000);

  // A memory cgroup of our own (a child of this process's cgroup, cgroup v1's memory controller as on
  // this VM, or v2 where it is delegated) with a limit: the context must report it and the usage the
  // program itself reads from the cgroup files at the dump.
  const cg = ownMemoryCgroup();
  it.skipIf(!cg)(
    `cgroup limit and usage in the context agree with the cgroup files (${cg ? cg.version : 'no writable memory cgroup: skipped'})`,
    async () => {
      const c = cg!;
      const dir = join(work, 'cgroup');
      execFileSync('mkdir', ['-p', dir]);
      const LIMIT = 3 * 1024 * 1024 * 1024;
      try {
        execFileSync('mkdir', ['-p', c.dir]);
        writeFileSync(join(c.dir, c.limitFile), String(LIMIT));
        const prog = `import ctypes, json, sys
def rd(n):
    return open(sys.argv[1] + "/" + n).read().split()[0]
keep = [bytearray(4096) for _ in range(5000)]
before = int(rd("${c.usageFile}"))
ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)
after = int(rd("${c.usageFile}"))
print(json.dumps({"limit": rd("${c.limitFile}"), "before": before, "after": after}))
`;
        writeFileSync(join(dir, 'cg.py'), prog);
        const r = spawnSync(
          '/bin/sh',
          ['-c', `echo $$ > ${c.dir}/cgroup.procs && exec "$0" cg.py "$1"`, PYTHONS[0], c.dir],
          {
            cwd: dir,
            env: {
              ...capturedEnv(`prof:true,prof_prefix:${dir}/jeprof`),
            },
            encoding: 'utf8',
          },
        );
        expect(r.status, r.stderr).toBe(0);
        const own = JSON.parse(r.stdout) as { limit: string; before: number; after: number };
        const job = await loadJob(await collectInputFiles([dir]));
        const ctx = job.processes[0].snapshots[0].context!;
        expect(ctx.cgroup?.version).toBe(c.version === 'v2' ? 2 : 1);
        expect(ctx.cgroup?.max).toBe(Number(own.limit));
        expect(processLimit(job.processes[0])).toBe(LIMIT);
        // the post-mortem takes that limit when none is given
        let pmOut = '';
        expect(
          await run(['postmortem', dir, '--json', '--no-symbols'], { out: (t) => (pmOut += t), err: () => {} }),
        ).toBe(0);
        expect((JSON.parse(pmOut) as { limit: { bytes: number; source: string } | null }).limit).toMatchObject({
          bytes: LIMIT,
          source: expect.stringMatching(/memory\.max recorded/),
        });
        // usage moves with the dump's own writes (page cache): within the program's readings ± 4 MiB
        expect(ctx.cgroup!.current!).toBeGreaterThanOrEqual(Math.min(own.before, own.after) - (4 << 20));
        expect(ctx.cgroup!.current!).toBeLessThanOrEqual(Math.max(own.before, own.after) + (4 << 20));
      } finally {
        spawnSync('rmdir', [c.dir]);
      }
    },
    120_000,
  );

  // Where the pages went, against the program's own readings: smaps_rollup read by the program around the
  // dump, the bytes it put on /dev/shm, and a fork whose child overwrites half of the inherited heap.
  it('smaps_rollup, /dev/shm and the fork record agree with what the program itself read and did', async () => {
    const dir = join(work, 'pages');
    execFileSync('mkdir', ['-p', dir]);
    const prog = `import ctypes, json, os, time
lib = ctypes.CDLL(None)
def rollup():
    out = {}
    for line in open("/proc/self/smaps_rollup"):
        p = line.split()
        if len(p) == 3 and p[2] == "kB": out[p[0].rstrip(":")] = int(p[1]) * 1024
    return out
shm = f"/dev/shm/heaplens-capture-test-{os.getpid()}"
with open(shm, "wb") as f: f.write(b"s" * (16 << 20))
keep = [b"x" * (1 << 20) for _ in range(32)]
before = rollup()
lib.mallctl(b"prof.dump", None, None, None, 0)
after = rollup()
t0 = time.time_ns()
pid = os.fork()
if pid == 0:
    for i in range(16): keep[i] = b"y" * (1 << 20)  # copy-on-write: these pages become the child's own
    lib.mallctl(b"prof.dump", None, None, None, 0)
    os._exit(0)
os.waitpid(pid, 0)
t1 = time.time_ns()
os.unlink(shm)
print(json.dumps({"parent": os.getpid(), "child": pid, "t0": t0, "t1": t1, "before": before, "after": after}))
`;
    writeFileSync(join(dir, 'pages.py'), prog);
    const r = spawnSync(PYTHONS[0], [join(dir, 'pages.py')], {
      cwd: dir,
      env: {
        ...process.env,
        LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
        MALLOC_CONF: `prof:true,prof_prefix:${dir}/pages`,
      },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    type Rollup = Record<string, number>;
    const own = JSON.parse(r.stdout) as {
      parent: number;
      child: number;
      t0: number;
      t1: number;
      before: Rollup;
      after: Rollup;
    };
    const job = await loadJob(await collectInputFiles([dir]));
    const byPid = new Map(job.processes.map((p) => [p.pid, p.snapshots[0].context!]));
    const parent = byPid.get(own.parent)!;
    const child = byPid.get(own.child)!;
    expect(parent.trigger).toBe('manual');
    expect(parent.fork).toBeNull();
    // each figure between the program's own readings before and after the dump (± 2 MiB for the dump's own buffers)
    const between = (v: number | null | undefined, key: string) => {
      const a = own.before[key];
      const b = own.after[key];
      expect(v, key).toBeGreaterThanOrEqual(Math.min(a, b) - (2 << 20));
      expect(v, key).toBeLessThanOrEqual(Math.max(a, b) + (2 << 20));
    };
    between(parent.pages?.rss, 'Rss');
    between(parent.pages?.pss, 'Pss');
    between(parent.pages?.privateDirty, 'Private_Dirty');
    between(parent.pages?.sharedClean, 'Shared_Clean');
    between(parent.pages?.anonymous, 'Anonymous');
    expect(parent.pages?.swap).toBe(own.after.Swap);
    // the 16 MiB the program wrote to /dev/shm are in use there (other processes may hold more)
    expect(parent.shm?.used).toBeGreaterThanOrEqual(16 << 20);
    expect(parent.jemallocPages?.pageSize).toBe(4096);
    // the child: forked by this parent between the program's two clock readings
    expect(child.fork?.parentPid).toBe(own.parent);
    expect(child.fork!.timeRealMs!).toBeGreaterThanOrEqual(own.t0 / 1e6);
    expect(child.fork!.timeRealMs!).toBeLessThanOrEqual(own.t1 / 1e6);
    // it still shares the parent's untouched pages (16 of the 32 MiB, and the interpreter) and owns what it wrote
    expect(child.pages!.sharedDirty! + child.pages!.sharedClean!).toBeGreaterThan(16 << 20);
    expect(child.pages!.privateDirty!).toBeGreaterThan(16 << 20);
    expect(child.pages!.pss!).toBeLessThan(child.pages!.rss!);
    // the post-mortem's heap vs RSS reads these pages (taken with the dump, the same moment as its heap), not a
    // copied smaps_rollup file: here none was given, and the figures are the ones the program's readings bound
    const cm = postmortemQuery(job).processes.find((p) => p.pid === own.child)!.memory;
    expect(cm.source).toMatch(/the dump's context/);
    expect(cm.rssBytes).toBe(child.pages!.rss);
    expect(cm.privateBytes).toBe(child.pages!.privateDirty! + child.pages!.privateClean!);
    expect(cm.sharedBytes).toBe(child.pages!.sharedDirty! + child.pages!.sharedClean!);
  }, 120_000);

  // The context thread writes jemalloc's stats into the sidecar the dump hook wrote, in place: one rename of a
  // sidecar per dump (the hook's), not a second version renamed over the first (a file creation, a deletion and,
  // on ext4, a forced write-back per dump). The kernel's own account of the folder (inotify, read by the program)
  // says which files were renamed into place and written to.
  it('jemalloc stats go into the hook’s sidecar in place, within one page: one rename per sidecar', async () => {
    const dir = join(work, 'in-place');
    execFileSync('mkdir', ['-p', dir]);
    const prog = `import ctypes, json, os, struct, time
libc = ctypes.CDLL(None)
IN_MODIFY, IN_MOVED_TO = 0x2, 0x80
fd = libc.inotify_init1(os.O_NONBLOCK)
assert fd >= 0 and libc.inotify_add_watch(fd, b".", IN_MODIFY | IN_MOVED_TO) >= 0
keep = [bytearray(4096) for _ in range(3000)]
for _ in range(3):
    libc.mallctl(b"prof.dump", None, None, None, 0)
    time.sleep(0.1)
buf = b""
while True:
    try:
        buf += os.read(fd, 1 << 16)
    except BlockingIOError:
        break
events, off = [], 0
while off < len(buf):
    wd, mask, cookie, n = struct.unpack_from("iIII", buf, off)
    events.append([mask, buf[off + 16 : off + 16 + n].rstrip(b"\\0").decode()])
    off += 16 + n
print(json.dumps(events))
`;
    writeFileSync(join(dir, 'inplace.py'), prog);
    const r = spawnSync(PYTHONS[0], [join(dir, 'inplace.py')], {
      cwd: dir,
      env: {
        ...capturedEnv(`prof:true,prof_prefix:${dir}/inplace`),
      },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const events = JSON.parse(r.stdout) as [number, string][];
    const sidecars = readdirSync(dir).filter((n) => n.endsWith('.heap.pyframes'));
    expect(sidecars).toHaveLength(3);
    for (const name of sidecars) {
      const moves = events.filter(([mask, n]) => mask & 0x80 && n === name).length;
      const writes = events.filter(([mask, n]) => mask & 0x2 && n === name).length;
      expect([name, moves], 'renamed into place once').toEqual([name, 1]);
      expect(writes, `${name}: written to under its own name (the stats)`).toBeGreaterThanOrEqual(1);
      // the stats and the blank comment that pads them to a fixed size lie in one page of the file: a kill during
      // that one write leaves the old bytes or the new ones
      const text = readFileSync(join(dir, name), 'latin1');
      const start = text.indexOf('C je_allocated ');
      const pad = text.indexOf('\n#', start);
      expect(start, name).toBeGreaterThan(0);
      expect(Math.floor(start / 4096), name).toBe(Math.floor((text.indexOf('\n', pad + 1) + 1) / 4096));
    }
    const job = await loadJob(await collectInputFiles([dir]));
    expect(job.processes).toHaveLength(1);
    for (const s of job.processes[0].snapshots) {
      expect(s.context?.jemalloc?.allocated).toBeGreaterThan(3000 * 4096);
      expect(s.context?.jemallocDelayNs).toBeGreaterThan(0);
      expect(s.context?.jemallocPages?.pageSize).toBe(4096);
    }
  }, 120_000);

  // The native frames come from libunwind's unw_backtrace when libunwind.so.8 loads, else (and with
  // HEAPLENS_CAPTURE_UNWIND=jemalloc) from jemalloc's own unwinder: each says so, and both give the same stacks
  // (here: the same leaking path with the same call counts under the same interpreter, every allocation sampled).
  const libunwind = ['/usr/lib/x86_64-linux-gnu/libunwind.so.8', '/lib/x86_64-linux-gnu/libunwind.so.8'].some((p) =>
    existsSync(p),
  );
  it(`libunwind (${libunwind ? 'found' : 'not here: only the fallback is checked'}) and jemalloc's own unwinder give the same stacks`, async () => {
    const python = PYTHON_SEARCH.found.find((f) => f.minor === '3.10')?.path ?? PYTHONS[0];
    const stacks: Record<string, string> = {};
    const live: Record<string, number> = {};
    for (const mode of ['libunwind', 'jemalloc']) {
      const dir = join(work, `unwind-${mode}`);
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'prog.py'), PROGRAM);
      const r = spawnSync(python, [join(dir, 'prog.py')], {
        cwd: dir,
        env: {
          ...capturedEnv(`prof:true,lg_prof_sample:0,prof_prefix:${dir}/jeprof`),
          HEAPLENS_CAPTURE_UNWIND: mode,
          HEAPLENS_CAPTURE_VERBOSE: '1',
        },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const used = mode === 'libunwind' && libunwind;
      expect(r.stderr.includes("native frames by libunwind's unw_backtrace"), r.stderr).toBe(used);
      let out = '';
      expect(
        await run(['top', dir, '-n', '1', '--json', '--stacks', 'python', '--no-symbols'], {
          out: (s) => (out += s),
          err: () => {},
        }),
      ).toBe(0);
      const top = (
        JSON.parse(out) as {
          stacks: { liveBytes: number; frames: { kind: string; function: string; line: number }[] }[];
        }
      ).stacks[0];
      stacks[mode] = JSON.stringify(top.frames.filter((f) => f.kind === 'python').map((f) => [f.function, f.line]));
      // 40 calls x 50 rows of 4 KiB (jemalloc's 5 KiB size class), every allocation sampled
      expect(top.liveBytes, mode).toBeGreaterThanOrEqual(2000 * 4096);
      live[mode] = top.liveBytes;
    }
    expect(stacks.libunwind).toBe(stacks.jemalloc);
    expect(live.libunwind).toBe(live.jemalloc);
    expect(stacks.jemalloc).toContain(JSON.stringify(['keep_growing', lineOf('caller')]));
  }, 120_000);

  for (const { minor, path: python } of PYTHON_SEARCH.found) {
    it(`${python}: the leaking path of a Python thread appears with its functions and lines`, async () => {
      const dir = join(work, python.replace(/\W+/g, '_'));
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'prog.py'), PROGRAM);
      const r = spawnSync(python, [join(dir, 'prog.py')], {
        cwd: dir,
        env: {
          ...capturedEnv(`prof:true,lg_prof_sample:12,prof_prefix:${dir}/jeprof`),
          HEAPLENS_CAPTURE_TIMING: '1', // the context then records what the dump hook allocated
        },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const names = readdirSync(dir);
      expect(
        names.some((n) => n.endsWith('.heap.pyframes')),
        names.join(' '),
      ).toBe(true);

      const job = await loadJob(await collectInputFiles([dir]));
      expect(job.processes).toHaveLength(1);
      expect(job.processes[0].pythonFrames).toBeTruthy();
      let out = '';
      expect(
        await run(['top', dir, '-n', '3', '--json', '--stacks', 'python', '--no-symbols'], {
          out: (s) => (out += s),
          err: () => {},
        }),
      ).toBe(0);
      const doc = JSON.parse(out) as {
        stacks: { liveBytes: number; frames: { kind: string; function: string; line: number; file: string }[] }[];
      };
      const top = doc.stacks[0];
      expect(top.frames.slice(0, 2).map((f) => [f.function, f.line])).toEqual([
        [recordedName('Buffer.append_rows', minor), lineOf('leak')],
        ['keep_growing', lineOf('caller')],
      ]);
      expect(top.frames[0].file.endsWith('prog.py')).toBe(true);
      // 2,000 bytearrays of 4 KiB (+ object headers) kept: sampled at 1 in 4 KiB, the estimate is near 8 MiB
      expect(top.liveBytes).toBeGreaterThan(6e6);
      expect(top.liveBytes).toBeLessThan(11e6);
      // the dump hook ran without allocating (jemalloc's own thread.allocated counter), and the
      // context thread read jemalloc's stats after it
      const ctx = job.processes[0].snapshots[0].context;
      expect(ctx?.extra).not.toHaveProperty('hook_alloc_bytes');
      const raw = readFileSync(
        join(
          dir,
          names.find((n) => n.endsWith('.heap.pyframes'))!,
        ),
        'utf8',
      );
      expect(raw).toMatch(/^C hook_alloc_bytes 0$/m);
      expect(ctx?.jemalloc?.allocated).toBeGreaterThan(8e6);
    }, 120_000);
  }
});
