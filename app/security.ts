// Window hardening, Content-Security-Policy, navigation and network policy of the Electron app.
// Plain functions: main.ts wires them to Electron; app/security.test.ts exercises them without Electron.

export const APP_SCHEME = 'app';
export const APP_HOST = 'bundle';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

/**
 * The renderer's CSP. No remote origin anywhere; workers are same-origin modules; WebAssembly is allowed to
 * compile (the symbolizer) without allowing eval; inline style attributes are needed by Svelte's style: bindings.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self' data: blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "frame-src 'none'",
  "object-src 'none'",
  "media-src 'none'",
  "manifest-src 'none'",
].join('; ');

export interface SecureWebPreferences {
  preload: string;
  contextIsolation: true;
  sandbox: true;
  nodeIntegration: false;
  nodeIntegrationInWorker: false;
  nodeIntegrationInSubFrames: false;
  webSecurity: true;
  allowRunningInsecureContent: false;
  webviewTag: false;
  experimentalFeatures: false;
  navigateOnDragDrop: false;
  spellcheck: false;
  safeDialogs: true;
  devTools: boolean;
}

export interface MainWindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  show: boolean;
  title: string;
  backgroundColor: string;
  webPreferences: SecureWebPreferences;
}

/** BrowserWindow options: 1280×800 by default, every security switch set explicitly (not left to defaults). */
/** The frame an IPC message came from, as Electron's event.senderFrame gives it (null once it is gone). */
export interface SenderFrame {
  url: string;
  parent: unknown;
}

/**
 * IPC is answered only for the app's own top-level page: checked on the frame that sent the message
 * (event.senderFrame), not the window's URL, which an iframe or a navigation in flight does not change.
 */
export function isTrustedSender(frame: SenderFrame | null | undefined, devServer: string | null = null): boolean {
  if (!frame || frame.parent !== null) return false;
  let u: URL;
  try {
    u = new URL(frame.url);
  } catch {
    return false;
  }
  if (`${u.protocol}//${u.host}` === APP_ORIGIN) return true;
  if (devServer === null) return false;
  const d = new URL(devServer);
  return u.protocol === d.protocol && u.host === d.host;
}

export function mainWindowOptions(preloadPath: string, opts: { devTools: boolean; dark: boolean }): MainWindowOptions {
  return {
    width: 1280,
    height: 800,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'heaplens',
    backgroundColor: opts.dark ? '#16181d' : '#ffffff',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: opts.devTools,
    },
  };
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * The network deny-list, as an allow-list: the only requests that may leave the renderer are to the bundled
 * app:// origin, in-memory data:/blob: URLs, devtools (when enabled), and — in development only — the local
 * Vite dev server. Everything else (http, https, ws, ftp, file, other custom schemes) is cancelled.
 */
export function isRequestAllowed(url: string, devServerOrigin: string | null = null): boolean {
  const u = parse(url);
  if (!u) return false;
  switch (u.protocol) {
    case `${APP_SCHEME}:`:
      return u.host === APP_HOST;
    case 'data:':
    case 'blob:':
      return true;
    case 'devtools:':
    case 'chrome-extension:':
      return false;
    case 'http:':
    case 'ws:': {
      if (!devServerOrigin) return false;
      const dev = parse(devServerOrigin);
      if (!dev) return false;
      const loopback = u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]';
      return loopback && u.port === dev.port && u.hostname === dev.hostname;
    }
    default:
      return false;
  }
}

/** In-page navigation is refused except reloads of the app itself (and the dev server in development). */
export function isNavigationAllowed(url: string, devServerOrigin: string | null = null): boolean {
  const u = parse(url);
  if (!u) return false;
  if (u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST) return true;
  if (devServerOrigin) {
    const dev = parse(devServerOrigin);
    return dev !== null && u.origin === dev.origin;
  }
  return false;
}

/** Permission requests (camera, geolocation, notifications, clipboard-read, …): all refused. */
export function isPermissionAllowed(_permission: string): boolean {
  return false;
}

/** Response headers for every app:// response. */
export function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Referrer-Policy': 'no-referrer',
  };
}
