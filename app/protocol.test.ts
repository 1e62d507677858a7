import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handleAppRequest, mimeTypeFor, resolveAppRequest } from './protocol.js';

const root = path.resolve('/opt/heaplens/renderer');

describe('resolveAppRequest', () => {
  it('maps bundle paths under the root', () => {
    const r = resolveAppRequest('app://bundle/assets/index-1.js', root);
    expect(r).toEqual({
      ok: true,
      filePath: path.join(root, 'assets', 'index-1.js'),
      mimeType: 'text/javascript; charset=utf-8',
    });
    const idx = resolveAppRequest('app://bundle/', root);
    expect(idx.ok && idx.filePath).toBe(path.join(root, 'index.html'));
  });
  it.each(['app://bundle/../../etc/passwd', 'app://bundle/assets/%2e%2e/%2e%2e/secret'])(
    'clamps dot segments of %s to the root',
    (url) => {
      const r = resolveAppRequest(url, root);
      expect(r.ok && r.filePath.startsWith(root + path.sep)).toBe(true);
    },
  );
  it.each([
    'app://bundle/a/..%2f..%2fx',
    'app://bundle/a%5c..%5cx',
    'app://bundle/x%00.js',
    'app://bundle/C:/Windows/win.ini',
    'app://other/index.html',
    'https://bundle/index.html',
  ])('refuses %s', (url) => {
    expect(resolveAppRequest(url, root).ok).toBe(false);
  });
  it('refuses writes', () => {
    expect(resolveAppRequest('app://bundle/index.html', root, 'POST')).toMatchObject({ ok: false, status: 405 });
  });
  it('knows wasm and workers', () => {
    expect(mimeTypeFor('x.wasm')).toBe('application/wasm');
    expect(mimeTypeFor('x.worker.js')).toContain('javascript');
  });
});

describe('handleAppRequest', () => {
  const files = new Map([[path.join(root, 'index.html'), new TextEncoder().encode('<!doctype html>')]]);
  const read = async (p: string): Promise<Uint8Array> => {
    const f = files.get(p);
    if (!f) throw new Error('ENOENT');
    return f;
  };
  it('serves with CSP headers', async () => {
    const r = await handleAppRequest('app://bundle/index.html', 'GET', root, read);
    expect(r.status).toBe(200);
    expect(r.headers['Content-Type']).toContain('text/html');
    expect(r.headers['Content-Security-Policy']).toContain("default-src 'none'");
    expect(r.body?.byteLength).toBe(15);
  });
  it('404s missing files and refuses escapes without reading', async () => {
    expect((await handleAppRequest('app://bundle/nope.js', 'GET', root, read)).status).toBe(404);
    expect((await handleAppRequest('app://bundle/a/..%2f..%2fx', 'GET', root, read)).status).toBe(400);
    expect((await handleAppRequest('app://evil/index.html', 'GET', root, read)).status).toBe(403);
  });
});
