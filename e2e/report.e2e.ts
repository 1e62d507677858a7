// The single-file report in Chromium, opened from disk (file://) with every request blocked: the app itself,
// read-only (banner), on the report's embedded job: opens on the top suspect; timeline, growth table, stack
// panel, flame graphs (diff colour by pixel), search, notes. No CSP violation, no error. A report of the
// hostile-names fixture (fixtures/hostile/) and hostile notes runs nothing: no dialog, no injected element.
// The reports are made by the CLI (`heaplens report`, run from the sources with tsx) from real fixture dumps.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { loadJob } from '../core/load/load-job.ts';
import { collectInputFiles } from '../node/io/node-files.ts';
import { emptySession, type Session } from '../core/notes/schema.ts';
import { addNote, createNote, snapshotRef, stackTarget } from '../core/notes/notes.ts';
import { serializeSession } from '../core/notes/validate.ts';
import { buildReport } from '../core/report/build-report.ts';
import { buildReportHtml } from '../core/report/html.ts';
import { REPORT_LIMITS } from '../core/report/report-limits.ts';
import { flameNodes, flamePixel, waitForFlame, type Rgb } from './flame-hook.ts';
import { heaplens, ROOT, run, SHOTS } from './helpers.ts';

const OUT = path.join(ROOT, 'test-results', 'report-e2e');
const JOB = path.join(ROOT, 'fixtures', 'jemalloc', 'job');
const HOSTILE = path.join(ROOT, 'fixtures', 'hostile');
// "job/exact.<pid>": the pid from the fixture's file names (a fixture rebuild changes it)
const EXACT_KEY = `job/${readdirSync(JOB)
  .find((n) => /^exact\.\d+\.0\.m0\.heap$/.test(n))!
  .split('.')
  .slice(0, 2)
  .join('.')}`;
const T0 = new Date('2026-11-29T10:00:00Z');

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
let exactPid = '';
let hostileReport = '';

test.beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  // the report page as every report inlines it (dist/report-app/)
  run(process.execPath, [
    path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    '-c',
    'vite.report.config.ts',
  ]);

  // a session on the fixture job: a note on the leaking stack, a span, a snapshot, a function and a diff
  const job = await loadJob(await collectInputFiles([JOB]));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  exactPid = String(p.pid);
  const last = p.snapshots[p.snapshots.length - 1];
  const leak = last.stackIds[[...last.liveBytes].indexOf(20 * 3 * 16384)];
  let s: Session = { ...emptySession('e2e'), files: [JOB] };
  s.selection = { process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, p.snapshots.length - 1) };
  s = addNote(s, createNote(stackTarget(p, leak, 'make_node'), 'LEAK: leak_steady keeps every node', '#e4572e', T0));
  s = addNote(
    s,
    createNote(
      { kind: 'span', process: p.key, from: snapshotRef(p, 4), to: snapshotRef(p, 9) },
      'steps 4-9: steady',
      '#2a9d8f',
      T0,
    ),
  );
  s = addNote(
    s,
    createNote({ kind: 'snapshot', process: p.key, snapshot: snapshotRef(p, 12) }, 'snapshot twelve', '#f3a712', T0),
  );
  s = addNote(
    s,
    createNote({ kind: 'frame', process: null, function: 'plateau' }, 'plateau fills once', '#669bbc', T0),
  );
  s = addNote(
    s,
    createNote(
      { kind: 'diff', process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, p.snapshots.length - 1) },
      'first → last',
      '#8e44ad',
      T0,
    ),
  );
  writeFileSync(path.join(OUT, 'job.session.json'), serializeSession(s, T0));
  jobReport = path.join(OUT, 'job-report.html');
  heaplens(
    'report',
    JOB,
    '-o',
    jobReport,
    '--session',
    path.join(OUT, 'job.session.json'),
    '--symbols',
    path.join(ROOT, 'fixtures', 'jemalloc', 'bin'),
    '--sysroot',
    path.join(OUT, 'no-sysroot'),
  );

  // the hostile fixture, with hostile notes too
  const hj = await loadJob(await collectInputFiles([HOSTILE]));
  const hp = hj.processes[0];
  const ht = hp.snapshots[hp.snapshots.length - 1];
  const top = ht.stackIds[[...ht.liveBytes].indexOf(Math.max(...ht.liveBytes))];
  let hs: Session = { ...emptySession('e2e'), files: [HOSTILE] };
  hs = addNote(
    hs,
    createNote(
      stackTarget(hp, top, '<img src=x onerror="window.__pwned=1">'),
      '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>',
      '#e4572e',
      T0,
    ),
  );
  hs = addNote(
    hs,
    createNote(
      { kind: 'frame', process: hp.key, function: '"><svg onload=alert(7)>' },
      '</textarea><iframe srcdoc="<script>parent.__pwned=3</script>">',
      '#2a9d8f',
      T0,
    ),
  );
  writeFileSync(path.join(OUT, 'hostile.session.json'), serializeSession(hs, T0));
  hostileReport = path.join(OUT, 'hostile-report.html');
  heaplens('report', HOSTILE, '-o', hostileReport, '--session', path.join(OUT, 'hostile.session.json'), '--no-symbols');
});

