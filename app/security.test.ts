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
