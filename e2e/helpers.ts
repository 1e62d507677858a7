// Shared e2e helpers: the fixture series as drop payloads, and a network guard.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from '@playwright/test';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const JOB = path.join(ROOT, 'fixtures', 'jemalloc', 'job');
export const SHOTS = path.join(ROOT, 'test-results', 'screenshots');

export interface DropFile {
  name: string;
  b64: string;
  mtimeMs: number;
}

/** The last dump of the sampled series, cut in the middle of a record: the killed-process case. */
export const TRUNCATED = 'sampled.21371.23.i23.heap';

export function fixtureSeries(): DropFile[] {
  const names = readdirSync(JOB).filter((n) => n.endsWith('.heap')).sort();
  return names.map((name) => {
    let bytes = readFileSync(path.join(JOB, name));
    if (name === TRUNCATED) {
      // cut inside the stack records (before MAPPED_LIBRARIES), mid-line
      const text = bytes.toString('latin1');
      const at = text.indexOf('MAPPED_LIBRARIES');
      const cut = Math.floor((at > 0 ? at : bytes.length) * 0.6);
      bytes = bytes.subarray(0, cut);
    }
    return { name, b64: bytes.toString('base64'), mtimeMs: statSync(path.join(JOB, name)).mtimeMs };
  });
}

/** Dispatches a synthetic drop of `files` on the element matching `selector`. */
export async function dropFiles(page: Page, selector: string, files: DropFile[]): Promise<void> {
  const dt = await page.evaluateHandle((list: DropFile[]) => {
    const d = new DataTransfer();
    for (const f of list) {
      const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
      d.items.add(new File([bytes], f.name, { lastModified: f.mtimeMs }));
    }
    return d;
  }, files);
  await page.locator(selector).dispatchEvent('drop', { dataTransfer: dt });
}

const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Blocks every request that is not to the local preview server; records all requests and blocked ones. */
export async function guardNetwork(context: BrowserContext): Promise<{ requests: string[]; blocked: string[] }> {
  const requests: string[] = [];
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    let ok = false;
    try {
      const u = new URL(url);
      ok = u.protocol === 'data:' || u.protocol === 'blob:' || (LOCAL.has(u.hostname) && (u.protocol === 'http:' || u.protocol === 'ws:'));
    } catch {
      ok = false;
    }
    if (ok) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (r) => requests.push(r.url()));
  return { requests, blocked };
}
