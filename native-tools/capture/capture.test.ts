// The producer, live: build libheaplens_capture.so with gcc, run a small Python program under
// jemalloc + the library for each installed CPython 3.11/3.12/3.13, and read the dumps back. The
// expected functions and lines come from the program's own source text.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { postmortemQuery } from '../../core/query/postmortem.js';
import { jobSummary } from '../../core/query/job-summary.js';
import { loadJob } from '../../core/load/load-job.js';
import { run } from '../../node/cli/main.js';
import { processIdentity, processLimit } from '../../core/model/memory-context.js';
import { checkDump } from './test-support.js';
import { JEMALLOC, PYTHONS, PYTHON_SEARCH, buildLibrary, captureReady, ownMemoryCgroup, root } from './test-support.js';

if (PYTHON_SEARCH.missing.length)
  console.warn(
    `capture.test: no CPython ${PYTHON_SEARCH.missing.join(', ')} here (pyenv, PATH or HEAPLENS_TEST_PYTHONS): those versions are not tested`,
  );
const ready = captureReady;
if (!ready) console.warn(`capture.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.11–3.13)`);

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
              ...process.env,
              PYTHONMALLOC: 'malloc',
              LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
              MALLOC_CONF: `prof:true,prof_prefix:${dir}/jeprof`,
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

  // Issue 48 item 3: Python 3.12+ warns at os.fork() in a process with more than one thread (every DataLoader or
  // multiprocessing worker). With the defaults the library runs no thread between dumps; its context thread
  // lives while it writes a dump's table, and fork() waits for it to end.
  const py312 = PYTHON_SEARCH.found.find((f) => f.minor === '3.12' || f.minor === '3.13')?.path;
  const FORKS = `import ctypes, json, os, sys
lib = ctypes.CDLL(None)
def threads():
    return int([l for l in open("/proc/self/status") if l.startswith("Threads:")][0].split()[1])
before = threads()
keep = [bytearray(4096) for _ in range(2000)]
lib.mallctl(b"prof.dump", None, None, None, 0)
children = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        keep.extend(bytearray(4096) for _ in range(500))
        lib.mallctl(b"prof.dump", None, None, None, 0)
        os._exit(0)
    os.waitpid(pid, 0)
    children.append(pid)
    lib.mallctl(b"prof.dump", None, None, None, 0)
import time; time.sleep(0.3)
print(json.dumps({"before": before, "after": threads(), "children": children}))
`;
  it.skipIf(!py312)(
    `default settings: no thread of ours between dumps, os.fork() after dumps gives no multi-threaded warning (${py312 ?? 'no CPython 3.12/3.13 here: skipped'})`,
    async () => {
      const dir = join(work, 'forks');
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'forks.py'), FORKS);
      const r = spawnSync(py312!, ['-W', 'always::DeprecationWarning', join(dir, 'forks.py')], {
        cwd: dir,
        env: {
          ...process.env,
          LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
          MALLOC_CONF: `prof:true,prof_prefix:${dir}/forks`,
        },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/multi-threaded/);
      const own = JSON.parse(r.stdout) as { before: number; after: number; children: number[] };
      // the interpreter's own thread only: before any dump, and once the last dump's table is written
      expect([own.before, own.after]).toEqual([1, 1]);
      const job = await loadJob(await collectInputFiles([dir]));
      const byPid = new Map(job.processes.map((p) => [p.pid, p]));
      // every child has its dump with its context; the parent's dumps carry jemalloc's stats (the thread ran)
      for (const c of own.children)
        expect(byPid.get(c)?.snapshots[0].context?.fork?.parentPid, String(c)).toBeGreaterThan(0);
      const parent = [...byPid.values()].find((p) => p.snapshots.length === 5)!;
      expect(
        parent.snapshots.map((s) => s.context?.jemalloc?.allocated ?? null).every((a) => a !== null && a > 8e6),
      ).toBe(true);
    },
    120_000,
  );

  it.skipIf(!py312)(
    `with a memory trigger: the watcher thread is restarted in a forked child, whose growth gets its own dumps (${py312 ?? 'skipped'})`,
    async () => {
      const dir = join(work, 'forks-policy');
      execFileSync('mkdir', ['-p', dir]);
      // the child grows 48 MiB, 1 MiB every 5 ms, and stays a moment; the parent waits
      const prog = `import os, time
pid = os.fork()
if pid == 0:
    keep = []
    for i in range(48):
        keep.append(b"x" * (1 << 20)); time.sleep(0.005)
    time.sleep(0.3)
    os._exit(0)
os.waitpid(pid, 0)
print(pid)
`;
      writeFileSync(join(dir, 'grow.py'), prog);
      const r = spawnSync(py312!, [join(dir, 'grow.py')], {
        cwd: dir,
        env: {
          ...process.env,
          PYTHONMALLOC: 'malloc',
          LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
          MALLOC_CONF: `prof:true,lg_prof_interval:-1,prof_prefix:${dir}/grow`,
          HEAPLENS_DUMP_RSS_STEP: '8M',
          HEAPLENS_DUMP_POLL: '5ms',
          HEAPLENS_DUMP_MIN_INTERVAL: '10ms',
        },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const child = Number(r.stdout.trim());
      const job = await loadJob(await collectInputFiles([dir]));
      const snaps = job.processes.find((p) => p.pid === child)?.snapshots ?? [];
      // 48 MiB in steps of 8 MiB: some 5 dumps (one poll may cover two steps); all the child's own, by RSS step
      expect(snaps.length, readdirSync(dir).join(' ')).toBeGreaterThanOrEqual(3);
      expect(snaps.every((s) => s.context?.trigger === 'rss-step' && s.context.fork !== null)).toBe(true);
      // issue 44 item 7 / 48 item 5: jemalloc names these files ".m<n>.heap" (manual); every view names the rule
      expect(snaps.every((s) => /\.m\d+\.heap$/.test(s.file))).toBe(true);
      let json = '';
      expect(await run(['summary', dir, '--json'], { out: (t) => (json += t), err: () => {} })).toBe(0);
      const doc = JSON.parse(json) as { processes: { pid: number; snapshots: { trigger: string }[] }[] };
      expect(doc.processes.find((p) => p.pid === child)!.snapshots.map((s) => s.trigger)).toEqual(
        snaps.map(() => 'rss-step'),
      );
      let text = '';
      expect(await run(['summary', dir], { out: (t) => (text += t + '\n'), err: () => {} })).toBe(0);
      const rows = text.split('\n').filter((l) => l.includes(`grow.${child}.`));
      expect(rows.length).toBe(snaps.length);
      for (const r of rows) expect(r).toMatch(/^\s+\d+\s+rss-step\s/);
      const app = jobSummary(job, { hasPython: () => true, loadMs: 0, bytesTotal: 0, waitMs: 0, partial: false });
      expect(app.processes.find((p) => p.pid === child)!.snapshots.map((s) => s.trigger)).toEqual(
        snaps.map(() => 'rss-step'),
      );
    },
    120_000,
  );

  // Issue 49 item 2: a process in a pid namespace of its own (as each rank of a containerised job) is known to the
  // host's kernel (its OOM report, dmesg) by another pid. The context records the pid in every namespace its /proc
  // shows, the namespace and the machine's boot id. Expected figures from outside the process: the host pid is the
  // child the kernel lists for unshare (/proc/<unshare>/task/<unshare>/children), the namespace is the inode of
  // /proc/<host pid>/ns/pid, the boot id the machine's.
  const NS = `import ctypes, sys, time
keep = [bytearray(4096) for _ in range(500)]
ctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)
print("dumped", flush=True)
sys.stdin.read()  # until the test has looked at this process from the host
`;
  const rootUser = process.getuid?.() === 0;
  const nsCases = [
    { name: "the host's /proc (unshare --pid)", args: ['--pid', '--fork'], ownProc: false },
    {
      name: 'a /proc of its own and a host name (unshare --pid --mount-proc --uts)',
      args: ['--pid', '--fork', '--mount-proc', '--uts'],
      ownProc: true,
    },
  ];
  for (const c of nsCases)
    it.skipIf(!rootUser)(
      `a pid namespace with ${c.name}: its pids by namespace, the namespace and the boot id${rootUser ? '' : ' (needs root: skipped)'}`,
      async () => {
        const dir = join(work, 'ns-' + (c.ownProc ? 'own' : 'host'));
        execFileSync('mkdir', ['-p', dir]);
        writeFileSync(join(dir, 'ns.py'), NS);
        const child = spawn(
          'unshare',
          [...c.args, 'sh', '-c', `${c.ownProc ? 'hostname node-b && ' : ''}exec "$0" ns.py`, PYTHONS[0]],
          {
            cwd: dir,
            env: {
              ...process.env,
              LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
              MALLOC_CONF: `prof:true,prof_prefix:${dir}/ns`,
            },
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        await new Promise<void>((res) =>
          child.stdout.on('data', (d: Buffer) => d.toString().includes('dumped') && res()),
        );
        const u = child.pid!;
        const hostPid = Number(readFileSync(`/proc/${u}/task/${u}/children`, 'utf8').trim());
        const ns = Number(/^pid:\[(\d+)\]$/.exec(readlinkSync(`/proc/${hostPid}/ns/pid`))![1]);
        child.stdin.end();
        const code = await new Promise<number | null>((res) => child.on('exit', (x) => res(x)));
        expect(code, stderr).toBe(0);
        const dump = readdirSync(dir).find((n) => n.endsWith('.heap'))!;
        // pid 1 in its namespace: jemalloc names the dump by it; the dump is whole, with this process's own maps
        expect(dump).toMatch(/^ns\.1\.0\.m0\.heap$/);
        expect(await checkDump(join(dir, dump))).toEqual({ complete: true, problem: null, sidecar: 'complete' });
        const job = await loadJob(await collectInputFiles([dir]));
        expect(job.processes[0].maps?.some((m) => m.path.includes('python'))).toBe(true);
        const id = processIdentity(job.processes[0])!;
        expect(id.pid).toBe(1);
        expect(id.nsPids).toEqual(c.ownProc ? [1] : [hostPid, 1]);
        expect(id.hostPid).toBe(c.ownProc ? null : hostPid);
        expect(id.pidNamespace).toBe(ns);
        expect(id.bootId).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
        if (c.ownProc) expect(id.hostname).toBe('node-b');
        // the CLI gives them too
        let out = '';
        expect(await run(['summary', dir, '--json'], { out: (t) => (out += t), err: () => {} })).toBe(0);
        const p = (JSON.parse(out) as { processes: Record<string, unknown>[] }).processes[0];
        expect([p.nsPids, p.hostPid, p.pidNamespace, p.bootId]).toEqual([id.nsPids, id.hostPid, ns, id.bootId]);
        let text = '';
        expect(await run(['summary', dir], { out: (t) => (text += t + '\n'), err: () => {} })).toBe(0);
        expect(text).toContain(
          c.ownProc
            ? `in pid namespace ${ns} with a /proc of its own: its host pid was not visible to it`
            : `pid in each pid namespace, outermost first: ${hostPid}, 1 (host pid ${hostPid})`,
        );
      },
      60_000,
    );

  for (const python of PYTHONS) {
    it(`${python}: the leaking path of a Python thread appears with its functions and lines`, async () => {
      const dir = join(work, python.replace(/\W+/g, '_'));
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'prog.py'), PROGRAM);
      const r = spawnSync(python, [join(dir, 'prog.py')], {
        cwd: dir,
        env: {
          ...process.env,
          PYTHONMALLOC: 'malloc',
          LD_PRELOAD: `${JEMALLOC} ${join(root, 'native-tools/capture/build/libheaplens_capture.so')}`,
          MALLOC_CONF: `prof:true,lg_prof_sample:12,prof_prefix:${dir}/jeprof`,
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
        ['Buffer.append_rows', lineOf('leak')],
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