/** CSP violations and errors of the page, recorded from the first script on. */
async function watch(page: Page): Promise<string[]> {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI} ${e.sample}`),
    );
  });
  return errors;
}

/** The pixel of the node labelled exactly `label` in a flame graph (null: not drawn wide enough to read). */
async function pixelOf(page: Page, testid: string, label: string): Promise<Rgb | null> {
  const n = (await flameNodes(page, testid, label)).find((x) => x.label === label && x.rect && x.rect.w > 4);
  return n?.rect ? flamePixel(page, testid, n.rect) : null;
}

test.describe('single-file report', () => {
  test('opens from file:// with the network blocked: the app, read-only, on the top suspect; views and notes work', async ({
    context,
    page,
  }) => {
    const attempted = await blockNetwork(context, page);
    const errors = await watch(page);
    await page.goto(pathToFileURL(jobReport).href);
    await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('job-info')).toContainText('3 processes');
    await expect(page.locator('[data-testid=processes] tbody tr')).toHaveCount(3);
    // opens on the Suspects view (ranked in the page over the kept stacks), the top suspect in the stack panel
    await expect(page.getByTestId('tab-suspects')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('suspects-report-note')).toBeVisible();
    const top = page.getByTestId('suspect-row').first();
    await expect(top).toBeVisible();
    const topLabel = ((await top.locator('.lbl').getAttribute('title')) ?? '').split(' ← ')[0].trim();
    expect(topLabel.length).toBeGreaterThan(0);
    await expect(page.getByTestId('stack-panel').locator('h3')).toContainText(topLabel);
    await page.screenshot({ path: path.join(SHOTS, 'report.png') });
    // the leak (leaky.c's leak_steady) is a suspect too; it opens its process and stack, symbolized
    const leakRow = page.getByTestId('suspect-row').filter({ hasText: 'leak_steady' }).first();
    await expect(leakRow).toBeVisible();
    // its holder in the exact run
    await leakRow.locator(`[data-testid=suspect-spark][data-pid="${exactPid}"]`).click();
    await expect(page.getByTestId('stack-frames')).toContainText('leak_steady');
    await expect(page.getByTestId('stack-frames')).toContainText('leaky.c');
    await page.getByTestId('tab-growth').click();

    // notes: all five, as written; the stack note's badge; the span on the timeline
    await expect(page.getByTestId('note-item')).toHaveCount(5);
    await expect(page.getByTestId('notes-panel')).toContainText('LEAK: leak_steady keeps every node');
    await expect(page.getByTestId('notes-panel')).toContainText(`snapshots #4–#9 of ${EXACT_KEY}`);
    await expect(page.locator('[data-testid=timeline-notes] .note-span')).toHaveCount(1);
    await expect(page.getByTestId('growth-row').first()).toContainText('make_node');
    await expect(page.getByTestId('row-note-badge').first()).toBeVisible();
    // read-only: no saving, no note buttons, base/target fixed
    await expect(page.getByTestId('save-session')).toHaveCount(0);
    await expect(page.getByTestId('note-snapshot')).toHaveCount(0);
    await expect(page.getByTestId('base-select')).toBeDisabled();

    // flame graph of the target, then the diff: the leak drawn in the growth colour
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await waitForFlame(page, 'flame');
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await page.waitForTimeout(200);
    const px = await pixelOf(page, 'diff-flame', 'leak_steady');
    expect(px, 'leak_steady node in the diff flame graph').not.toBeNull();
    // growth = Okabe–Ito vermillion (213, 94, 0)
    expect(px!.r, JSON.stringify(px)).toBeGreaterThan(180);
    expect(px!.b, JSON.stringify(px)).toBeLessThan(80);
    // `/` focuses the search box; typing there fires no shortcut
    await page.keyboard.press('/');
    await expect(page.getByTestId('flame-search')).toBeFocused();
    await page.keyboard.type('plateau');
    await expect(page.getByTestId('flame-search')).toHaveValue('plateau');
    await expect(page.getByTestId('tab-diff')).toHaveAttribute('aria-selected', 'true');
    await page.getByTestId('flame-search').fill('');
    await page.screenshot({ path: path.join(SHOTS, 'report-diff.png') });

    // a note click navigates: the function note searches for it
    await page.getByTestId('note-item').filter({ hasText: 'plateau fills once' }).locator('button.open').click();
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
    const errors = await watch(page);
    await page.goto(pathToFileURL(hostileReport).href);
    await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('note-item')).toHaveCount(2);
    // the names are shown, as text
    await expect(page.getByTestId('notes-panel')).toContainText(
      '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>',
    );
    await expect(page.getByTestId('suspects-view')).toBeVisible();
    await page.getByTestId('tab-growth').click();
    const rows = page.getByTestId('growth-row');
    await expect(rows.first()).toBeVisible();
    await rows.first().click();
    const frames = page.getByTestId('stack-frames');
    await expect(frames).toContainText('<script>alert(1)</script>');
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await page.getByTestId('flame-search').fill('<img');
    await page.getByTestId('tab-diff').click();
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, 'report-hostile.png') });

    // nothing ran, nothing was injected
    expect(dialogs).toEqual([]);
    const found = await page.evaluate(() => {
      const w = window as unknown as { __pwned?: number };
      const handlers = [...document.querySelectorAll('*')].filter((el) =>
        [...el.attributes].some((a) => a.name.toLowerCase().startsWith('on')),
      ).length;
      return {
        pwned: w.__pwned ?? null,
        scripts: document.querySelectorAll('script').length,
        imgs: document.querySelectorAll('img').length,
        iframes: document.querySelectorAll('iframe').length,
        handlers,
      };
    });
    expect(found).toEqual({ pwned: null, scripts: 2, imgs: 0, iframes: 0, handlers: 0 });
    // no error and no CSP violation until the probe below
    expect(errors).toEqual([]);
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
  });

  test('a report its writer trimmed to the bounds says what it left out in the read-only banner', async ({
    context,
    page,
  }) => {
    // the fixture job with bounds smaller than it needs (core/report/report-limits.ts): the writer moves the
    // quietest kept stacks into "other" and says so (issue 49 item 7)
    const job = await loadJob(await collectInputFiles([JOB]));
    const laid = job.processes.reduce((a, p) => a + p.stacks.frames.length + 1, 0);
    const { job: header, bytes } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { limits: { ...REPORT_LIMITS, processFrames: Math.floor(laid / 3) } },
    );
    expect(header.leftOut?.reason).toMatch(/^a report holds at most [\d,]+ frames over all processes' stacks/);
    const dist = path.join(ROOT, 'dist', 'report-app');
    const html = await buildReportHtml(
      bytes,
      { title: header.title, generator: header.generator },
      {
        js: readFileSync(path.join(dist, 'report.js'), 'utf8'),
        css: readFileSync(path.join(dist, 'report.css'), 'utf8'),
      },
    );
    const file = path.join(OUT, 'trimmed-report.html');
    writeFileSync(file, html);
    const attempted = await blockNetwork(context, page);
    const errors = await watch(page);
    await page.goto(pathToFileURL(file).href);
    await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('report-left-out')).toHaveText(`· left out: ${header.leftOut!.reason}`);
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    await page.screenshot({ path: path.join(SHOTS, 'report-left-out.png') });
    expect(attempted).toEqual([]);
    expect(errors).toEqual([]);
  });
});
