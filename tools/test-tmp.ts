// Every temporary file a test run makes goes into one folder, removed when the run ends: the unit suite (vitest
// globalSetup) and the end-to-end suite (Playwright globalSetup) point TMPDIR at a fresh folder of their own, which
// os.tmpdir() in the tests, their workers and every child process (CLI runs, compilers, Chromium profiles) then
// use. A full run used to leave ~58 folders (39 MiB) in /tmp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'heaplens-tests-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  // the built CLI's V8 code cache (node/cli/code-cache.ts) in the run's folder too: hermetic, and the CLI runs after
  // the first of each command use an accepted cache, as a user's do
  const cacheBefore = process.env.HEAPLENS_CODE_CACHE;
  process.env.HEAPLENS_CODE_CACHE ??= join(dir, 'code-cache');
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (cacheBefore === undefined) delete process.env.HEAPLENS_CODE_CACHE;
    else process.env.HEAPLENS_CODE_CACHE = cacheBefore;
    if (process.env.HEAPLENS_KEEP_TEST_TMP) console.log(`test files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
