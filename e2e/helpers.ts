// Shared e2e helpers: the fixture series as drop payloads, and a network guard.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const JOB = path.join(ROOT, 'fixtures', 'jemalloc', 'job');
export const SHOTS = path.join(ROOT, 'test-results', 'screenshots');

export interface DropFile {
  name: string;
  b64: string;
  mtimeMs: number;
}

const seqOf = (name: string): number => Number(name.split('.')[2]);

/** The last dump of the sampled series (highest seq), cut in the middle of a record: the killed-process case. */
export const TRUNCATED = readdirSync(JOB)
  .filter((n) => n.startsWith('sampled.') && n.endsWith('.heap'))
  .sort((a, b) => seqOf(a) - seqOf(b))
  .at(-1) as string;

/** The dumps of fixtures/jemalloc/job (last sampled one truncated), plus the binaries when `withBinaries`. */
export function fixtureSeries(withBinaries = false): DropFile[] {
  const names = readdirSync(JOB)
    .filter((n) => n.endsWith('.heap'))
    .sort();
  const bins = withBinaries ? [path.join(ROOT, 'fixtures', 'jemalloc', 'bin', 'leaky')] : [];
  const binFiles = bins.map((b) => ({
    name: path.basename(b),
    b64: readFileSync(b).toString('base64'),
    mtimeMs: statSync(b).mtimeMs,
  }));
  return binFiles.concat(
    names.map((name) => {
      let bytes = readFileSync(path.join(JOB, name));
      if (name === TRUNCATED) {
        // cut inside the stack records (before MAPPED_LIBRARIES), mid-line
        const text = bytes.toString('latin1');
        const at = text.indexOf('MAPPED_LIBRARIES');
        const cut = Math.floor((at > 0 ? at : bytes.length) * 0.6);
        bytes = bytes.subarray(0, cut);
      }
      return { name, b64: bytes.toString('base64'), mtimeMs: statSync(path.join(JOB, name)).mtimeMs };
    }),
  );
}

/**
 * Dispatches a synthetic drop of `files` on the element matching `selector`. In the `node-engine` project the same
 * files are opened as a user of `heaplens open` would: written to a folder (names, bytes, times), served by the
 * built CLI's engine, and the page goes to the URL it prints (the test goes on against that page).
 */
export async function dropFiles(page: Page, selector: string, files: DropFile[]): Promise<void> {
  // dumps go to the engine; what a user drops on a loaded job's page (a session, a report) is still dropped there
  if (test.info().project.name === 'node-engine' && files.some((f) => /\.heap(\.gz)?$/.test(f.name)))
    return await openThroughNode(page, files);
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

const served: ChildProcess[] = [];

/** `heaplens open` on the files (the engine reads them; the page gets answers), the page on its URL. */
async function openThroughNode(page: Page, files: DropFile[]): Promise<void> {
  // one engine at a time: the previous test's job goes with its engine
  stopServedEngines();
  const dir = mkdtempSync(path.join(process.env.HEAPLENS_TEST_TMP ?? tmpdir(), 'open-'));
  for (const f of files) {
    const file = path.join(dir, f.name);
    writeFileSync(file, Buffer.from(f.b64, 'base64'));
    utimesSync(file, f.mtimeMs / 1000, f.mtimeMs / 1000);
  }
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'heaplens.js'), 'open', dir, '--no-browser'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  served.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    child.on('exit', (code) => reject(new Error(`heaplens open exited ${code}`)));
  });
  await page.goto(url);
  await expect(page.getByTestId('engine-label')).toContainText('heaplens open');
}

/** Stops the engines `dropFiles` started (before the next one, and when the test worker exits). */
export function stopServedEngines(): void {
  for (const c of served.splice(0)) c.kill('SIGINT');
}
process.once('exit', stopServedEngines);

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
      ok =
        u.protocol === 'data:' ||
        u.protocol === 'blob:' ||
        (LOCAL.has(u.hostname) && (u.protocol === 'http:' || u.protocol === 'ws:'));
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

