// The CPython interpreters a test can run, every distinct build of each supported minor version, found the way a user's machine has
// them: HEAPLENS_TEST_PYTHONS (a colon-separated list) first, else each pyenv version ($PYENV_ROOT, else
// ~/.pyenv), else `python3.X` on PATH. Versions not found are named, so a test that covers fewer says so.
// Other minor versions (the ones the capture library must refuse) are found the same way on request.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { spawnSync } from 'node:child_process';

/** the versions the capture library reads Python frames of (native-tools/capture/py_offsets.h) */
export const SUPPORTED_MINORS = ['3.9', '3.10', '3.11', '3.12', '3.13'] as const;

export interface FoundPythons {
  /** every distinct interpreter found per minor version, in the order of the minors asked for */
  found: { minor: string; path: string }[];
  /** minor versions with no interpreter on this machine */
  missing: string[];
}

function minorOf(path: string): string | null {
  const r = spawnSync(path, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return r.status === 0 ? r.stdout.trim() : null;
}

function candidates(minor: string): string[] {
  const out: string[] = [];
  const pyenv = process.env.PYENV_ROOT ?? join(homedir(), '.pyenv');
  const versions = join(pyenv, 'versions');
  if (existsSync(versions))
    for (const v of readdirSync(versions).sort().reverse())
      if (v === minor || v.startsWith(minor + '.')) out.push(join(versions, v, 'bin', `python${minor}`));
  // pyenv's shims are scripts that run one of the versions above: not a build of their own
  for (const dir of (process.env.PATH ?? '').split(delimiter))
    if (dir && !/[/]shims$/.test(dir)) out.push(join(dir, `python${minor}`));
  return out;
}

export function findPythons(minors: readonly string[] = SUPPORTED_MINORS): FoundPythons {
  const env = process.env.HEAPLENS_TEST_PYTHONS;
  const found: { minor: string; path: string }[] = [];
  if (env) {
    for (const path of env.split(':').filter(Boolean)) {
      const minor = existsSync(path) ? minorOf(path) : null;
      if (minor && minors.includes(minor) && !found.some((f) => f.minor === minor)) found.push({ minor, path });
    }
  } else {
    for (const minor of minors) {
      // every distinct build of the minor (a pyenv build and the distribution's differ in configure flags)
      const seen = new Set<string>();
      for (const p of candidates(minor)) {
        if (!existsSync(p)) continue;
        const real = realpathSync(p);
        if (seen.has(real) || minorOf(p) !== minor) continue;
        seen.add(real);
        found.push({ minor, path: p });
      }
    }
  }
  return { found, missing: minors.filter((m) => !found.some((f) => f.minor === m)) };
}
