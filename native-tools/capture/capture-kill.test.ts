// The memory policy on real kills: a slow leak in a memory cgroup of the test's own, with jemalloc's
// interval dumps off, run until the kernel's OOM killer ends it; and processes killed (SIGKILL) at a
// random moment while they write dumps. Expected figures come from the kernel: the RSS of its
// `Killed process` line (dmesg) and the limit the test wrote into the cgroup. Every file left behind
// is read with our own readers.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { loadJob } from '../../core/load/load-job.js';
import { run } from '../../node/cli/main.js';
import { JEMALLOC, LIBRARY, PYTHONS, buildLibrary, captureReady, checkDump, ownMemoryCgroup } from './test-support.js';

const work = mkdtempSync(join(tmpdir(), 'heaplens-capture-kill-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
if (!captureReady)
  console.warn(`capture-kill.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.11–3.13)`);

const MIB = 1024 * 1024;
const dumpsIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.heap'))
    .sort((a, b) => seqOf(a) - seqOf(b));
const seqOf = (name: string): number => Number(/\.(\d+)\.[imuf]\d*\.heap$/.exec(name)?.[1] ?? -1);

/** The kernel's report of the OOM kill of `pid`: the RSS it had (anon + file + shmem), bytes. */
function killedRss(pid: number): number | null {
  const out = spawnSync('dmesg', [], { encoding: 'utf8', maxBuffer: 64 * MIB }).stdout ?? '';
  const line = out
    .split('\n')
    .reverse()
    .find((l) => l.includes(`Killed process ${pid} `));
  if (!line) return null;
  const kb = (k: string): number => Number(new RegExp(`${k}:(\\d+)kB`).exec(line)?.[1] ?? NaN);
  return (kb('anon-rss') + kb('file-rss') + kb('shmem-rss')) * 1024;
}

const cg = captureReady ? ownMemoryCgroup('kill') : null;
const cgSkip = !captureReady
  ? 'capture prerequisites missing'
  : cg === null
    ? 'needs root and a memory cgroup (v1 memory controller or delegated v2) to create one: skipped'
    : '';
if (cgSkip && captureReady) console.warn(`capture-kill.test: the OOM test is SKIPPED (${cgSkip})`);

describe.skipIf(!captureReady)('memory-driven dumps and atomic dumps under real kills', () => {
  beforeAll(() => buildLibrary(), 120_000);

  const LIMIT = 160 * MIB;
  const STEP = 8 * MIB;
  const KEEP = 3;
  it.skipIf(cgSkip !== '')(
    `a slow leak killed by the kernel in a ${cg?.version ?? ''} memory cgroup leaves a recent, whole dump (${cgSkip || 'limit 160 MiB'})`,
    async () => {
      const c = cg!;
      const dir = join(work, 'oom');
      mkdirSync(dir, { recursive: true });
      // 1 MiB every 20 ms, each page written (bytes repetition), kept forever
      writeFileSync(
        join(dir, 'leak.py'),
        'import time\nkeep = []\nwhile True:\n    keep.append(b"x" * (1 << 20))\n    time.sleep(0.02)\n',
      );
      mkdirSync(c.dir, { recursive: true });
      try {
        writeFileSync(join(c.dir, c.limitFile), String(LIMIT));
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          PYTHONMALLOC: 'malloc',
          HEAPLENS_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
          // interval dumps off: only the policy writes dumps
          MALLOC_CONF: `prof:true,lg_prof_interval:-1,prof_prefix:${dir}/leak`,
          HEAPLENS_DUMP_RSS_STEP: '8M',
          HEAPLENS_DUMP_CGROUP_FRACTIONS: '0.8,0.9,0.95',
          HEAPLENS_DUMP_MIN_INTERVAL: '100ms',
          HEAPLENS_DUMP_POLL: '20ms',
          HEAPLENS_DUMP_KEEP: String(KEEP),
        };
        delete env.LD_PRELOAD;
        // the shell moves itself into the cgroup, then becomes the Python process (same pid)
        const child = spawn(
          '/bin/sh',
          ['-c', `echo $$ > ${c.dir}/cgroup.procs && LD_PRELOAD="$HEAPLENS_PRELOAD" exec "$0" leak.py`, PYTHONS[0]],
          { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const signal = await new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, sig) => res(sig)));
        expect(signal, stderr).toBe('SIGKILL');
        const rss = killedRss(child.pid!);
        expect(rss, `no "Killed process ${child.pid}" line in dmesg`).not.toBeNull();

        const names = readdirSync(dir);
        const dumps = dumpsIn(dir);
        expect(dumps.length, names.join(' ')).toBeGreaterThanOrEqual(2);
        expect(dumps.length, names.join(' ')).toBeLessThanOrEqual(KEEP + 1);
        // a dump cut by the kill stays under its temporary name; every dump name holds a whole dump
        expect(names.filter((n) => !n.endsWith('.heap') && !n.endsWith('.heap.pyframes') && n !== 'leak.py')).toEqual(
          names.filter((n) => /\.heap(\.pyframes)?\.[0-9a-f]{16}\.tmp$/.test(n)),
        );
        for (const d of dumps) {
          const ck = await checkDump(join(dir, d));
          expect(ck, d).toEqual({ complete: true, problem: null, sidecar: 'complete' });
        }
        // the ring kept the process's first dump
        expect(seqOf(dumps[0])).toBe(0);

        const job = await loadJob(await collectInputFiles([dir]));
        expect(job.processes).toHaveLength(1);
        const snaps = job.processes[0].snapshots;
        expect(snaps.map((s) => s.file.split('/').pop())).toEqual(dumps);
        const ctx = snaps.map((s) => s.context!);
        expect(ctx.every((x) => x && x.trigger !== null && ['rss-step', 'cgroup-fraction'].includes(x.trigger))).toBe(
          true,
        );
        const newest = ctx[ctx.length - 1];
        // the newest whole dump is within two RSS steps of the RSS the kernel killed
        expect(
          rss! - newest.rss!,
          `killed at ${rss! / MIB} MiB, newest dump at ${newest.rss! / MIB} MiB`,
        ).toBeLessThanOrEqual(2 * STEP);
        expect(newest.rss! - rss!).toBeLessThanOrEqual(STEP);
        // and one dump was taken at 90 % of the limit or more (the cgroup's own usage at that dump)
        const top = Math.max(...ctx.map((x) => x.cgroup?.current ?? 0));
        expect(top, ctx.map((x) => x.cgroup?.current).join(' ')).toBeGreaterThanOrEqual(0.9 * LIMIT);
        expect(ctx.every((x) => x.cgroup?.max === LIMIT)).toBe(true);
        // the minimum interval held (monotonic clock of each dump)
        const mono = ctx.map((x) => x.timeMonoMs!);
        for (let i = 1; i < mono.length; i++) expect(mono[i] - mono[i - 1]).toBeGreaterThanOrEqual(100);
        // where the pages went: all private and anonymous in a leak like this one
        expect(newest.pages?.privateDirty).toBeGreaterThan(0.8 * newest.rss!);
      } finally {
        spawnSync('sh', ['-c', `cat ${c.dir}/cgroup.procs | xargs -r kill -9; sleep 0.1; rmdir ${c.dir}`]);
      }
    },
    90_000,
  );

  it.skipIf(cgSkip !== '')(
    `a fraction fires once per crossing and re-arms when usage falls back (${cgSkip || 'limit 200 MiB'})`,
    async () => {
      const c = ownMemoryCgroup('rearm')!;
      const dir = join(work, 'rearm');
      mkdirSync(dir, { recursive: true });
      // up to 120 MiB, down to ~20 MiB (freed pages purged at once: dirty_decay_ms:0), up again, then exit
      writeFileSync(
        join(dir, 'wave.py'),
        `import time
for wave in range(2):
    keep = []
    for i in range(120):
        keep.append(b"x" * (1 << 20)); time.sleep(0.005)
    time.sleep(0.3)
    del keep
    time.sleep(0.5)
`,
      );
      mkdirSync(c.dir, { recursive: true });
      try {
        writeFileSync(join(c.dir, c.limitFile), String(200 * MIB));
        const r = spawnSync(
          '/bin/sh',
          ['-c', `echo $$ > ${c.dir}/cgroup.procs && LD_PRELOAD="$HEAPLENS_PRELOAD" exec "$0" wave.py`, PYTHONS[0]],
          {
            cwd: dir,
            encoding: 'utf8',
            env: {
              ...process.env,
              LD_PRELOAD: '',
              HEAPLENS_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
              MALLOC_CONF: `prof:true,lg_prof_interval:-1,dirty_decay_ms:0,muzzy_decay_ms:0,prof_prefix:${dir}/wave`,
              HEAPLENS_DUMP_CGROUP_FRACTIONS: '0.5',
              HEAPLENS_DUMP_MIN_INTERVAL: '50ms',
              HEAPLENS_DUMP_POLL: '10ms',
            },
          },
        );
        expect(r.status, r.stderr).toBe(0);
        const job = await loadJob(await collectInputFiles([dir]));
        const ctx = job.processes[0].snapshots.map((s) => s.context!);
        // one dump per crossing of 100 MiB: two waves, two dumps, each at or above half the limit
        expect(ctx.map((x) => [x.trigger, x.triggerFraction])).toEqual([
          ['cgroup-fraction', 0.5],
          ['cgroup-fraction', 0.5],
        ]);
        for (const x of ctx) expect(x.cgroup!.current!).toBeGreaterThanOrEqual(100 * MIB);
        // summary names each dump's trigger as recorded (jemalloc's file names say "m", manual)
        let text = '';
        expect(await run(['summary', dir], { out: (t) => (text += t + '\n'), err: () => {} })).toBe(0);
        expect(
          text
            .split('\n')
            .filter((l) => /\.m\d+\.heap\s*$/.test(l))
            .map((l) => l.trim().split(/\s{2,}/)[1]),
        ).toEqual(['cgroup-fraction 0.5', 'cgroup-fraction 0.5']);
        let json = '';
        expect(await run(['summary', dir, '--json'], { out: (t) => (json += t), err: () => {} })).toBe(0);
        const snaps = (JSON.parse(json) as { processes: { snapshots: unknown[] }[] }).processes[0].snapshots;
        expect(snaps).toMatchObject([
          { trigger: 'cgroup-fraction', triggerFraction: 0.5 },
          { trigger: 'cgroup-fraction', triggerFraction: 0.5 },
        ]);
      } finally {
        spawnSync('rmdir', [c.dir]);
      }
    },
    60_000,
  );

  // 1,200 distinct Python stacks, each allocation of 2 KiB sampled with probability 1 − e^−1 (lg_prof_sample:11):
  // each dump is some 2 MB and takes 40–100 ms to write here.
  const BIG = `import ctypes, sys
lib = ctypes.CDLL(None)
keep = []
src = "\\n".join(f"def f{i}(k):\\n    k.append(bytearray({2048 + i}))" for i in range(1200))
exec(src)
for i in range(1200):
    globals()[f"f{i}"](keep)
while True:
    lib.mallctl(b"prof.dump", None, None, None, 0)
`;
  it('SIGKILL at a random moment of a dump write: the earlier dumps survive whole, no cut file under a dump name', async () => {
    const dir = join(work, 'midwrite');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'big.py'), BIG);
    const ROUNDS = 3;
    // the rounds run side by side (one process each, killed on its own schedule)
    const rounds = await Promise.all(
      Array.from({ length: ROUNDS }, async (_, round) => {
        const rd = join(dir, String(round));
        mkdirSync(rd);
        const child = spawn(PYTHONS[0], [join(dir, 'big.py')], {
          cwd: rd,
          env: {
            ...process.env,
            PYTHONMALLOC: 'malloc',
            LD_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
            MALLOC_CONF: `prof:true,lg_prof_sample:11,prof_prefix:${rd}/big`,
            HEAPLENS_DUMP_KEEP: '2',
            ...(process.env.HEAPLENS_TEST_ATOMIC ? { HEAPLENS_DUMP_ATOMIC: process.env.HEAPLENS_TEST_ATOMIC } : {}),
          },
          stdio: 'ignore',
        });
        const exited = new Promise<void>((res) => child.on('exit', () => res()));
        // wait for the second whole dump, then kill at a random moment of the ones that follow
        for (let t = 0; t < 2400 && dumpsIn(rd).length < 2; t++) await new Promise((r) => setTimeout(r, 25));
        await new Promise((r) => setTimeout(r, Math.random() * 150));
        child.kill('SIGKILL');
        await exited;
        return rd;
      }),
    );
    let cutWrites = 0;
    for (const [round, rd] of rounds.entries()) {
      const names = readdirSync(rd);
      if (names.some((n) => /\.heap\.[0-9a-f]{16}\.tmp$/.test(n))) cutWrites++;
      const dumps = dumpsIn(rd);
      expect(dumps.length, names.join(' ')).toBeGreaterThanOrEqual(2);
      expect(dumps.length).toBeLessThanOrEqual(3);
      for (const d of dumps) {
        const ck = await checkDump(join(rd, d));
        // every dump under its own name is whole, with a whole table of its own
        expect(ck, `round ${round}: ${d}`).toEqual({ complete: true, problem: null, sidecar: 'complete' });
      }
      const job = await loadJob(await collectInputFiles([rd]));
      expect(job.processes[0].snapshots).toHaveLength(dumps.length);
      expect(job.warnings.filter((w) => !w.message.startsWith('left out:'))).toEqual([]);
    }
    // most kills land inside a write (dumps follow each other); at least one must have, or nothing was tested
    expect(cutWrites, `${cutWrites} of ${ROUNDS} kills landed inside a dump write`).toBeGreaterThanOrEqual(1);
  }, 120_000);

  // Bad settings and a hostile disk: one line on stderr each, the program runs to its end, earlier dumps stay.
  const SMALL = `import ctypes, sys
lib = ctypes.CDLL(None)
keep = [bytearray(4096) for _ in range(1000)]
lib.mallctl(b"prof.dump", None, None, None, 0)
if len(sys.argv) > 1:  # fill the disk, then dump again
    try:
        with open(sys.argv[1], "wb", buffering=0) as f:
            while True: f.write(b"f" * 4096)
    except OSError: pass
lib.mallctl(b"prof.dump", None, None, None, 0)
keep.append(bytearray(1 << 20))
print("alive")
`;
  const root = process.getuid?.() === 0;
  const mountTmpfs = (dir: string, opts: string): boolean =>
    spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir]).status === 0;
  const cases: {
    name: string;
    env: Record<string, string>;
    want: RegExp;
    mount?: string;
    fill?: boolean;
    cgroup?: boolean;
  }[] = [
    {
      name: 'a step of 0',
      env: { HEAPLENS_DUMP_RSS_STEP: '0' },
      want: /ignoring HEAPLENS_DUMP_RSS_STEP=0: want a size above 0/,
    },
    {
      name: 'a fraction above 1',
      env: { HEAPLENS_DUMP_CGROUP_FRACTIONS: '0.8,1.5' },
      want: /ignoring HEAPLENS_DUMP_CGROUP_FRACTIONS=0.8,1.5: want up to 8 fractions in \(0, 1\]/,
    },
    {
      name: 'a cgroup without a limit',
      env: { HEAPLENS_DUMP_CGROUP_FRACTIONS: '0.9' },
      want: /HEAPLENS_DUMP_CGROUP_FRACTIONS: (cgroup \S+ has no memory limit|no readable memory cgroup)/,
      cgroup: true,
    },
    {
      name: 'a read-only dump folder',
      env: {},
      want: /cannot write dumps \(read-only file system\)/,
      mount: 'ro,size=4m',
    },
    { name: 'a full disk', env: {}, want: /a dump was not kept: the disk is full/, mount: 'size=2m', fill: true },
  ];
  for (const c of cases) {
    const needsRoot = c.mount !== undefined || c.cgroup === true;
    it.skipIf(needsRoot && !root)(
      `${c.name}: one clear line on stderr, the program goes on${needsRoot && !root ? ' (needs root: skipped)' : ''}`,
      async () => {
        const dir = join(work, 'bad-' + c.name.replace(/\W+/g, '-'));
        const out = join(dir, 'dumps');
        mkdirSync(out, { recursive: true });
        writeFileSync(join(dir, 'small.py'), SMALL);
        const own = c.cgroup ? ownMemoryCgroup('nolimit') : null;
        if (c.mount && !mountTmpfs(out, c.mount)) throw new Error(`mount -t tmpfs -o ${c.mount} failed`);
        try {
          if (own) mkdirSync(own.dir, { recursive: true });
          const args = [join(dir, 'small.py'), ...(c.fill ? [join(out, 'filler')] : [])];
          // the preload reaches Python only (the shell would say its own line)
          const cmd = `${own ? `echo $$ > ${own.dir}/cgroup.procs && ` : ''}LD_PRELOAD="$HEAPLENS_PRELOAD" exec "$@"`;
          const r = spawnSync('/bin/sh', ['-c', cmd, 'sh', PYTHONS[0], ...args], {
            env: {
              ...process.env,
              LD_PRELOAD: '',
              HEAPLENS_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
              MALLOC_CONF: `prof:true,prof_prefix:${out}/small`,
              ...c.env,
            },
            encoding: 'utf8',
          });
          expect(r.status, r.stderr).toBe(0);
          expect(r.stdout.trim()).toBe('alive');
          const lines = r.stderr.split('\n').filter((l) => l.startsWith('heaplens-capture:'));
          expect(lines, r.stderr).toHaveLength(1);
          expect(lines[0]).toMatch(c.want);
          const names = readdirSync(out).filter((n) => n !== 'filler');
          if (c.mount?.startsWith('ro')) expect(names).toEqual([]);
          else {
            // the first dump whole; the second either whole too or not there at all (never cut, no temp file left)
            expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
            const dumps = dumpsIn(out);
            expect(dumps.length).toBeGreaterThanOrEqual(1);
            if (c.fill) expect(dumps).toHaveLength(1);
            for (const d of dumps) expect((await checkDump(join(out, d))).complete, d).toBe(true);
          }
        } finally {
          if (c.mount) spawnSync('umount', [out]);
          if (own) spawnSync('rmdir', [own.dir]);
        }
      },
      60_000,
    );
  }
});

