// `heaplens open`'s server: the app's page (dist/renderer) and the Node engine (engine.ts) on one loopback port, as
// `go tool pprof -http` serves its UI from its engine. The page asks over one WebSocket and receives answers,
// never the dumps. Safe on a shared machine (docs: shared engine-and-scale §2; Ray's dashboard CVE-2025-62593 went
// through DNS rebinding):
// - bound to 127.0.0.1 only;
// - a random token of 256 bits is the first segment of every path: without it, nothing (404, no page, no data);
// - the Host header must be the loopback name and the port (a rebinding name is refused, 421);
// - the WebSocket's Origin must be the served origin (403 before the upgrade);
// - no CORS header, no-referrer (the token never leaves in a Referer), no-store;
// - the client names no path: the engine opens only what the command line gave (engine.ts refuses `openPaths`);
// - a client message is capped at 1 MiB (requests are small).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeMessage, encodeMessage } from '../../core/engine/wire.js';
import type { FromEngine, ToEngine } from '../../core/engine/api.js';
import type { NodeEngine } from './engine.js';

/** What a client may send in one message: requests are small (the largest, a session for a report, some KiB). */
export const MAX_CLIENT_MESSAGE = 1 << 20;

/** Marks the page as served by a Node engine: the renderer connects to `engine` beside its own URL. */
export const SERVED_MARKER = '<meta name="heaplens-engine" content="node" />';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
  '.heap': 'text/plain; charset=utf-8',
  '.gz': 'application/gzip',
  '.pyframes': 'text/plain; charset=utf-8',
};

export interface ServeOptions {
  engine: NodeEngine;
  /** the built page (dist/renderer) */
  pageDir: string;
  /** 0: a free port */
  port: number;
  /** for tests: a known token (else 32 random bytes) */
  token?: string;
}

export interface Served {
  /** http://127.0.0.1:<port>/<token>/ */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** Starts serving; resolves once listening (rejects when the port is taken, saying so). */
export async function serveEngine(o: ServeOptions): Promise<Served> {
  const token = o.token ?? randomBytes(32).toString('base64url');
  const prefix = `/${token}/`;
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE });
  let port = 0;
  const hosts = (): Set<string> => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const tokenOk = (path: string): boolean => {
    if (!path.startsWith('/')) return false;
    const seg = path.slice(1, 1 + token.length);
    const a = Buffer.from(seg);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b) && path.charAt(1 + token.length) === '/';
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handleHttp(req, res).catch(() => deny(res, 500));
  });

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hosts().has(req.headers.host ?? '')) return deny(res, 421);
    const url = pathOf(req.url);
    if (url === null || !tokenOk(url)) return deny(res, 404);
    if (req.method !== 'GET' && req.method !== 'HEAD') return deny(res, 405);
    const rel = decodeSafe(url.slice(prefix.length)) ?? '';
    if (rel === 'engine') return deny(res, 426);
    const file = safeJoin(o.pageDir, rel === '' ? 'index.html' : rel);
    if (!file) return deny(res, 404);
    let body: Buffer;
    try {
      if (!(await stat(file)).isFile()) return deny(res, 404);
      body = await readFile(file);
    } catch {
      return deny(res, 404);
    }
    if (file.endsWith('index.html')) body = Buffer.from(markServed(body.toString('utf8')));
    res.writeHead(200, {
      ...HEADERS,
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
      'Content-Length': body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (code: number): void => {
      socket.end(
        `HTTP/1.1 ${code} ${code === 403 ? 'Forbidden' : code === 421 ? 'Misdirected Request' : 'Not Found'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      );
    };
    const host = req.headers.host ?? '';
    if (!hosts().has(host)) return refuse(421);
    const url = pathOf(req.url);
    if (url === null || !tokenOk(url) || url !== `${prefix}engine`) return refuse(404);
    // a page of another origin (a public site, a rebinding name) may not talk to the engine
    if (req.headers.origin !== `http://${host}`) return refuse(403);
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws));
  });

  function connect(ws: WebSocket): void {
    const reply = (msg: FromEngine): void => {
      if (ws.readyState === ws.OPEN) ws.send(encodeMessage(msg));
    };
    // a client's broken or oversized frame ends its socket (ws closes it with the code), never the server
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return ws.close(1003, 'binary messages only');
      let msg: ToEngine;
      try {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        msg = decodeMessage(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as ToEngine;
      } catch (e) {
        return ws.close(1007, e instanceof Error ? e.message.slice(0, 120) : 'bad message');
      }
      o.engine.receive(msg, reply);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'EADDRINUSE' ? new Error(`port ${o.port} is taken: give another with --port, or 0`) : e),
    );
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  port = typeof addr === 'object' && addr ? addr.port : o.port;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function deny(res: ServerResponse, code: number): void {
  res.writeHead(code, { ...HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(code === 421 ? 'this server answers on 127.0.0.1 only\n' : '');
}

/** The request's path (no query), or null when it is not one. */
function pathOf(raw: string | undefined): string | null {
  if (!raw || !raw.startsWith('/')) return null;
  const q = raw.search(/[?#]/);
  return q < 0 ? raw : raw.slice(0, q);
}

function decodeSafe(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** `rel` inside `root`, or null when it would leave it (`..`, an absolute path, a NUL). */
export function safeJoin(root: string, rel: string): string | null {
  if (rel.includes('\0') || rel.startsWith('/') || rel.startsWith('\\')) return null;
  const full = normalize(join(root, rel));
  const base = normalize(root.endsWith(sep) ? root : root + sep);
  return full.startsWith(base) ? full : null;
}

/** The page's HTML with the marker that it is served by a Node engine. */
export function markServed(html: string): string {
  return html.includes('</head>') ? html.replace('</head>', `    ${SERVED_MARKER}\n  </head>`) : SERVED_MARKER + html;
}
