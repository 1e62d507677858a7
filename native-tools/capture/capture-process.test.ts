// The library in the life of a process: threads and fork (issue 48 item 3: no thread of ours between dumps, so
// Python 3.12+ does not warn at os.fork(); with a memory trigger a forked child watches its own memory), the
// triggers named as recorded (issues 44 item 7, 48 item 5), and pid namespaces (issue 49 item 2: the pid in every
// namespace, the namespace, the boot id), in real Python runs. Expected figures come from the program's own
// readings, the settings the test gives and the kernel's view from outside the process.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { jobSummary } from '../../core/query/job-summary.js';
import { loadJob } from '../../core/load/load-job.js';
import { run } from '../../node/cli/main.js';
import { processIdentity } from '../../core/model/memory-context.js';
import { JEMALLOC, PYTHONS, PYTHON_SEARCH, buildLibrary, captureReady, checkDump, root } from './test-support.js';

if (!captureReady)
  console.warn(`capture-process.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.11–3.13)`);
const work = mkdtempSync(join(tmpdir(), 'heaplens-capture-process-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!captureReady)('libheaplens_capture: threads, fork, triggers and pid namespaces', () => {
  beforeAll(() => buildLibrary(), 120_000);

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
      // the CLI from the sources (tsx resolves from the checkout)
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

  // Issue 48 item 3 with `heaplens capture`'s defaults, which ask for RSS-step dumps (a watcher thread): the watcher
  // ends before each fork() and starts again after it, so a forking Python 3.12 job gets no "multi-threaded"
  // DeprecationWarning, and its growth after the forks still gets its RSS-step dumps. Under -W
  // error::DeprecationWarning, as a user makes warnings errors; CPython 3.12.1/3.13.0 discard that warning rather than
  // raise it from os.fork() once it is an error, so the job also records the warnings it got (catch_warnings) and
  // counts the threads the kernel lists for it (the warning's own test), the watcher among them.
  const FORKING_JOB = `import os, sys, time, warnings
def threads(but_context=False):
    # the kernel's list of this process's threads; at the end less the dump context's (heaplens-ctx), which may
    # still be finishing the last RSS-step dump (it stays up to 0.5 s after close dumps)
    n = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                n += not (but_context and f.read().strip() == "heaplens-ctx")
        except FileNotFoundError:
            pass
    return n
keep = [bytearray(1 << 20) for _ in range(8)]
time.sleep(0.3)
before = threads()
caught = []
after = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for i in range(6):
        pid = os.fork()
        if pid == 0:
            keep.append(bytearray(1 << 20))
            os._exit(0)
        forked_at = time.monotonic()
        n = threads()
        # how long after fork() the count was taken: past 50 ms the watcher may be back (WATCH_RESUME_NS)
        after.append([n, time.monotonic() - forked_at])
        os.waitpid(pid, 0)
        time.sleep(0.02 * (i % 2))
    caught = [str(x.message) for x in w]
forked = time.time()
for i in range(40):
    keep.append(bytearray(4 << 20)); time.sleep(0.02)
time.sleep(0.4)
print(__import__("json").dumps({"before": before, "after_fork": after, "end": threads(True), "caught": caught, "forked": forked}))
`;
  it.skipIf(!py312)(
    `heaplens capture's defaults (RSS step): a forking Python job under -W error::DeprecationWarning gets no multi-threaded warning, and RSS-step dumps after its forks (${py312 ?? 'skipped'})`,
    async () => {
      const dir = join(work, 'capture-forks');
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'job.py'), FORKING_JOB);
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const k of ['LD_PRELOAD', 'MALLOC_CONF', 'PYTHONMALLOC']) delete env[k];
      for (const k of Object.keys(env)) if (k.startsWith('HEAPLENS_DUMP_')) delete env[k];
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          join(root, 'node/cli/heaplens.ts'),
          'capture',
          '--out',
          join(dir, 'dumps'),
          '--',
          py312!,
          '-W',
          'error::DeprecationWarning',
          join(dir, 'job.py'),
        ],
        { cwd: root, env, encoding: 'utf8', timeout: 120_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/multi-threaded|DeprecationWarning: |Traceback/);
      const own = JSON.parse(r.stdout) as {
        before: number;
        after_fork: [number, number][];
        end: number;
        caught: string[];
        forked: number;
      };
      // the watcher runs (2 threads) before the forks and again after them; right after fork() the parent has one.
      // It comes back at the first sampled allocation 50 ms after the fork: a count taken later than that (the
      // machine busy) may see it, so only the counts taken within 40 ms of their fork are held to one.
      expect(own.caught).toEqual([]);
      expect([own.before, own.end]).toEqual([2, 2]);
      const quick = own.after_fork.filter(([, s]) => s < 0.04);
      expect(quick.length, JSON.stringify(own.after_fork)).toBeGreaterThan(0);
      for (const [n] of quick) expect(n, JSON.stringify(own.after_fork)).toBe(1);
      // the growth after the forks (160 MiB in 4 MiB steps) got its RSS-step dumps, the parent's own
      const job = await loadJob(await collectInputFiles([join(dir, 'dumps')]));
      const parent = job.processes.find((p) => p.snapshots.some((s) => s.context?.fork === null))!;
      const late = parent.snapshots.filter(
        (s) => s.context?.trigger === 'rss-step' && s.context.timeRealMs > own.forked * 1000,
      );
      expect(late.length, parent.snapshots.map((s) => s.context?.trigger).join(' ')).toBeGreaterThanOrEqual(1);
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
});
