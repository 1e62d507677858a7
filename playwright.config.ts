// Playwright against the built web page (vite preview of dist/renderer) in Debian's Chromium.
// Playwright downloads no browser here: `apt-get install chromium` provides /usr/bin/chromium.
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { freePortSync } from './tools/free-port.ts';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const executablePath = existsSync(chromiumPath) ? chromiumPath : undefined;
// Without it the browser specs are not run at all (Playwright's own advice, `npx playwright install`, downloads a
// browser, which an offline machine cannot): e2e/no-chromium.skip.ts stands in for them as one skipped test whose
// title says what to install. The Electron spec skips itself when it cannot run.
const BROWSER_SPECS = executablePath ? ['e2e/**/*.e2e.ts'] : ['e2e/no-chromium.skip.ts'];

// The suite always starts and tests its own server (this checkout's dist/renderer), never one already listening:
// on a port chosen free at start (kept in HEAPLENS_E2E_PORT so Playwright's workers, which load this config again,
// agree), or on HEAPLENS_E2E_PORT when given — and if that port is taken, Playwright fails loudly instead of
// testing whatever answers there (reuseExistingServer is false). e2e/own-build.e2e.ts checks the page served is
// this build.
process.env.HEAPLENS_E2E_PORT ??= String(freePortSync());
const PORT = Number(process.env.HEAPLENS_E2E_PORT);

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
];

/** The specs whose flows also run through `heaplens open` (the node-engine project). */
const NODE_ENGINE_SPECS = ['suspects', 'notes', 'report', 'first-screen', 'flame'];

export default defineConfig({
  testDir: '.',
  testMatch: [...BROWSER_SPECS, 'e2e-electron/**/*.e2e.ts'],
  outputDir: 'test-results/e2e',
  // one temporary folder per run, removed at the end (tools/test-tmp.ts)
  globalSetup: './tools/test-tmp.ts',
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath, args: CHROMIUM_ARGS },
    trace: 'off',
  },
  projects: [
    { name: 'chromium', testMatch: [...BROWSER_SPECS, 'e2e-electron/**/*.e2e.ts'] },
    // the main flows again through `heaplens open`: the Node engine reads the dumps, the page gets answers
    // (e2e/helpers.ts dropFiles opens the files that way in this project); none without a browser
    { name: 'node-engine', testMatch: executablePath ? NODE_ENGINE_SPECS.map((s) => `e2e/${s}.e2e.ts`) : [] },
  ],
  // the page's server only when there is a browser to test it with
  webServer:
    executablePath === undefined
      ? undefined
      : {
          command: `npx vite preview --port ${PORT} --strictPort`,
          url: `http://127.0.0.1:${PORT}/index.html`,
          reuseExistingServer: false,
          timeout: 60_000,
          stdout: 'ignore',
        },
});
