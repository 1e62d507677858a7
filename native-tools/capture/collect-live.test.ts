// `heaplens capture` then `heaplens collect` on a real OOM kill (issue 48): a leaking Python job run by capture in a
// memory cgroup the test makes (root), killed by the kernel; collect, run afterwards as on the node, gathers the dumps,
// the kernel's report of the kill and the cgroup's files; postmortem on the collection alone names the kill. What
// must come out is the kernel's (its "Killed process <pid>" line, read by the test from dmesg itself) and the limit
// the test set.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLibrary, captureReady, ownMemoryCgroup, PYTHONS, root } from './test-support.js';

const MIB = 1024 * 1024;
const cg = captureReady ? ownMemoryCgroup('collect') : null;
const skip = !captureReady
  ? 'needs gcc, libjemalloc2 and CPython 3.11–3.13'
  : cg === null
    ? 'needs root and a memory cgroup to create one'
    : existsSync(join(root, 'dist/node/cli/bundle/heaplens.cjs'))
      ? ''
      : 'the CLI is not built (npm run build)';
if (skip) console.warn(`collect-live.test: SKIPPED (${skip})`);

describe.skipIf(skip !== '')('capture, an OOM kill, collect, postmortem on the collection', () => {
  const work = mkdtempSync(join(tmpdir(), 'heaplens-collect-live-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const LIMIT = 200 * MIB;

  it('collect brings the kill, the cgroup and the dumps; postmortem names the killed process', async () => {
    buildLibrary();
    const c = cg!;
    const bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(PYTHONS[0], join(bin, 'python'));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, COLUMNS: '100' };
    delete env.MALLOC_CONF;
    delete env.LD_PRELOAD;
    // 1 MiB every 20 ms, written, kept: the kernel kills it within a few seconds
    writeFileSync(
      join(work, 'leak.py'),
      'import time\nkeep = []\nwhile True:\n    keep.append(bytearray(1 << 20))  # the leak\n    time.sleep(0.02)\n',
    );
    const heaplens = join(root, 'bin/heaplens.js');
    mkdirSync(c.dir, { recursive: true });
    try {
      writeFileSync(join(c.dir, c.limitFile), String(LIMIT));
      // the shell moves itself into the cgroup, then becomes the capture command (and the job its child)
      const child = spawn(
        '/bin/sh',
        [
          '-c',
          `echo $$ > ${c.dir}/cgroup.procs && exec "$0" "$1" capture --out dumps -- python leak.py`,
          process.execPath,
          heaplens,
        ],
        { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((res) => child.on('exit', (cd) => res(cd)));
      expect(code, stderr).toBe(137);
      expect(stderr).toContain('heaplens: the job was killed by SIGKILL;');
      expect(stderr).toContain("at 80%, 90%, 95% of the cgroup's 200 MiB");
      expect(stderr).toMatch(/none at exit: the job was killed/);

      const dumps = readdirSync(join(work, 'dumps')).filter((f) => f.endsWith('.heap'));
      const pid = Number(dumps[0].split('.')[1]);
      const killed = spawnSync('dmesg', [], { encoding: 'utf8' })
        .stdout.split('\n')
        .find((l) => l.includes(`Killed process ${pid} (`));
      expect(killed, `dmesg has no "Killed process ${pid}"`).toBeDefined();

      const col = spawnSync(process.execPath, [heaplens, 'collect', '--dumps', 'dumps', '--out', 'node1'], {
        cwd: work,
        env,
        encoding: 'utf8',
      });
      expect(col.status, col.stderr + col.stdout).toBe(0);
      expect(col.stdout).toContain(`heaplens: collected into ${join(work, 'node1')}:`);
      const got = join(work, 'node1');
      // the kill's own line, in the collected kernel log
      expect(readFileSync(join(got, 'kernel.log'), 'utf8')).toContain(killed!.trim());
      // the limit the test set, from the cgroup's own file
      expect(readFileSync(join(got, 'cgroup', c.limitFile), 'utf8').trim()).toBe(String(LIMIT));
      expect(
        readdirSync(join(got, 'dumps', 'dumps'))
          .filter((f) => f.endsWith('.heap'))
          .sort(),
      ).toEqual(dumps.sort());
      expect(readFileSync(join(got, 'MANIFEST.txt'), 'utf8')).toMatch(/^kernel\.log: \d+ lines of dmesg since /m);

      const pm = spawnSync(process.execPath, [heaplens, 'postmortem', 'node1'], { cwd: work, env, encoding: 'utf8' });
      expect(pm.status, pm.stderr).toBe(0);
      expect(pm.stdout).not.toContain('No process of the job was killed');
      expect(pm.stdout).toMatch(new RegExp(`\\b${pid}\\b[^\\n]*\\b(killed|OOM)`, 'i'));
    } finally {
      spawnSync('sh', ['-c', `cat ${c.dir}/cgroup.procs | xargs -r kill -9; sleep 0.1; rmdir ${c.dir}`]);
    }
  }, 120_000);
});
