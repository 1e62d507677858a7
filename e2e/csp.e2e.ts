// The desktop app's Content-Security-Policy (app/security.ts), enforced by real Chromium rather than
// restated: a page served with it may run its own script and WASM, and nothing else loads or runs.
import { expect, test } from '@playwright/test';
import { CONTENT_SECURITY_POLICY } from '../app/security.ts';

const ORIGIN = 'http://heaplens.test';

test('the CSP blocks inline and remote script, eval, remote fetches and frames; allows own script', async ({
  page,
}) => {
  const remoteHits: string[] = [];
  await page.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) {
      remoteHits.push(url.href);
      return route.fulfill({ status: 200, contentType: 'application/javascript', body: 'window.remoteRan = true;' });
    }
    if (url.pathname === '/own.js') {
      return route.fulfill({
        status: 200,
        contentType: 'application/javascript',
        body: `window.ownRan = true;
          try { eval('1'); window.evalRan = true; } catch { window.evalRan = false; }
          fetch('http://elsewhere.test/data').then(() => (window.fetched = true), () => (window.fetched = false));
          WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => (window.wasm = true), () => (window.wasm = false));`,
      });
    }
    return route.fulfill({
      status: 200,
      contentType: 'text/html',
      headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
      body: `<!doctype html><html><body>
        <script>window.inlineRan = true;</script>
        <script src="/own.js"></script>
        <script src="http://elsewhere.test/x.js"></script>
        <iframe src="http://elsewhere.test/frame.html"></iframe>
        <img src="http://elsewhere.test/pixel.png">
      </body></html>`,
    });
  });
  await page.goto(`${ORIGIN}/index.html`);
  await page.waitForFunction(() => 'fetched' in window && 'wasm' in window);
  const state = await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    return {
      own: w.ownRan,
      inline: w.inlineRan ?? false,
      remote: w.remoteRan ?? false,
      eval: w.evalRan,
      fetched: w.fetched,
      wasm: w.wasm,
    };
  });
  expect(state).toEqual({ own: true, inline: false, remote: false, eval: false, fetched: false, wasm: true });
  // blocked before any request left the page
  expect(remoteHits).toEqual([]);
});
