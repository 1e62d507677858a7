// The CLI's code cache (code-cache.ts): a cache V8 accepts on the second run, never one made from another bundle
// (even of the same length, which V8's own check cannot tell apart), a damaged cache rejected and rewritten, a
// folder that cannot be written costing nothing but speed; and the built CLI's output the same with the cache
// accepted as with none, packages loaded on demand included (xz, zstd, bzip2 readers).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultCodeCacheDir } from './code-cache.js';

const root = resolve(import.meta.dirname, '..', '..');
const built = existsSync(resolve(root, 'dist/node/cli/bundle/heaplens.cjs'));
if (!built) console.warn('code-cache.test: skipped but for the folder names, dist/ is not built (npm run build)');

interface Run {
  use: string;
  file: string | null;
  exports: Record<string, unknown>;
}

/**
 * runCachedBundle in a process of its own, then its save(): in this one V8's in-memory compilation cache would
 * answer a second compile of the same source and never look at the cached data. The built module, as
 * bin/heaplens.js runs it.
 */
function runCachedBundle(bundle: string, cacheDir: string | null, command: string): Run {
  const lib = pathToFileURL(resolve(root, 'dist/node/cli/code-cache.js')).href;
  const code = `const m = await import(${JSON.stringify(lib)}); const r = m.runCachedBundle(...JSON.parse(process.argv[1])); r.save(); console.log(JSON.stringify({ use: r.use, file: r.file, exports: r.exports }));`;
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', code, JSON.stringify([bundle, cacheDir, command])],
    {
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Run;
}

function bundleWith(dir: string, answer: number): string {
  const file = join(dir, 'bundle.cjs');
  // a function body V8 compiles lazily (called below) as well as the top level
  writeFileSync(
    file,
    `function lazy(n) { return n * 2; }\nmodule.exports = { answer: lazy(${answer / 2}), file: __filename, dir: __dirname, sep: require('node:path').sep };\n`,
  );
  return file;
}

describe.skipIf(!built)('runCachedBundle', () => {
  it('runs the bundle as a CommonJS module, then from an accepted cache', () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    const bundle = bundleWith(dir, 42);
    const cache = join(dir, 'cache');
    const first = runCachedBundle(bundle, cache, 'top');
    expect(first.use).toBe('none');
    expect(first.exports).toEqual({ answer: 42, file: bundle, dir, sep: '/' });
    expect(readdirSync(cache)).toEqual([first.file!.slice(cache.length + 1)]);
    const second = runCachedBundle(bundle, cache, 'top');
    expect(second.use).toBe('accepted');
    expect(second.file).toBe(first.file);
    expect(second.exports).toEqual(first.exports);
  });

  it('never takes the cache of another bundle of the same length, and drops it once replaced', () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    const cache = join(dir, 'cache');
    runCachedBundle(bundleWith(dir, 42), cache, 'top');
    // same length, other code: V8's check (length, version, flags) would accept a's cache for it
    const b = runCachedBundle(bundleWith(dir, 44), cache, 'top');
    expect(b.use).toBe('none');
    expect(b.exports).toMatchObject({ answer: 44 });
    expect(readdirSync(cache)).toEqual([b.file!.slice(cache.length + 1)]);
  });

  it('keeps one cache per command', () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    const bundle = bundleWith(dir, 42);
    const cache = join(dir, 'cache');
    runCachedBundle(bundle, cache, 'top');
    expect(runCachedBundle(bundle, cache, 'summary').use).toBe('none');
    const odd = runCachedBundle(bundle, cache, '../../etc/passwd');
    expect(odd.file).toBe(join(cache, odd.file!.slice(cache.length + 1)));
    expect(odd.file!.slice(cache.length + 1)).toMatch(/^other-[0-9a-f]{16}\.v8cache$/);
    expect(runCachedBundle(bundle, cache, 'top').use).toBe('accepted');
    expect(runCachedBundle(bundle, cache, 'summary').use).toBe('accepted');
  });

  it('rejects a damaged cache, runs from source and writes it again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    const bundle = bundleWith(dir, 42);
    const cache = join(dir, 'cache');
    const first = runCachedBundle(bundle, cache, 'top');
    writeFileSync(first.file!, Buffer.alloc(200, 0x78));
    const damaged = runCachedBundle(bundle, cache, 'top');
    expect(damaged.use).toBe('rejected');
    expect(damaged.exports).toMatchObject({ answer: 42 });
    expect(readFileSync(first.file!).length).toBeGreaterThan(200);
    expect(runCachedBundle(bundle, cache, 'top').use).toBe('accepted');
  });

  it('costs only speed when the folder cannot be written, and is off on request', () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    const bundle = bundleWith(dir, 42);
    // a folder inside a file: mkdir fails
    const blocked = join(bundle, 'cache');
    // (save() ran in the child: a throw would have failed it)
    expect(runCachedBundle(bundle, blocked, 'top').use).toBe('none');
    expect(runCachedBundle(bundle, blocked, 'top').use).toBe('none');
    const off = runCachedBundle(bundle, null, 'top');
    expect(off.use).toBe('off');
    expect(off.file).toBeNull();
    expect(off.exports).toMatchObject({ answer: 42 });
  });
});

describe('defaultCodeCacheDir', () => {
  it('is off on request, else the folder named or under the XDG cache', () => {
    expect(defaultCodeCacheDir({ HEAPLENS_CODE_CACHE: '0' })).toBeNull();
    expect(defaultCodeCacheDir({ HEAPLENS_CODE_CACHE: 'off' })).toBeNull();
    expect(defaultCodeCacheDir({ HEAPLENS_CODE_CACHE: '/a/b' })).toBe('/a/b');
    expect(defaultCodeCacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/heaplens/code');
  });
});

describe.skipIf(!built)('the built CLI through its code cache', () => {
  const cli = (cache: string, ...args: string[]) => {
    const r = spawnSync(process.execPath, [join(root, 'bin/heaplens.js'), ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, HEAPLENS_CODE_CACHE: cache, HEAPLENS_CODE_CACHE_DEBUG: '1' },
      timeout: 60_000,
    });
    const debug = /^code cache: (\S+).*\n/m.exec(r.stderr);
    return { out: r.stdout, err: r.stderr.replace(/^code cache: .*\n/m, ''), status: r.status, use: debug?.[1] };
  };

  it.each([
    ['top', 'fixtures/jemalloc/job', '-n', '5'],
    // the xz, zstd and bzip2 readers are packages loaded when a file needs them
    ['summary', 'fixtures/compressed'],
    ['top', 'fixtures/compressed', '-n', '3', '--no-symbols', '--json'],
  ])('%s %s: the same output with the cache accepted as without one', (...args) => {
    const cache = mkdtempSync(join(tmpdir(), 'code-cache-cli-'));
    const off = cli('0', ...args);
    expect(off.use).toBe('off');
    const first = cli(cache, ...args);
    expect(first.use).toBe('none');
    const second = cli(cache, ...args);
    expect(second.use).toBe('accepted');
    for (const r of [first, second]) {
      expect(r.status).toBe(off.status);
      expect(r.out).toBe(off.out);
      expect(r.err).toBe(off.err);
    }
    expect(off.status).toBe(0);
    expect(off.out.length).toBeGreaterThan(100);
  });
});
