// The README's capture section run as a newcomer runs it (issue 48): its `node bin/heaplens.js capture …` and
// `… growth …` lines, as written, on docs/examples/train.py under a real CPython with jemalloc and the library, in a
// folder of the test's own (the checkout's relative paths made absolute, `python` on PATH). What must come out is
// the workload's: the line it marks "# the leak", and a dump count equal to the files jemalloc left. Also: the
// job's exit code and a SIGTERM sent to the wrapper reach the job.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLibrary, captureReady, JEMALLOC, PYTHONS, root } from './test-support.js';

if (!captureReady)
  console.warn(`readme-capture.test: SKIPPED (needs gcc, ${JEMALLOC} from libjemalloc2, and CPython 3.11–3.13)`);

const BUNDLE = join(root, 'dist/node/cli/bundle/heaplens.cjs');
const SCRIPT = join(root, 'docs/examples/train.py');

/** The commands of the README's code block that holds `heaplens.js capture`, comments dropped, split into words. */
function readmeCaptureCommands(): string[][] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = readme
    .split('```')
    .filter((_, i) => i % 2 === 1)
    .find((b) => b.includes('bin/heaplens.js capture'));
  if (!block) throw new Error('README.md has no code block with `node bin/heaplens.js capture`');
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l.startsWith('node bin/heaplens.js '))
    .map((l) => l.split(/\s+/));
}

describe.skipIf(!captureReady)("the README's capture section, as written", () => {
  const work = mkdtempSync(join(tmpdir(), 'heaplens-readme-capture-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  // `python` as a newcomer has it: the first supported interpreter found, first on PATH
  const bin = join(work, 'bin');
  mkdirSync(bin);
  if (PYTHONS.length > 0) symlinkSync(PYTHONS[0], join(bin, 'python'));
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, COLUMNS: '100' };
  delete env.MALLOC_CONF;
  delete env.LD_PRELOAD;

  /** One README command in the test's folder: the checkout's relative paths (bin/…, docs/…) made absolute. */
  const runLine = (words: string[]) => {
    const argv = words.map((w) =>
      w.includes('/') && !w.startsWith('-') && existsSync(join(root, w)) ? join(root, w) : w,
    );
    expect(argv[0]).toBe('node');
    return spawnSync(process.execPath, argv.slice(1), { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
  };
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(root, 'bin/heaplens.js'), ...args], { cwd: work, env, encoding: 'utf8' });

  it('the CLI is built (npm test builds first)', () => {
    expect(existsSync(BUNDLE), `${BUNDLE} is missing: run npm run build`).toBe(true);
    buildLibrary();
  });

  it('capture writes a series of dumps, says where and how many; growth names the leaking line', () => {
    const commands = readmeCaptureCommands();
    const capture = commands.find((c) => c[2] === 'capture');
    const growth = commands.find((c) => c[2] === 'growth');
    expect(capture, 'a capture line').toBeDefined();
    expect(growth, 'a growth line').toBeDefined();

    const c = runLine(capture!);
    expect(c.status, c.stderr).toBe(0);
    // the workload's own last line reaches the terminal
    expect(c.stdout).toContain('trained 100 steps, kept 100 records');
    const out = capture![capture!.indexOf('--out') + 1];
    const dir = join(work, out);
    const dumps = readdirSync(dir).filter((f) => /\.heap$/.test(f));
    expect(c.stderr).toContain(`heaplens: dumps go to ${dir}: a dump every 64 MiB of RSS growth`);
    expect(c.stderr).toContain(
      `heaplens: the job exited with 0; ${dumps.length} dumps of 1 process in ${dir}, 1 at exit`,
    );
    // 400 MiB kept over ~5 s: a dump per 64 MiB of growth (at most one a second), the interval ones, one at exit
    expect(dumps.length).toBeGreaterThanOrEqual(4);
    expect(dumps.filter((f) => f.endsWith('.f.heap'))).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.endsWith('.pyframes'))).toHaveLength(dumps.length);

    const g = runLine(growth!);
    expect(g.status, g.stderr).toBe(0);
    const leakLine =
      readFileSync(SCRIPT, 'utf8')
        .split('\n')
        .findIndex((l) => /\S.*# the leak$/.test(l)) + 1;
    expect(leakLine).toBeGreaterThan(0);
    // the first suspect: its pattern, then (next line) its stack, leaf first
    const lines = g.stdout.split('\n');
    const first = lines.findIndex((l) => /^\s+1\s/.test(l));
    expect(lines[first]).toMatch(/\bsteady\b/);
    // CPython 3.11+ names the method by its qualified name; 3.9/3.10 frames carry the bare function name only
    // (native-tools/capture/README.md)
    expect(lines[first + 1].trim()).toMatch(
      new RegExp(`^(MetricsLog\\.)?record \\(train\\.py:${leakLine}\\) ← train_step`),
    );
  }, 180_000);

  it("the job's exit code is the command's; a SIGTERM to the wrapper reaches the job (128 + 15)", () => {
    const code = cli('capture', '--out', 'exit3', '--', 'python', '-c', 'import sys; sys.exit(3)');
    expect(code.status, code.stderr).toBe(3);
    expect(code.stderr).toMatch(/the job exited with 3; 1 dumps? of 1 process/);

    const term = cli(
      'capture',
      '--out',
      'term',
      '--',
      'python',
      '-c',
      'import os, signal, time\nos.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(30)\nprint("not reached")',
    );
    expect(term.status, term.stderr).toBe(143);
    expect(term.stdout).not.toContain('not reached');
    expect(term.stderr).toContain('the job was killed by SIGTERM');

    // a folder holding an earlier run's dumps is refused before anything runs
    const again = cli('capture', '--out', 'exit3', '--', 'python', '-c', 'print("ran")');
    expect(again.status).toBe(2);
    expect(again.stdout).not.toContain('ran');
    expect(again.stderr).toContain('already holds 1 dump of an earlier run');
  }, 60_000);
});
