// Firefox without Playwright: Debian's firefox-esr driven over WebDriver BiDi (its own remote protocol, a WebSocket),
// for the benches that time a page in Firefox too (Playwright drives only its own patched Firefox, which cannot be
// downloaded here). A fresh profile whose proxies point at a closed local port: no request leaves the machine.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

export const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((f) => existsSync(f)) ?? null;

/**
 * Opens `url` in headless Firefox and resolves with the seconds until `selector` matches an element (or the page
 * shows `failText`), or rejects after `timeoutMs`.
 */
export async function firefoxTimeTo(url, selector, failText, timeoutMs = 600_000) {
  if (!FIREFOX) throw new Error('no firefox-esr or firefox');
  const profile = mkdtempSync(path.join(tmpdir(), 'heaplens-ff-'));
  writeFileSync(
    path.join(profile, 'user.js'),
    [
      'user_pref("network.proxy.type", 1);',
      'user_pref("network.proxy.http", "127.0.0.1");',
      'user_pref("network.proxy.http_port", 9);',
      'user_pref("network.proxy.ssl", "127.0.0.1");',
      'user_pref("network.proxy.ssl_port", 9);',
      'user_pref("browser.shell.checkDefaultBrowser", false);',
      'user_pref("datareporting.policy.dataSubmissionEnabled", false);',
      'user_pref("app.update.enabled", false);',
    ].join('\n'),
  );
  const port = 9300 + Math.floor(Math.random() * 500);
  const ff = spawn(
    FIREFOX,
    ['--headless', '--no-remote', '--profile', profile, '--remote-debugging-port', String(port)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  try {
    // the BiDi endpoint is up once Firefox says so on stderr
    await new Promise((resolve, reject) => {
      let buf = '';
      const t = setTimeout(() => reject(new Error('firefox did not start its remote agent')), 60_000);
      ff.stderr.on('data', (d) => {
        buf += d;
        if (/WebDriver BiDi listening/.test(buf)) {
          clearTimeout(t);
          resolve();
        }
      });
      ff.on('exit', (c) => reject(new Error(`firefox exited ${c}: ${buf.slice(-500)}`)));
    });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/session`);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    let next = 1;
    const pending = new Map();
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.type === 'error') p.reject(new Error(`${msg.error}: ${msg.message}`));
      else p.resolve(msg.result);
    });
    const send = (method, params) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    await send('session.new', { capabilities: {} });
    const tree = await send('browsingContext.getTree', {});
    const context = tree.contexts[0].context;
    const probe = `(() => document.querySelector(${JSON.stringify(selector)}) ? 'found' : (document.body && document.body.innerText.includes(${JSON.stringify(failText)}) ? 'failed' : 'no'))()`;
    const t0 = performance.now();
    await send('browsingContext.navigate', { context, url, wait: 'none' });
    for (;;) {
      const r = await send('script.evaluate', { expression: probe, target: { context }, awaitPromise: false }).catch(
        () => null,
      );
      const v = r?.result?.value;
      if (v === 'found' || v === 'failed') {
        const s = (performance.now() - t0) / 1000;
        ws.close();
        return { found: v === 'found', s };
      }
      if (performance.now() - t0 > timeoutMs) throw new Error(`${selector} not shown in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    ff.kill('SIGKILL');
    await new Promise((r) => (ff.exitCode !== null ? r() : ff.once('exit', r)));
    rmSync(profile, { recursive: true, force: true });
  }
}
