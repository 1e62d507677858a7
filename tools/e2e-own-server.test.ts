// Issue 23: with another checkout's server listening on the default port (4173), the e2e configuration still
// starts and tests its own build. Runs the real Playwright config on e2e/own-build.e2e.ts (no browser needed: it
// compares the served page with dist/renderer/index.html) while a foreign server answers on 4173 with another page.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const BUILT = resolve(ROOT, 'dist', 'renderer', 'index.html');

describe('e2e configuration beside a foreign server on the default port', () => {
  let foreign: Server | null = null;
  let foreignHits = 0;
  beforeAll(async () => {
    foreign = createServer((_req, res) => {
      foreignHits++;
      res.end('<!doctype html><title>another checkout</title>');
    });
    await new Promise<void>((ok) => {
      foreign!.once('error', () => {
        // 4173 is taken already: whatever listens there is exactly the foreign server this test is about
        foreign = null;
        ok();
      });
      foreign!.listen(4173, '127.0.0.1', () => ok());
    });
  });
  afterAll(() => new Promise<void>((ok) => (foreign ? foreign.close(() => ok()) : ok())));

  it("tests this checkout's build, on a port of its own", () => {
    expect(existsSync(BUILT), `${BUILT} is missing: npm test builds it (vite build) before the unit tests`).toBe(true);
    const env = { ...process.env };
    delete env.HEAPLENS_E2E_PORT;
    delete env.CI;
    const r = spawnSync(
      process.execPath,
      [
        resolve(ROOT, 'node_modules', '@playwright', 'test', 'cli.js'),
        'test',
        'e2e/own-build.e2e.ts',
        '--reporter=line',
      ],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/1 passed/);
    expect(foreignHits).toBe(0);
  }, 150_000);
});
