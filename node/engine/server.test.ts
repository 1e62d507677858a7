// `heaplens open`'s server on a shared machine: nothing without the token, a foreign Host refused (DNS rebinding),
// a WebSocket from another origin refused, no CORS header, no path outside the page's folder, no path from the
// client, loopback only. Each check fails if its guard is removed from server.ts or engine.ts.
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { decodeMessage, encodeMessage } from '../../core/engine/wire.js';
import type { FromEngine, Request } from '../../core/engine/api.js';
import { NodeEngine } from './engine.js';
import { safeJoin, serveEngine, SERVED_MARKER, type Served } from './server.js';

let served: Served;
let engine: NodeEngine;
const JOB = join(import.meta.dirname, '../../fixtures/jemalloc/job');

beforeAll(async () => {
  const page = mkdtempSync(join(tmpdir(), 'heaplens-page-'));
  writeFileSync(join(page, 'index.html'), '<html><head><title>t</title></head><body></body></html>');
  mkdirSync(join(page, 'assets'));
  writeFileSync(join(page, 'assets', 'app.js'), 'console.log(1)');
  // a secret beside the page folder: reachable only by leaving it
  writeFileSync(join(page, '..', `secret-${process.pid}.txt`), 'secret');
  engine = new NodeEngine({
    paths: [JOB],
    allowPaths: false,
    symbols: null,
    info: { kind: 'node', label: 'test engine' },
    reportApp: () => null,
    readers: 1,
  });
  served = await serveEngine({ engine, pageDir: page, port: 0 });
}, 60_000);

afterAll(async () => {
  await served?.close();
  engine?.close();
});

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(path: string, headers: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: served.port,
        path,
        method: 'GET',
        headers: { Host: `127.0.0.1:${served.port}`, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens the engine's socket; resolves with the socket, or rejects with the HTTP status of the refusal. */
function socket(path: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${served.port}${path}`, { headers });
    ws.on('open', () => resolve(ws));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

const origin = (): string => `http://127.0.0.1:${served.port}`;

function ask(ws: WebSocket, id: number, req: Request): Promise<FromEngine> {
  return new Promise((resolve) => {
    const on = (data: Buffer): void => {
      const msg = decodeMessage(new Uint8Array(data)) as FromEngine;
      if ('id' in msg && msg.id === id && !('progress' in msg)) {
        ws.off('message', on);
        resolve(msg);
      }
    };
    ws.on('message', on);
    ws.send(encodeMessage({ id, req }));
  });
}

describe('heaplens open server', () => {
  it('listens on the loopback only, with a token of at least 128 bits in the URL', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/);
    expect(Buffer.from(served.token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
  });

  it('serves the page with its token, marked as served, without CORS headers', async () => {
    const r = await get(`/${served.token}/`, { Origin: 'http://evil.example' });
    expect(r.status).toBe(200);
    expect(r.body).toContain(SERVED_MARKER);
    expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect((await get(`/${served.token}/assets/app.js`)).status).toBe(200);
  });

  it('gives nothing without the token', async () => {
    for (const p of [
      '/',
      '/index.html',
      '/assets/app.js',
      `/${served.token}`,
      `/${served.token.slice(0, -1)}x/`,
      `/${served.token}x/`,
    ]) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
      expect(r.body, p).toBe('');
    }
  });

  it('refuses a Host other than the loopback and its port (DNS rebinding)', async () => {
    for (const host of ['evil.example', `evil.example:${served.port}`, '127.0.0.1:1', `127.0.0.2:${served.port}`]) {
      const r = await get(`/${served.token}/`, { Host: host });
      expect(r.status, host).toBe(421);
      expect(r.body).not.toContain('<html>');
    }
    expect((await get(`/${served.token}/`, { Host: `localhost:${served.port}` })).status).toBe(200);
  });

  it('serves nothing outside the page folder', async () => {
    for (const p of ['../secret', '..%2fsecret', '%2e%2e/secret', '..%5csecret', '%00']) {
      const r = await get(`/${served.token}/${p}-${process.pid}.txt`);
      expect(r.status, p).toBe(404);
      expect(r.body).not.toContain('secret');
    }
    expect(safeJoin('/srv/page', '../x')).toBeNull();
    expect(safeJoin('/srv/page', '/etc/passwd')).toBeNull();
    expect(safeJoin('/srv/page', 'a/../../x')).toBeNull();
    expect(safeJoin('/srv/page', 'assets/a.js')).toBe('/srv/page/assets/a.js');
  });

  it('refuses a WebSocket from another origin, without the token, or to a foreign Host', async () => {
    await expect(socket(`/${served.token}/engine`, { Origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(socket(`/${served.token}/engine`, {})).rejects.toThrow('HTTP 403');
    await expect(socket(`/engine`, { Origin: origin() })).rejects.toThrow('HTTP 404');
    await expect(socket(`/${served.token}/other`, { Origin: origin() })).rejects.toThrow('HTTP 404');
    await expect(
      socket(`/${served.token}/engine`, { Origin: 'http://evil.example:1', Host: 'evil.example:1' }),
    ).rejects.toThrow('HTTP 421');
  });

  it('answers the served origin, and opens no path the client names', async () => {
    const ws = await socket(`/${served.token}/engine`, { Origin: origin() });
    try {
      const info = await ask(ws, 1, { type: 'engineInfo' });
      expect(info).toMatchObject({ ok: true, res: { type: 'engineInfo', info: { kind: 'node', served: [JOB] } } });
      const opened = await ask(ws, 2, { type: 'open' });
      expect(opened).toMatchObject({ ok: true, res: { type: 'open' } });
      const paths = await ask(ws, 3, { type: 'openPaths', paths: ['/etc'] });
      expect(paths).toMatchObject({ ok: false, error: 'this engine opens only the paths it was started on' });
      const load = await ask(ws, 4, {
        type: 'load',
        files: [{ path: '/etc/passwd', size: 1, mtimeMs: null, hostPath: '/etc/passwd' }],
      });
      expect(load).toMatchObject({ ok: false });
      const summary = await ask(ws, 5, { type: 'summary' });
      expect(summary).toMatchObject({ ok: true, res: { type: 'summary' } });
    } finally {
      ws.close();
    }
  }, 60_000);

  it('closes a socket that sends more than a request can be', async () => {
    const ws = await socket(`/${served.token}/engine`, { Origin: origin() });
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.send(new Uint8Array(2 << 20));
    expect(await closed).toBe(1009);
  });
});
