// The single-file report in Chromium, opened from disk (file://) with every request blocked: summary, timeline,
// flame graph (zoom, search, tooltip, diff), growth table, noted stacks and notes. A report of the hostile-names
// fixture (fixtures/hostile/) and hostile notes runs nothing: no dialog, no injected element, no event handler.
// The reports are made by the CLI (`heaplens report`, run from the sources with tsx) from real fixture dumps.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { loadJob } from '../analysis/load-job.ts';
import { collectInputFiles } from '../node-io/node-files.ts';
import { emptySession, type Session } from '../session/schema.ts';
import { addNote, createNote, snapshotRef, stackTarget } from '../session/notes.ts';
import { serializeSession } from '../session/validate.ts';
import { ROOT, SHOTS } from './helpers.ts';

const OUT = path.join(ROOT, 'test-results', 'report-e2e');
const JOB = path.join(ROOT, 'fixtures', 'jemalloc', 'job');
const HOSTILE = path.join(ROOT, 'fixtures', 'hostile');
// "job/exact.<pid>": the pid from the fixture's file names (a fixture rebuild changes it)
const EXACT_KEY = `job/${readdirSync(JOB).find((n) => /^exact\.\d+\.0\.m0\.heap$/.test(n))!.split('.').slice(0, 2).join('.')}`;
const T0 = new Date('2026-11-29T10:00:00Z');

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

function heaplens(...args: string[]): string {
  return run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'cli', 'heaplens.ts'), ...args]);
}

/** Blocks every request that is not the report file itself; returns what was attempted. */
async function blockNetwork(context: BrowserContext, page: Page): Promise<string[]> {
  const attempted: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    attempted.push(url);
    return route.abort();
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) attempted.push(r.url());
  });
  return attempted;
}

let jobReport = '';
let hostileReport = '';

test.beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  // the viewer as the report inlines it (dist/report/viewer.js)
  run(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '-c', 'vite.report.config.ts']);

  // a session on the fixture job: a note on the leaking stack, a span, a snapshot, a function and a diff
  const job = await loadJob(await collectInputFiles([JOB]));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  const last = p.snapshots[p.snapshots.length - 1];
  const leak = last.stackIds[[...last.liveBytes].indexOf(20 * 3 * 16384)];
  let s: Session = { ...emptySession('e2e'), files: [JOB] };
  s.selection = { process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, p.snapshots.length - 1) };
  s = addNote(s, createNote(stackTarget(p, leak, 'make_node'), 'LEAK: leak_steady keeps every node', '#e4572e', T0));
  s = addNote(s, createNote({ kind: 'span', process: p.key, from: snapshotRef(p, 4), to: snapshotRef(p, 9) }, 'steps 4-9: steady', '#2a9d8f', T0));
  s = addNote(s, createNote({ kind: 'snapshot', process: p.key, snapshot: snapshotRef(p, 12) }, 'snapshot twelve', '#f3a712', T0));
  s = addNote(s, createNote({ kind: 'frame', process: null, function: 'plateau' }, 'plateau fills once', '#669bbc', T0));
  s = addNote(s, createNote({ kind: 'diff', process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, p.snapshots.length - 1) }, 'first → last', '#8e44ad', T0));
  writeFileSync(path.join(OUT, 'job.session.json'), serializeSession(s, T0));
  jobReport = path.join(OUT, 'job-report.html');
  heaplens('report', JOB, '-o', jobReport, '--session', path.join(OUT, 'job.session.json'), '--symbols', path.join(ROOT, 'fixtures', 'jemalloc', 'bin'), '--sysroot', path.join(OUT, 'no-sysroot'));

  // the hostile fixture, with hostile notes too
  const hj = await loadJob(await collectInputFiles([HOSTILE]));
  const hp = hj.processes[0];
  const ht = hp.snapshots[hp.snapshots.length - 1];
  const top = ht.stackIds[[...ht.liveBytes].indexOf(Math.max(...ht.liveBytes))];
  let hs: Session = { ...emptySession('e2e'), files: [HOSTILE] };
  hs = addNote(hs, createNote(stackTarget(hp, top, '<img src=x onerror="window.__pwned=1">'), '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>', '#e4572e', T0));
  hs = addNote(hs, createNote({ kind: 'frame', process: hp.key, function: '"><svg onload=alert(7)>' }, '</textarea><iframe srcdoc="<script>parent.__pwned=3</script>">', '#2a9d8f', T0));
  writeFileSync(path.join(OUT, 'hostile.session.json'), serializeSession(hs, T0));
  hostileReport = path.join(OUT, 'hostile-report.html');
  heaplens('report', HOSTILE, '-o', hostileReport, '--session', path.join(OUT, 'hostile.session.json'), '--no-symbols');
});

