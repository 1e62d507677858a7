// Runs the CLI's one-file bundle (tools/bundle-cli.mjs) through V8's code cache, as `bin/heaplens.js` does. Node 20
// has no compile cache of its own (module.enableCompileCache is Node 22), and a short command (`top` of a 1 MB dump)
// spent ~40 ms of its 0.32 s parsing and compiling our modules on every run. V8 accepts a cache only for the same
// V8 version, flags and source length; the file is also named by a hash of the bundle's text and Node's version,
// so a rebuilt bundle of the same length never meets an old cache. One cache per command: each holds the
// functions that command compiled (V8 adds the lazily compiled ones when the cache is made after the run).

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Script } from 'node:vm';
import { applyCliV8Flags, CLI_V8_FLAGS } from './v8-flags.js';

/** `HEAPLENS_CODE_CACHE`: `0`/`off` for none, a folder, or by default `$XDG_CACHE_HOME/heaplens/code`. */
export function defaultCodeCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env.HEAPLENS_CODE_CACHE;
  if (v === '0' || v === 'off') return null;
  if (v) return resolve(v);
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'heaplens', 'code');
}

/** What became of the cache in one run (for tests and `HEAPLENS_CODE_CACHE_DEBUG`). */
export type CacheUse = 'off' | 'none' | 'accepted' | 'rejected';

export interface CachedRun {
  use: CacheUse;
  /** the cache file of this bundle and command (null when off) */
  file: string | null;
  /** the bundle's `module.exports` */
  exports: unknown;
  /**
   * Writes the cache when there was none or V8 rejected it (call after the run, so it holds the functions the
   * run compiled). Never throws: without a cache the CLI is only slower.
   */
  save(): void;
}

/** A command name as part of a file name; anything else shares one cache. */
function commandKey(command: string | undefined): string {
  return command !== undefined && /^[a-z][a-z-]{0,30}$/.test(command) ? command : 'other';
}

/**
 * Compiles and runs `bundle` (a CommonJS file) with the code cache of `command` in `cacheDir` (null: none), as
 * Node would run it with `require`: its own `require`, `module`, `__filename` and `__dirname`.
 */
export function runCachedBundle(bundle: string, cacheDir: string | null, command: string | undefined): CachedRun {
  // the flags are part of the cache's validity: set before the compile, as the cache was made under them
  applyCliV8Flags();
  const source = readFileSync(bundle, 'utf8');
  const key = createHash('sha256')
    .update(`${process.version} ${process.arch} ${CLI_V8_FLAGS}\n`)
    .update(source)
    .digest('hex')
    .slice(0, 16);
  const name = commandKey(command);
  const file = cacheDir === null ? null : join(cacheDir, `${name}-${key}.v8cache`);
  let cachedData: Buffer | undefined;
  if (file !== null) {
    try {
      cachedData = readFileSync(file);
    } catch {
      cachedData = undefined; // none yet (or unreadable): compiled from source, saved after the run
    }
  }
  const script = new Script(Module.wrap(source), { filename: bundle, cachedData });
  const use: CacheUse =
    file === null ? 'off' : !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...a: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return {
    use,
    file,
    exports: module.exports,
    save() {
      if (file === null || use === 'accepted') return;
      try {
        const data = script.createCachedData();
        mkdirSync(dirname(file), { recursive: true });
        // written whole then renamed: a concurrent run reads either no cache or a complete one
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, data);
        renameSync(tmp, file);
        // earlier builds' caches of this command are dead weight
        for (const f of readdirSync(dirname(file)))
          if (f.startsWith(`${name}-`) && f.endsWith('.v8cache') && join(dirname(file), f) !== file)
            rmSync(join(dirname(file), f), { force: true });
      } catch {
        // a read-only or full cache folder: the next run compiles again
      }
    },
  };
}

/** What `bin/heaplens.js` calls: runs the CLI bundle through the cache, saved when the process exits. */
export function runCli(bundle: string): void {
  const run = runCachedBundle(bundle, defaultCodeCacheDir(), process.argv[2]);
  process.once('exit', () => {
    run.save();
    if (process.env.HEAPLENS_CODE_CACHE_DEBUG) process.stderr.write(`code cache: ${run.use} ${run.file ?? ''}\n`);
  });
}
