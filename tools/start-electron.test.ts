// `npm start` without a reachable Electron download or on too old a Node (issue 13, item 12): the cause
// and the fallback in plain words, exit 1, no stack.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = resolve(import.meta.dirname, 'start-electron.mjs');
const run = (env: Record<string, string>) =>
  spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });

describe('npm start wrapper', () => {
  it('no Electron binary and the download fails: the cause and `npm run web`, no stack', () => {
    // an electron package whose install.js fails the way @electron/get does offline
    const pkg = mkdtempSync(join(tmpdir(), 'heaplens-fake-electron-'));
    writeFileSync(
      join(pkg, 'install.js'),
      "const e = new TypeError('fetch failed'); e.cause = new Error('getaddrinfo ENOTFOUND github.com'); console.error(e); console.error('  [cause]: Error: getaddrinfo ENOTFOUND github.com'); process.exit(1);",
    );
    const r = run({ HEAPLENS_ELECTRON_DIR: pkg, HEAPLENS_NODE_VERSION_FOR_TEST: 'v22.12.0' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/could not download Electron: .*(ENOTFOUND github\.com|fetch failed)/);
    expect(r.stderr).toContain('npm run web');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('--preflight (what `npm start` runs before it builds) fails in one line before any build on too old a Node', () => {
    const r = spawnSync(process.execPath, [script, '--preflight'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        HEAPLENS_ELECTRON_DIR: mkdtempSync(join(tmpdir(), 'heaplens-no-electron-')),
        HEAPLENS_NODE_VERSION_FOR_TEST: 'v20.19.2',
      },
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(
      /^heaplens: cannot start the desktop app: .*needs Node ≥ 22\.12.*; instead|^heaplens: cannot start the desktop app: /,
    );
    expect(r.stderr).toContain('npm run web');
    const start = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', 'package.json'), 'utf8')).scripts
      .start as string;
    // the check comes before `vite build`, so a machine that cannot run the app is told at once
    expect(start.indexOf('start-electron.mjs --preflight')).toBeGreaterThanOrEqual(0);
    expect(start.indexOf('start-electron.mjs --preflight')).toBeLessThan(start.indexOf('vite build'));
  });

  it('no binary and Node older than 22.12: says what Electron 45 needs and what works on this Node', () => {
    const r = run({
      HEAPLENS_ELECTRON_DIR: mkdtempSync(join(tmpdir(), 'heaplens-no-electron-')),
      HEAPLENS_NODE_VERSION_FOR_TEST: 'v20.19.2',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('needs Node ≥ 22.12; this is Node 20.19.2');
    expect(r.stderr).toContain('npm run web');
  });
});
