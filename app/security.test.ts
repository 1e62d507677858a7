import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  APP_ENTRY,
  CONTENT_SECURITY_POLICY,
  isNavigationAllowed,
  isPermissionAllowed,
  isRequestAllowed,
  mainWindowOptions,
  securityHeaders,
} from './security.js';

describe('window options', () => {
  it('every combination of the inputs keeps the renderer sandboxed; only devTools and the colour follow them', () => {
    const seen = new Set<string>();
    for (const devTools of [false, true]) {
      for (const dark of [false, true]) {
        const o = mainWindowOptions('/x/preload.cjs', { devTools, dark });
        const w = o.webPreferences;
        expect(w.devTools).toBe(devTools);
        expect(w.preload).toBe('/x/preload.cjs');
        // what a renderer compromise could use: no Node, no unsandboxed or cross-context access
        expect([w.contextIsolation, w.sandbox, w.webSecurity]).toEqual([true, true, true]);
        expect([
          w.nodeIntegration,
          w.nodeIntegrationInWorker,
          w.nodeIntegrationInSubFrames,
          w.allowRunningInsecureContent,
          w.webviewTag,
          w.navigateOnDragDrop,
        ]).toEqual([false, false, false, false, false, false]);
        seen.add(o.backgroundColor);
      }
    }
    expect(seen.size).toBe(2); // light and dark differ (no white flash in dark mode)
  });
});

describe('the window the running main process opens', () => {
  it('is sandboxed with no Node: dist/app/main.js run under Node with a recording stand-in for electron', () => {
    // the Electron binary cannot be had on every machine; the main process's own code runs anyway, up to the
    // BrowserWindow it creates, whose options the stand-in prints (app/test-support/fake-electron.mjs)
    const root = resolve(import.meta.dirname, '..');
    const main = resolve(root, 'dist', 'app', 'main.js');
    expect(existsSync(main), `${main} is missing: npm test builds it (tsc -p app/tsconfig.json)`).toBe(true);
    const r = spawnSync(process.execPath, ['--import', './app/test-support/electron-hook.mjs', main], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('window-options: '));
    expect(line, r.stdout + r.stderr).toBeDefined();
    const o = JSON.parse(line!.slice('window-options: '.length)) as {
      show: boolean;
      webPreferences: Record<string, unknown>;
    };
    const w = o.webPreferences;
    expect({
      contextIsolation: w.contextIsolation,
      sandbox: w.sandbox,
      webSecurity: w.webSecurity,
      nodeIntegration: w.nodeIntegration,
      nodeIntegrationInWorker: w.nodeIntegrationInWorker,
      nodeIntegrationInSubFrames: w.nodeIntegrationInSubFrames,
      allowRunningInsecureContent: w.allowRunningInsecureContent,
      webviewTag: w.webviewTag,
      navigateOnDragDrop: w.navigateOnDragDrop,
    }).toEqual({
      contextIsolation: true,
      sandbox: true,
      webSecurity: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
    });
    expect(existsSync(String(w.preload)), String(w.preload)).toBe(true);
    expect(o.show).toBe(false); // shown on ready-to-show: no white flash
  });
});

describe('CSP', () => {
  it('no directive names a remote origin, eval or a wildcard (Chromium enforcing it: e2e/csp.e2e.ts)', () => {
    const directives = new Map(
      CONTENT_SECURITY_POLICY.split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v] as const),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    for (const [name, sources] of directives) {
      for (const src of sources)
        expect(
          ["'none'", "'self'", "'wasm-unsafe-eval'", "'unsafe-inline'", 'data:', 'blob:'],
          `${name} ${src}`,
        ).toContain(src);
      if (name !== 'style-src') expect(sources, name).not.toContain("'unsafe-inline'");
    }
    expect(securityHeaders()['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
  });
});

describe('network deny-list', () => {
  it('allows the bundle, data: and blob: only', () => {
    expect(isRequestAllowed(APP_ENTRY)).toBe(true);
    expect(isRequestAllowed('app://bundle/assets/index-abc.js')).toBe(true);
    expect(isRequestAllowed('data:text/plain,hi')).toBe(true);
    expect(isRequestAllowed('blob:app://bundle/1234')).toBe(true);
  });
  it.each([
    'https://example.com/x.js',
    'http://127.0.0.1:5173/',
    'ws://localhost:5173/',
    'file:///etc/passwd',
    'app://other/index.html',
    'ftp://x/y',
    'chrome-extension://abc/x',
    'devtools://devtools/bundled/x',
    'not a url',
  ])('denies %s', (url) => {
    expect(isRequestAllowed(url)).toBe(false);
  });
  it('allows the dev server only on its exact loopback host and port', () => {
    const dev = 'http://127.0.0.1:5173';
    expect(isRequestAllowed('http://127.0.0.1:5173/src/main.ts', dev)).toBe(true);
    expect(isRequestAllowed('ws://127.0.0.1:5173/', dev)).toBe(true);
    expect(isRequestAllowed('http://127.0.0.1:8080/', dev)).toBe(false);
    expect(isRequestAllowed('https://127.0.0.1:5173/', dev)).toBe(false);
    expect(isRequestAllowed('http://evil.com:5173/', dev)).toBe(false);
  });
});

describe('navigation and permissions', () => {
  it('keeps the window on the app', () => {
    expect(isNavigationAllowed('app://bundle/index.html')).toBe(true);
    expect(isNavigationAllowed('https://example.com/')).toBe(false);
    expect(isNavigationAllowed('file:///tmp/x.html')).toBe(false);
    expect(isNavigationAllowed('http://127.0.0.1:5173/', 'http://127.0.0.1:5173')).toBe(true);
  });
  it('refuses every permission', () => {
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal'])
      expect(isPermissionAllowed(p)).toBe(false);
  });
});
