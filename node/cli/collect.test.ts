// `heaplens collect` in-process on fixtures/oom-job's dumps, into a tarball: every file of the folder in it (listed by
// tar itself), the start the dumps recorded as --since, and the cgroup the dumps name — gone since the fixture was
// made — said in "could not read" rather than failing. The live run on a real kill is
// native-tools/capture/collect-live.test.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCaptured } from './run-captured.js';

const DUMPS = resolve(import.meta.dirname, '../../fixtures/oom-job/dumps');

describe('heaplens collect', () => {
  const work = mkdtempSync(join(tmpdir(), 'heaplens-collect-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('a tarball of the dumps, the kernel log since the recorded start, the logs named; what was missing said', async () => {
    const log = join(work, 'slurm-7.out');
    writeFileSync(log, 'step 431\nKilled\n');
    const out = join(work, 'node1.tar.gz');
    const r = await runCaptured(
      'collect',
      '--dumps',
      DUMPS,
      '--log',
      log,
      '--log',
      join(work, 'absent.log'),
      '--out',
      out,
    );
    expect(r.code, r.err).toBe(0);
    const listed = execFileSync('tar', ['-tzf', out], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l && !l.endsWith('/'));
    const want = readdirSync(DUMPS).map((f) => `node1/dumps/dumps/${f}`);
    expect(listed.filter((l) => l.startsWith('node1/dumps/')).sort()).toEqual(want.sort());
    expect(listed).toContain('node1/logs/slurm-7.out');
    expect(listed).toContain('node1/MANIFEST.txt');
    // start_real_ns 1796157424118402013 of the trainer's first table (the workload's earliest process)
    expect(r.out).toContain("since 2026-12-01T20:37:04.118Z (the job's start recorded with the dumps)");
    expect(r.out).toMatch(/could not read:\n(.*\n)*\s+cgroup \/sys\/fs\/cgroup\/memory\/heaplens-oom-job-28289: gone/);
    expect(r.out).toContain(`${join(work, 'absent.log')}: ENOENT`);
    const manifest = execFileSync('tar', ['-xzOf', out, 'node1/MANIFEST.txt'], { encoding: 'utf8' });
    expect(manifest).toContain('dumps/dumps/: 97 dumps of 4 processes and 97 other files');
  });

  it('refuses an output that exists, and a --since it cannot read, before copying anything', async () => {
    const out = join(work, 'exists.tar.gz');
    writeFileSync(out, '');
    const a = await runCaptured('collect', '--dumps', DUMPS, '--out', out);
    expect(a.code).toBe(2);
    expect(a.err).toContain('already exists');
    const b = await runCaptured('collect', '--dumps', DUMPS, '--since', 'yesterday', '--out', join(work, 'x'));
    expect(b.code).toBe(2);
    expect(b.err).toContain('--since "yesterday": takes a time');
    expect(existsSync(join(work, 'x'))).toBe(false);
  });
});
