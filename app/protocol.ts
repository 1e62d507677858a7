// The app:// protocol: serves files of the built renderer (dist/renderer) and nothing else.
// Workers and WebAssembly need a real origin (they fail over file://), hence a privileged custom scheme.

import path from 'node:path';
import { APP_HOST, APP_SCHEME, securityHeaders } from './security.js';

/** Options for protocol.registerSchemesAsPrivileged (call before app 'ready'). */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: {
    standard: true,
    secure: true,
    supportFetchAPI: true,
    stream: true,
    corsEnabled: false,
    allowServiceWorkers: false,
    bypassCSP: false,
    codeCache: true,
  },
} as const;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.heap': 'application/octet-stream',
  '.gz': 'application/gzip',
};

export function mimeTypeFor(filePath: string): string {
  return MIME[path.extname(filePath).toLowerCase()] ?? 'application/octet-stream';
}

export type AppRequestResolution =
  { ok: true; filePath: string; mimeType: string } | { ok: false; status: 400 | 403 | 404 | 405; reason: string };

/**
 * Maps an app:// URL to a file under `rootDir` (absolute). Rejects other hosts, non-GET methods, encoded
 * separators, NUL bytes and anything that would escape the root (`..`, absolute paths, drive letters).
 */
export function resolveAppRequest(url: string, rootDir: string, method = 'GET'): AppRequestResolution {
  if (method !== 'GET' && method !== 'HEAD') return { ok: false, status: 405, reason: `method ${method}` };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, status: 400, reason: 'bad URL' };
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST)
    return { ok: false, status: 403, reason: 'foreign origin' };
  const raw = u.pathname;
  if (/%2f|%5c|%00/i.test(raw)) return { ok: false, status: 400, reason: 'encoded separator' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return { ok: false, status: 400, reason: 'bad escape' };
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { ok: false, status: 400, reason: 'bad character' };
  let rel = decoded.replace(/^\/+/, '');
  if (rel === '' || rel.endsWith('/')) rel += 'index.html';
  const segments = rel.split('/');
  if (segments.some((s) => s === '..' || s === '.' || s === '' || /^[a-zA-Z]:$/.test(s))) {
    return { ok: false, status: 403, reason: 'path escapes root' };
  }
  const root = path.resolve(rootDir);
  const filePath = path.resolve(root, ...segments);
  const relCheck = path.relative(root, filePath);
  if (relCheck.startsWith('..') || path.isAbsolute(relCheck))
    return { ok: false, status: 403, reason: 'path escapes root' };
  return { ok: true, filePath, mimeType: mimeTypeFor(filePath) };
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | null;
}

/** Full handler, with file reading injected (tests pass a map; main.ts passes fs.promises.readFile). */
export async function handleAppRequest(
  url: string,
  method: string,
  rootDir: string,
  readFile: (filePath: string) => Promise<Uint8Array>,
): Promise<AppResponse> {
  const r = resolveAppRequest(url, rootDir, method);
  const headers = securityHeaders();
  if (!r.ok) return { status: r.status, headers: { ...headers, 'Content-Type': 'text/plain' }, body: null };
  try {
    const body = await readFile(r.filePath);
    return { status: 200, headers: { ...headers, 'Content-Type': r.mimeType }, body: method === 'HEAD' ? null : body };
  } catch {
    return { status: 404, headers: { ...headers, 'Content-Type': 'text/plain' }, body: null };
  }
}