// Issue 46 S7: another user of the dump folder plants links at the names the library writes under, or creates
// those names first. Nothing may be written through a link, no file of theirs adopted as a dump, and our dumps
// keep our owner and a mode without write for others.
describe.skipIf(!captureReady || process.getuid?.() !== 0)(
  'a hostile dump folder: planted links and files created first by another user (root: chown)',
  () => {
    beforeAll(() => buildLibrary(), 120_000);
    // the program plants before it dumps (it knows its pid, so the names jemalloc will give its dumps):
    // dump 0: links to the victim at the temp names the library used to write (`<dump>.tmp`, `<dump>.pyframes.tmp`);
    // dump 1: those names created first by user 65534, mode 666; dump 2: links at the final names themselves.
    const PLANT = `import ctypes, os, sys
lib = ctypes.CDLL(None)
out, victim = sys.argv[1], sys.argv[2]
pid = os.getpid()
name = lambda k, s: f"{out}/j.{pid}.{k}.m{k}.heap{s}"
for s in (".tmp", ".pyframes.tmp"):
    os.symlink(victim, name(0, s))
    fd = os.open(name(1, s), os.O_CREAT | os.O_WRONLY, 0o666)
    os.fchmod(fd, 0o666); os.fchown(fd, 65534, 65534); os.close(fd)
for s in ("", ".pyframes"):
    os.symlink(victim, name(2, s))
keep = [bytearray(4096) for _ in range(500)]
for k in range(3):
    lib.mallctl(b"prof.dump", None, None, None, 0)
print("alive")
`;
    const cases: { mode: number; atomic: boolean; warn: boolean }[] = [
      { mode: 0o777, atomic: true, warn: true },
      { mode: 0o1777, atomic: true, warn: false },
      { mode: 0o755, atomic: true, warn: false },
      { mode: 0o777, atomic: false, warn: true },
    ];
    for (const c of cases) {
      it(`folder mode ${c.mode.toString(8)}${c.atomic ? '' : ', HEAPLENS_DUMP_ATOMIC=0'}: nothing written through a link or into another user's file${c.warn ? '; one warning line' : ', no warning'}`, async () => {
        const dir = join(work, `s7-${c.mode.toString(8)}-${c.atomic ? 'a' : 'n'}`);
        const out = join(dir, 'dumps');
        mkdirSync(out, { recursive: true });
        chmodSync(out, c.mode);
        const victim = join(dir, 'victim.txt');
        writeFileSync(victim, 'precious\n');
        writeFileSync(join(dir, 'plant.py'), PLANT);
        const r = spawnSync(
          '/bin/sh',
          [
            '-c',
            'umask 022; LD_PRELOAD="$HEAPLENS_PRELOAD" exec "$@"',
            'sh',
            PYTHONS[0],
            join(dir, 'plant.py'),
            out,
            victim,
          ],
          {
            env: {
              ...process.env,
              LD_PRELOAD: '',
              HEAPLENS_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
              MALLOC_CONF: `prof:true,prof_prefix:${out}/j`,
              ...(c.atomic ? {} : { HEAPLENS_DUMP_ATOMIC: '0' }),
            },
            encoding: 'utf8',
          },
        );
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout.trim()).toBe('alive');
        expect(readFileSync(victim, 'utf8')).toBe('precious\n');
        const pid = Number(/^j\.(\d+)\./.exec(readdirSync(out).find((n) => n.startsWith('j.'))!)![1]);
        const name = (k: number, s: string): string => join(out, `j.${pid}.${k}.m${k}.heap${s}`);
        // the planted links are still links to the victim; the other user's files still theirs, empty, mode 666
        for (const s of ['.tmp', '.pyframes.tmp']) {
          expect(readlinkSync(name(0, s))).toBe(victim);
          const st = lstatSync(name(1, s));
          expect([st.uid, st.size, st.mode & 0o777], name(1, s)).toEqual([65534, 0, 0o666]);
        }
        const lines = r.stderr.split('\n').filter((l) => l.startsWith('heaplens-capture:'));
        if (c.warn)
          expect(lines, r.stderr).toEqual([
            `heaplens-capture: the dump folder ${out} is writable by every user and not sticky: another user can replace or delete its dumps (use a folder only you can write)`,
          ]);
        else expect(lines, r.stderr).toEqual([]);
        // every dump under its final name is ours, whole, mode 644 (jemalloc's, less the umask)
        const dumps = readdirSync(out).filter((n) => n.endsWith('.heap'));
        const ours = dumps.filter((n) => lstatSync(join(out, n)).isFile());
        // the links at dump 2's names were replaced (by the renames; written in place, by a new file), not followed
        expect(ours.sort()).toEqual([0, 1, 2].map((k) => `j.${pid}.${k}.m${k}.heap`));
        for (const d of ours) {
          const st = lstatSync(join(out, d));
          expect([st.uid, st.mode & 0o777], d).toEqual([process.getuid!(), 0o644]);
          expect(await checkDump(join(out, d)), d).toEqual({ complete: true, problem: null, sidecar: 'complete' });
          expect(lstatSync(join(out, d + '.pyframes')).mode & 0o777).toBe(0o644);
        }
        // no temp file of ours is left behind: only the planted names end in .tmp
        expect(
          readdirSync(out)
            .filter((n) => n.endsWith('.tmp'))
            .sort(),
        ).toEqual(['.tmp', '.pyframes.tmp'].flatMap((s) => [0, 1].map((k) => `j.${pid}.${k}.m${k}.heap${s}`)).sort());
      }, 60_000);
    }
  },
);