test.describe('single-file report', () => {
  test('opens from file:// with the network blocked; flame graph, table, notes work', async ({ context, page }) => {
    const attempted = await blockNetwork(context, page);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(pathToFileURL(jobReport).href);
    await expect(page.getByTestId('summary').locator('tbody tr')).toHaveCount(3);
    await expect(page.getByTestId('process-select')).toHaveValue('0');
    await expect(page.getByTestId('process-select').locator('option:checked')).toHaveText(EXACT_KEY);

    // notes panel: all five, as written
    await expect(page.getByTestId('notes').getByTestId('note')).toHaveCount(5);
    await expect(page.getByTestId('notes')).toContainText('LEAK: leak_steady keeps every node');
    await expect(page.getByTestId('notes')).toContainText(`snapshots #4–#9 of ${EXACT_KEY}`);
    // timeline: the snapshot note is a marker, the span a band
    await expect(page.getByTestId('timeline-note')).toHaveCount(1);
    await expect(page.getByTestId('timeline-span')).toHaveCount(1);

    // growth table: the leak first (symbolized), with its note badge
    const first = page.getByTestId('table-row').first();
    await expect(first).toContainText('make_node ← leak_steady ← main');
    await expect(first).toContainText('note');
    await first.click();
    const panel = page.getByTestId('stack-panel');
    await expect(panel.getByTestId('stack-frames')).toContainText('leak_steady (leaky.c:');
    await expect(panel).toContainText('LEAK: leak_steady keeps every node');
    // sorting by target bytes puts the plateau (1 MiB) first
    await page.getByTestId('table-live').click();
    await expect(page.getByTestId('table-row').first()).toContainText('plateau');
    await page.getByTestId('sort-stack').click();
    await expect(page.getByTestId('sort-stack')).toContainText('▲');

    // noted stacks section shows the leak's frames
    await expect(page.getByTestId('noted-stacks').getByTestId('stack-frames')).toContainText('make_node');

    // flame graph: tooltip, zoom, search, diff
    const flame = page.getByTestId('flame');
    const leakNode = flame.locator('[data-name="leak_steady"]');
    await expect(leakNode).toHaveCount(1);
    await leakNode.hover();
    await expect(page.getByTestId('tooltip')).toBeVisible();
    await expect(page.getByTestId('tooltip')).toContainText('leak_steady');
    await expect(page.getByTestId('tooltip')).toContainText('960 KiB');
    await leakNode.click();
    await expect(page.getByTestId('flame-status')).toHaveText('zoomed: leak_steady');
    const zoomed = await flame.locator('[data-name="leak_steady"]').boundingBox();
    const box = await flame.boundingBox();
    expect(zoomed!.width).toBeGreaterThan(box!.width * 0.95);
    await page.getByTestId('flame-reset').click();
    await page.getByTestId('flame-search').fill('plateau');
    await expect(page.getByTestId('flame-status')).toContainText('matched 1.00 MiB');
    await expect(flame.locator('.node.match')).toHaveCount(1);
    await page.getByTestId('flame-search').fill('');
    await page.getByTestId('flame-mode-diff').click();
    await expect(page.getByTestId('flame-section')).toContainText('Diff flame graph');
    const bg = await flame.locator('[data-name="leak_steady"]').evaluate((el) => getComputedStyle(el).backgroundColor);
    const [r, g] = bg.match(/\d+/g)!.map(Number);
    expect(r).toBeGreaterThan(g); // grew: red
    await page.screenshot({ path: path.join(SHOTS, 'report.png'), fullPage: true });

    // a note click navigates: the function note searches for it
    await page.getByTestId('notes').getByTestId('note').filter({ hasText: 'plateau fills once' }).click();
    await expect(page.getByTestId('flame-search')).toHaveValue('plateau');

    expect(attempted).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('hostile names and notes execute nothing and inject nothing', async ({ context, page }) => {
    const attempted = await blockNetwork(context, page);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(hostileReport).href);
    await expect(page.getByTestId('notes').getByTestId('note')).toHaveCount(2);
    // the names are shown, as text
    await expect(page.getByTestId('notes')).toContainText('<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>');
    await page.getByTestId('table-live').click();
    const rows = page.getByTestId('table-row');
    await expect(rows.first()).toBeVisible();
    await rows.first().click();
    const frames = page.getByTestId('stack-panel').getByTestId('stack-frames');
    await expect(frames).toContainText('[py] <script>alert(1)</script> (x.py:');
    await expect(frames).toContainText('[py] "><img src=x onerror=alert(2)>');
    await expect(frames).toContainText('<iframe src=\'javascript:alert(5)\'>libc.so.6+0x');
    await expect(page.getByTestId('flame').locator('.node').filter({ hasText: '<script>alert(1)</script>' }).first()).toBeVisible();
    await page.getByTestId('flame').locator('.node').filter({ hasText: '<script>alert(1)</script>' }).first().hover();
    await expect(page.getByTestId('tooltip')).toContainText('/tmp/<svg onload=alert(3)>/x.py');
    await page.getByTestId('flame-search').fill('<img');
    await page.getByTestId('flame-mode-diff').click();
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, 'report-hostile.png'), fullPage: true });

    // nothing ran, nothing was injected
    expect(dialogs).toEqual([]);
    const found = await page.evaluate(() => {
      const w = window as unknown as { __pwned?: number };
      const handlers = [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => a.name.toLowerCase().startsWith('on'))).length;
      return {
        pwned: w.__pwned ?? null,
        scripts: document.querySelectorAll('script').length,
        imgs: document.querySelectorAll('img').length,
        iframes: document.querySelectorAll('iframe').length,
        textareas: document.querySelectorAll('textarea').length,
        handlers,
      };
    });
    expect(found).toEqual({ pwned: null, scripts: 2, imgs: 0, iframes: 0, textareas: 0, handlers: 0 });
    // the CSP is in force: a script added at run time (not matching the page's hash) does not run
    const csp = await page.evaluate(async () => {
      const w = window as unknown as { __csp?: number };
      const violations: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
      const sc = document.createElement('script');
      sc.textContent = 'window.__csp = 1';
      document.body.appendChild(sc);
      await new Promise((r) => setTimeout(r, 100));
      return { ran: w.__csp ?? null, violations };
    });
    expect(csp.ran).toBeNull();
    expect(csp.violations[0]).toMatch(/^script-src/);
    expect(attempted).toEqual([]);
    expect(errors).toEqual([]);
  });
});
