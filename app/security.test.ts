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
  it('sets every hardening switch and 1280×800', () => {
    const o = mainWindowOptions('/x/preload.cjs', { devTools: false, dark: false });
    expect(o.width).toBe(1280);
    expect(o.height).toBe(800);
    expect(o.webPreferences).toMatchObject({
      preload: '/x/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      devTools: false,
    });
  });
});

describe('CSP', () => {
  it('allows no remote origin and no eval', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:/);
    expect(CONTENT_SECURITY_POLICY).not.toContain("'unsafe-eval'");
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
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
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) expect(isPermissionAllowed(p)).toBe(false);
  });
});
