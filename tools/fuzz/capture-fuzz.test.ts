// The capture library under random settings and a hostile dump folder (issue 46): every HEAPLENS_* variable and
// MALLOC_CONF's dump options drawn from valid and invalid values, and a folder where links to files outside it are
// planted at the names the library might write, files are created first by another user (uid 65534), the folder
// is removed in the middle of the run, or is a tmpfs of a few hundred KiB that the program fills (root). Each case
// runs a real Python program under jemalloc + the library (dumps, a forked child that dumps, allocations after).
// The job must run to its end (exit 0, "alive"), print nothing but the library's and jemalloc's own lines, and
// write nothing outside its own files: the link targets, the other user's files and the folders around the dump
// folder unchanged; each dump under its final name whole; no file of ours writable by others. `npm test` runs
// HEAPLENS_FUZZ_CAPTURE_CASES (default 6, some 8 s) cases, `npm run fuzz` more; a case reproduces from its number and
// HEAPLENS_FUZZ_SEED.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from './mutate.js';
import {
  JEMALLOC,
  LIBRARY,
  PYTHONS,
  buildLibrary,
  captureReady,
  checkDump,
} from '../../native-tools/capture/test-support.js';

const CASES = Number(process.env.HEAPLENS_FUZZ_CAPTURE_CASES ?? 6);
const SEED = Number(process.env.HEAPLENS_FUZZ_SEED ?? 1);
const root = process.getuid?.() === 0;
const work = mkdtempSync(join(tmpdir(), 'heaplens-capture-fuzz-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
if (!captureReady)
  console.warn(`capture-fuzz.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.11–3.13)`);
if (captureReady && !root)
  console.warn('capture-fuzz.test: without root, no full-disk (tmpfs) cases and no files of another user');

/** Values for each variable: valid, at the edges, and malformed (the library must ignore those with one line). */
const SETTINGS: Record<string, readonly string[]> = {
  HEAPLENS_CAPTURE_PYTHON: ['0', '1', '2', 'yes', ''],
  HEAPLENS_CAPTURE_CONTEXT: ['0', '1', '2', '3', '-1'],
  HEAPLENS_CAPTURE_TABLE: ['sidecar', 'append', 'both', 'none', 'SIDECAR', '../x'],
  HEAPLENS_CAPTURE_LINES: ['0', '1', '99999999999999999999'],
  HEAPLENS_CAPTURE_MAX_PY_FRAMES: ['1', '2', '120', '0', '121', '-5', '1e3'],
  HEAPLENS_CAPTURE_MAX_PY_WALK: ['1', '3', '1000000', '0', '1000001'],
  HEAPLENS_CAPTURE_FORCE_UNMERGED: ['0', '1'],
  HEAPLENS_CAPTURE_TIMING: ['0', '1', 'x'],
  HEAPLENS_CAPTURE_VERBOSE: ['0', '1'],
  HEAPLENS_CAPTURE_UNWIND: ['libunwind', 'jemalloc', '', 'gcc'],
  HEAPLENS_DUMP_RSS_STEP: ['1', '64K', '1M', '1.5MiB', '0', '-1M', '1Q', '99999999999999999999T', 'M', '.'],
  HEAPLENS_DUMP_CGROUP_FRACTIONS: ['0.5', '0.001', '1', '0,5', '2', 'a,b', '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9', ','],
  HEAPLENS_DUMP_PRESSURE_INTERVAL: ['0', '1ms', '30s', '-1s', '1y'],
  HEAPLENS_DUMP_PSI_PERCENT: ['1', '100', '0', '101'],
  HEAPLENS_DUMP_MIN_INTERVAL: ['0', '1ms', '10ms', '1s', 'never'],
  HEAPLENS_DUMP_POLL: ['1ms', '5ms', '60s', '0', '61s', '1e9'],
  HEAPLENS_DUMP_KEEP: ['0', '1', '2', '100000', '-1', '100001', 'x'],
  HEAPLENS_DUMP_ATOMIC: ['0', '1', '2'],
};

type Hazard = 'links' | 'foreign' | 'vanish' | 'full';
interface Case {
  env: Record<string, string>;
  conf: string;
  hazards: Hazard[];
  folderMode: number;
  fork: boolean;
  dumps: number;
  /** tmpfs size for 'full', KiB */
  diskKiB: number;
}

function drawCase(rng: Rng): Case {
  const env: Record<string, string> = {};
  for (const [k, vs] of Object.entries(SETTINGS)) if (rng.int(3) === 0) env[k] = rng.pick(vs);
  const conf = [
    rng.pick(['', ',lg_prof_interval:18', ',lg_prof_interval:20', ',lg_prof_interval:-1']),
    rng.pick(['', ',prof_final:true', ',prof_final:false']),
    rng.pick(['', ',lg_prof_sample:10', ',lg_prof_sample:16']),
  ].join('');
  const hazards = (['links', 'foreign', 'vanish', 'full'] as const).filter(
    (h) => rng.int(2) === 0 && (root || (h !== 'full' && h !== 'foreign')),
  );
  // a mount point cannot be removed: a full disk and a vanished folder are drawn apart
  if (hazards.includes('full') && hazards.includes('vanish'))
    hazards.splice(hazards.indexOf(rng.pick(['full', 'vanish'] as const)), 1);
  return {
    env,
    conf,
    hazards,
    folderMode: rng.pick([0o700, 0o755, 0o777, 0o1777]),
    fork: rng.int(2) === 0,
    dumps: 1 + rng.int(5),
    diskKiB: rng.pick([64, 160, 400, 1024]),
  };
}

// The job: plants (as the other user would, knowing its pid and so jemalloc's names), dumps, forks a child that
// dumps, removes its dump folder and makes it again, fills the disk, and allocates after every one of these.
const PROGRAM = `import ctypes, json, os, shutil, sys
lib = ctypes.CDLL(None)
out, victim, victim_dir, plan = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
pid = os.getpid()
def names(p, k, letter="m"):
    return [f"{out}/j.{p}.{k}.{letter}{k}.heap{s}" for s in (".tmp", ".pyframes.tmp", "", ".pyframes")]
def plant(p):
    for k in range(12):
        for letter in "mif":
            for i, n in enumerate(names(p, k, letter)):
                try:
                    if "links" in plan["hazards"] and (k + i) % 2 == 0:
                        os.symlink(victim_dir if i == 1 else victim, n)
                    elif "foreign" in plan["hazards"] and (k + i) % 3 == 1:
                        fd = os.open(n, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o666)
                        os.fchmod(fd, 0o666); os.fchown(fd, 65534, 65534); os.close(fd)
                except OSError:
                    pass
plant(pid)
keep = []
def work(n):
    for _ in range(n): keep.append(bytearray(4096 + len(keep) % 7))
def dump():
    lib.mallctl(b"prof.dump", None, None, None, 0)
work(300)
for d in range(plan["dumps"]):
    dump(); work(100)
    if d == 0 and "vanish" in plan["hazards"]:
        for _ in range(50):  # the library's watcher may be writing a dump into it meanwhile
            shutil.rmtree(out, ignore_errors=True)
            if not os.path.exists(out): break
        dump(); work(100)
        os.makedirs(out, 0o700, exist_ok=True)
if plan["fork"]:
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r); plant(os.getpid()); work(200); dump(); work(50); dump(); os._exit(0)
    os.close(w); os.read(r, 1); os.waitpid(child, 0)
if "full" in plan["hazards"]:
    try:
        with open(os.path.join(out, "filler"), "wb", buffering=0) as f:
            while True: f.write(b"f" * 4096)
    except OSError:
        pass
    dump(); work(100); dump()
work(500)
print("alive")
`;

/** A file's identity and content, to see it untouched afterwards (links: their target text). */
function snapshot(path: string): string {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return `link ${readlinkSync(path)}`;
  if (st.isDirectory())
    return `dir ${st.mode.toString(8)} ${readdirSync(path)
      .sort()
      .map((n) => `${n}=${snapshot(join(path, n))}`)
      .join(',')}`;
  return `file ${st.uid} ${(st.mode & 0o7777).toString(8)} ${st.size} ${st.mtimeMs} ${readFileSync(path, 'latin1')}`;
}

describe.skipIf(!captureReady)('the capture library under random settings in a hostile dump folder', () => {
  beforeAll(() => buildLibrary(), 120_000);

  it(`${CASES} cases (seed ${SEED}): the job runs to its end and writes nothing outside its own files`, async () => {
    const rng = new Rng(SEED);
    const seenHazards = new Set<string>();
    for (let i = 0; i < CASES; i++) {
      const c = drawCase(rng);
      const id = `case ${i} (seed ${SEED}): ${JSON.stringify(c)}`;
      const dir = join(work, String(i));
      const out = join(dir, 'dumps');
      const victim = join(dir, 'victim.txt');
      const victimDir = join(dir, 'victim-dir');
      mkdirSync(victimDir, { recursive: true });
      writeFileSync(join(victimDir, 'kept.txt'), 'kept\n');
      writeFileSync(victim, 'precious\n');
      writeFileSync(join(dir, 'job.py'), PROGRAM);
      mkdirSync(out);
      const mounted =
        c.hazards.includes('full') &&
        spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${c.diskKiB}k`, 'tmpfs', out]).status === 0;
      if (c.hazards.includes('full') && !mounted) throw new Error(`${id}: mount -t tmpfs failed`);
      chmodSync(out, c.folderMode);
      if (c.hazards.includes('foreign')) chownSync(victim, 65534, 65534);
      const around = new Map([victim, victimDir, join(dir, 'job.py')].map((p) => [p, snapshot(p)]));
      try {
        const r = spawnSync(
          '/bin/sh',
          [
            '-c',
            'umask 022; LD_PRELOAD="$HEAPLENS_PRELOAD" exec "$@"',
            'sh',
            PYTHONS[0],
            '-W',
            'ignore::DeprecationWarning', // 3.12's fork warning: the threads are checked in capture.test.ts
            join(dir, 'job.py'),
            out,
            victim,
            victimDir,
            JSON.stringify({ hazards: c.hazards, fork: c.fork, dumps: c.dumps }),
          ],
          {
            cwd: dir,
            env: {
              ...process.env,
              LD_PRELOAD: '',
              HEAPLENS_PRELOAD: `${JEMALLOC} ${LIBRARY}`,
              PYTHONMALLOC: 'malloc',
              MALLOC_CONF: `prof:true,prof_prefix:${out}/j${c.conf}`,
              ...c.env,
            },
            encoding: 'utf8',
            timeout: 60_000,
          },
        );
        // the job ran to its end
        expect(r.signal, `${id}\n${r.stderr}`).toBeNull();
        expect(r.status, `${id}\n${r.stderr}`).toBe(0);
        expect(r.stdout, id).toBe('alive\n');
        // nothing on stderr but the library's own lines and jemalloc's; each of ours once per process
        const lines = r.stderr.split('\n').filter((l) => l !== '');
        expect(
          lines.filter((l) => !l.startsWith('heaplens-capture: ') && !l.startsWith('<jemalloc>: ')),
          id,
        ).toEqual([]);
        const ours = lines.filter((l) => l.startsWith('heaplens-capture: '));
        for (const l of new Set(ours))
          expect(ours.filter((x) => x === l).length, `${id}\n${l}`).toBeLessThanOrEqual(c.fork ? 2 : 1);
        // nothing outside the dump folder changed: the link targets, the other user's file, the program
        for (const [p, before] of around) expect(snapshot(p), `${id}: ${p}`).toBe(before);
        expect(readdirSync(dir).sort(), id).toEqual(['dumps', 'job.py', 'victim-dir', 'victim.txt']);
        // in the folder: what was planted is as planted; what is ours is a regular file no one else may write
        const atomic = c.env.HEAPLENS_DUMP_ATOMIC !== '0';
        for (const n of existsSync(out) ? readdirSync(out) : []) {
          const p = join(out, n);
          const st = lstatSync(p);
          if (st.isSymbolicLink()) {
            expect([victim, victimDir], `${id}: ${n}`).toContain(readlinkSync(p));
            continue;
          }
          expect(st.isFile(), `${id}: ${n}`).toBe(true);
          if (st.uid === 65534) {
            // another user's file: never adopted, never written
            expect([st.size, st.mode & 0o777], `${id}: ${n}`).toEqual([0, 0o666]);
            continue;
          }
          expect(st.mode & 0o022, `${id}: ${n} is writable by others`).toBe(0);
          if (n.endsWith('.heap') && atomic) {
            const ck = await checkDump(p);
            expect(ck.complete, `${id}: ${n}: ${ck.problem}`).toBe(true);
            // its table is ours and whole, or absent (a full disk; none asked for); what was planted at its name
            // (a link, the other user's file) stays there, never written
            const side = existsSync(p + '.pyframes') ? lstatSync(p + '.pyframes') : null;
            if (!side || (side.isFile() && side.uid !== 65534))
              expect(['complete', 'missing'], `${id}: ${n}`).toContain(ck.sidecar);
          }
        }
        for (const h of c.hazards) seenHazards.add(h);
        if (c.env.HEAPLENS_DUMP_RSS_STEP || c.env.HEAPLENS_DUMP_CGROUP_FRACTIONS) seenHazards.add('policy');
        if (c.fork) seenHazards.add('fork');
      } finally {
        if (mounted) spawnSync('umount', [out]);
        if (existsSync(out) && statSync(out).isDirectory()) chmodSync(out, 0o700);
      }
    }
    console.log(`capture-fuzz: ${CASES} cases (seed ${SEED}), covering ${[...seenHazards].sort().join(', ')}`);
  }, 600_000);
});