/**
 * [start, end) of a function in an ELF64 little-endian binary's .symtab (a small reader, so the test does not
 * depend on binutils). For the PIE fixtures, text file offsets equal virtual addresses.
 */
export function elfSymbolRange(file: string, name: string): [number, number] | null {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return null;
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const sect = (i: number) => {
    const o = shoff + i * shentsize;
    return {
      type: b.readUInt32LE(o + 4),
      offset: Number(b.readBigUInt64LE(o + 0x18)),
      size: Number(b.readBigUInt64LE(o + 0x20)),
      link: b.readUInt32LE(o + 0x28),
      entsize: Number(b.readBigUInt64LE(o + 0x38)),
    };
  };
  for (let i = 0; i < shnum; i++) {
    const s = sect(i);
    if (s.type !== 2) continue; // SHT_SYMTAB
    const str = sect(s.link);
    for (let off = s.offset; off + 24 <= s.offset + s.size; off += s.entsize || 24) {
      const nameOff = b.readUInt32LE(off);
      let end = str.offset + nameOff;
      while (b[end] !== 0) end++;
      if (b.toString('latin1', str.offset + nameOff, end) !== name) continue;
      const value = Number(b.readBigUInt64LE(off + 8));
      const size = Number(b.readBigUInt64LE(off + 16));
      return [value, value + size];
    }
  }
  return null;
}

/** True when a frame label names `fn`, or is `module+0xoff` with off inside `range`. */
export function labelHits(label: string, fn: string, range: [number, number] | null): boolean {
  if (label.includes(fn)) return true;
  if (!range) return false;
  for (const m of label.matchAll(/\+0x([0-9a-f]+)/g)) {
    const off = parseInt(m[1], 16);
    if (off > range[0] && off <= range[1]) return true;
  }
  return false;
}

/** Every file of a fixtures folder (dumps and their .pyframes sidecars), unchanged. */
export function folderFiles(dir: string): DropFile[] {
  return readdirSync(dir)
    .sort()
    .map((name) => ({
      name,
      b64: readFileSync(path.join(dir, name)).toString('base64'),
      mtimeMs: statSync(path.join(dir, name)).mtimeMs,
    }));
}

/** Waits until the tab bar has measured every item, so none moves between the bar and its menu meanwhile. */
async function barSettled(page: Page): Promise<void> {
  await expect(page.getByTestId('tab-bar')).toHaveAttribute('data-settled', 'true');
}

/**
 * Acts on a view control of the tab bar: one that does not fit the window is in the bar's "⋯" menu (issue 22
 * item 10), as a user finds it there; the menu is opened for the action and closed after it.
 */
export async function withBarControl(
  page: Page,
  testid: string,
  act: (el: ReturnType<Page['getByTestId']>) => Promise<void>,
): Promise<void> {
  await barSettled(page);
  const el = page.getByTestId(testid);
  const opened = !(await el.isVisible());
  if (opened) await page.getByTestId('tab-bar-more').click();
  await act(el);
  if (opened && (await page.getByTestId('tab-bar-menu').isVisible())) await page.keyboard.press('Escape');
}

/** Opens a tab: from the tab bar, or from its "⋯" menu when the window is too narrow for it (issue 22 item 10). */
export async function openTab(page: Page, testid: string): Promise<void> {
  await barSettled(page);
  const tab = page.getByTestId(testid);
  if (await tab.isVisible()) return tab.click();
  await page.getByTestId('tab-bar-more').click();
  await page.getByTestId('tab-bar-menu').getByTestId(testid).click();
}

/** Runs a command in the checkout; its stdout and stderr, or an error carrying them when it fails. */
export function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

/** `heaplens <args>` from the sources (through tsx), as the specs that make a report from disk run it. */
export function heaplens(...args: string[]): string {
  return run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'node', 'cli', 'heaplens.ts'), ...args]);
}
