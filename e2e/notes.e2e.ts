// Notes, sessions and reports in the web build (Chromium, network blocked): notes on the leaking stack, on a
// snapshot and on a span; the notes panel and the timeline show them; the session is saved, the page reloaded,
// the session and the dumps opened again → same base/target and notes; a report exported and reopened
// read-only; hostile note text executes nothing.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, fixtureSeries, guardNetwork, ROOT, SHOTS, type DropFile } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const OUT = path.join(ROOT, 'test-results', 'notes-e2e');
mkdirSync(OUT, { recursive: true });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
const HOSTILE = '<img src=x onerror=alert(1)>';
const asDrop = (file: string): DropFile => ({
  name: path.basename(file),
  b64: readFileSync(file).toString('base64'),
  mtimeMs: statSync(file).mtimeMs,
});

test.describe('notes, sessions and reports', () => {
  let net: { requests: string[]; blocked: string[] };
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];

  test.beforeEach(async ({ context, page }) => {
    net = await guardNetwork(context);
    consoleErrors.length = 0;
    dialogs.length = 0;
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('dialog', (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss();
    });
  });

  test.afterEach(async ({ page }) => {
    expect(net.blocked, `blocked requests: ${net.blocked.join(', ')}`).toEqual([]);
    for (const u of net.requests) expect(new URL(u).hostname).toBe('127.0.0.1');
    expect(consoleErrors).toEqual([]);
    // the hostile note text never became markup, and no dialog opened
    expect(dialogs).toEqual([]);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
  });

  test('annotate, save, reload, reopen with the dumps; export a report and reopen it read-only', async ({ page }) => {
    test.setTimeout(180_000);
    await page.goto('/');
    const files = fixtureSeries(true);
    await dropFiles(page, '[data-testid=dropzone]', files);
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });
    await page.locator('[data-testid=processes] tr[data-prefix="exact"]').click();
    const nExact = files.filter((f) => f.name.startsWith('exact.')).length;
    await expect(page.locator('[data-testid=timeline-points] .snap')).toHaveCount(nExact);

    // 1. a note on the leaking stack (first row of the growth table), from the stack panel
    await page.getByTestId('tab-growth').click(); // the Suspects view opens first
    const first = page.getByTestId('growth-row').first();
    await expect(first).toContainText('make_node');
    await first.click();
    await expect(page.getByTestId('stack-frames')).toContainText('leak_steady');
    await page.getByTestId('panel-add-note').click();
    await expect(page.getByTestId('note-editor')).toBeVisible();
    await expect(page.getByTestId('note-target')).toContainText('stack');
    await page.getByTestId('note-text').fill('the leak: make_node from leak_steady is never freed');
    await page.locator('[data-testid=note-editor] [aria-label="colour #e4572e"]').click();
    await shot(page, '20-note-editor');
    await page.getByTestId('note-save').click();
    await expect(page.getByTestId('note-item')).toHaveCount(1);
    await expect(first.getByTestId('row-note-badge')).toBeVisible();
    await expect(page.getByTestId('panel-notes')).toContainText('never freed');

    // 2. a note on a snapshot (hostile text), picked on the timeline
    // (double-click on a dump of the timeline; the "✎ #N" button of the snapshot bar does the same)
    await page.locator('[data-testid=timeline-points] .snap[data-index="2"]').dblclick();
    await expect(page.getByTestId('note-target')).toContainText('snapshot #2');
    await page.getByTestId('note-text').fill(HOSTILE);
    await page.getByTestId('note-save').click();
    await expect(page.getByTestId('note-item')).toHaveCount(2);
    await expect(page.getByTestId('note-item-text').filter({ hasText: HOSTILE })).toHaveCount(1);
    await expect(page.locator('[data-testid=timeline-notes] .note-snapshot')).toHaveCount(1);

    // 3. a span: shift-drag across the timeline from dump 4 to dump 8 (a plain drag zooms)
    const a = await page.locator('[data-testid=timeline-points] .snap[data-index="4"]').boundingBox();
    const b = await page.locator('[data-testid=timeline-points] .snap[data-index="8"]').boundingBox();
    if (!a || !b) throw new Error('timeline points not laid out');
    await page.keyboard.down('Shift');
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, a.y + a.height / 2, { steps: 4 });
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-zoom', '');
    await expect(page.getByTestId('note-target')).toContainText('snapshots');
    await page.getByTestId('note-text').fill('warm-up: caches fill');
    await page.locator('[data-testid=note-editor] [aria-label="colour #2a9d8f"]').click();
    await page.getByTestId('note-save').click();
    await expect(page.locator('[data-testid=timeline-notes] .note-span')).toHaveCount(1);
    await expect(page.getByTestId('note-item')).toHaveCount(3);

    // a note on the diff base → target (first → last)
    await page.getByTestId('note-diff').click();
    await expect(page.getByTestId('note-target')).toContainText('diff');
    await page.getByTestId('note-text').fill('grows by 864 KiB from first to last');
    await page.locator('[data-testid=note-editor] [aria-label="colour #8e44ad"]').click();
    await page.getByTestId('note-save').click();
    await expect(page.locator('[data-testid=timeline-notes] .note-diff')).toHaveCount(1);
    await expect(page.getByTestId('note-item')).toHaveCount(4);

    // 4. a function note from the flame graph's stack panel (frame ✎), and a non-default base
    await page.getByTestId('base-select').selectOption('1');
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await page.getByTestId('tab-growth').click();
    await page.getByTestId('growth-row').first().click();
    await page.getByTestId('frame-add-note').first().click();
    await expect(page.getByTestId('note-target')).toContainText('function');
    await page.getByTestId('note-text').fill('allocates 16 KiB nodes');
    await page.getByTestId('note-save').click();
    await expect(page.getByTestId('note-item')).toHaveCount(5);

    // edit a note, and write then delete another (the snapshot bar's ✎ #N)
    await page
      .getByTestId('note-item')
      .filter({ hasText: 'allocates 16 KiB' })
      .getByRole('button', { name: 'edit note' })
      .click();
    await expect(page.getByTestId('note-text')).toHaveValue('allocates 16 KiB nodes');
    await page.getByTestId('note-text').fill('allocates 16 KiB nodes per step');
    await page.getByTestId('note-save').click();
    await expect(page.getByTestId('note-item').filter({ hasText: 'per step' })).toHaveCount(1);
    await page.getByTestId('note-snapshot').click();
    await page.getByTestId('note-text').fill('temporary');
    await page.getByTestId('note-save').click();
    await expect(page.getByTestId('note-item')).toHaveCount(6);
    await page
      .getByTestId('note-item')
      .filter({ hasText: 'temporary' })
      .getByRole('button', { name: 'edit note' })
      .click();
    await page.getByTestId('note-delete').click();
    await expect(page.getByTestId('note-item')).toHaveCount(5);
    await shot(page, '21-notes-growth');
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await page.waitForTimeout(300);
    await shot(page, '22-notes-flame');

    // the notes panel navigates: the span note sets base/target to its ends and shows the diff
    await page.getByTestId('note-item').filter({ hasText: 'warm-up' }).locator('button.open').click();
    await expect(page.getByTestId('base-select')).toHaveValue('4');
    await expect(page.getByTestId('target-select')).toHaveValue('8');
    await expect(page.getByTestId('tab-diff')).toHaveAttribute('aria-selected', 'true');
    await page.getByTestId('base-select').selectOption('1');
    await page.getByTestId('target-select').selectOption(String(nExact - 2));

    // 5. save the session (a download in the browser)
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('save-session').click()]);
    expect(dl.suggestedFilename()).toMatch(/\.heaplens\.json$/);
    const sessionFile = path.join(OUT, dl.suggestedFilename());
    await dl.saveAs(sessionFile);
    const saved = JSON.parse(readFileSync(sessionFile, 'utf8')) as {
      format: string;
      notes: { text: string }[];
      selection: { base: { seq: number } };
    };
    expect(saved.format).toBe('heaplens-session');
    expect(saved.notes.map((n) => n.text)).toContain(HOSTILE);

    // through heaplens open a reload shows the served job again (the engine holds it): steps 6 on are the page's own
    // flow of a session opened before its dumps
    if (test.info().project.name === 'node-engine') return;
    // 6. reload: the page has nothing; open the session alone → it asks for the dumps; then the dumps
    await page.reload();
    await expect(page.getByTestId('dropzone')).toBeVisible();
    await expect(page.getByTestId('autosaved-session')).toBeVisible();
    await dropFiles(page, '[data-testid=dropzone]', [asDrop(sessionFile)]);
    await expect(page.getByTestId('session-needs-dumps')).toBeVisible();
    await expect(page.getByTestId('session-needs-dumps')).toContainText('5 notes');
    await shot(page, '23-session-needs-dumps');
    await dropFiles(page, '[data-testid=dropzone]', fixtureSeries(true));
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });
    await expect(page.locator('[data-testid=processes] tr[data-prefix="exact"]')).toHaveClass(/focus/);
    await expect(page.getByTestId('base-select')).toHaveValue('1');
    await expect(page.getByTestId('target-select')).toHaveValue(String(nExact - 2));
    await expect(page.getByTestId('tab-diff')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('note-item')).toHaveCount(5);
    await expect(page.getByTestId('note-item-text').filter({ hasText: HOSTILE })).toHaveCount(1);
    await expect(page.locator('[data-testid=timeline-notes] .note-snapshot')).toHaveCount(1);
    await expect(page.locator('[data-testid=timeline-notes] .note-diff')).toHaveCount(1);
    await expect(page.locator('[data-testid=timeline-notes] .note-span')).toHaveCount(1);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('row-note-badge').first()).toBeVisible();
    await shot(page, '24-session-restored');
    await page.keyboard.press('t');
    await page.getByTestId('tab-diff').click();
    await page.waitForTimeout(300);
    await shot(page, '24b-session-restored-dark-diff');
    await page.keyboard.press('t');
    await page.getByTestId('tab-growth').click();

    // 7. export a report: sanitize preview, then the file
    await page.getByTestId('export-open').click();
    await expect(page.getByTestId('export-dialog')).toBeVisible();
    await page.getByTestId('sanitize-maps').check();
    await expect(page.getByTestId('sanitize-preview')).toBeVisible();
    await expect(page.getByTestId('sanitize-preview')).toContainText('mappings');
    await shot(page, '25-export-dialog');
    await page.getByTestId('sanitize-maps').uncheck();
    const [rep] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      page.getByTestId('export-report-go').click(),
    ]);
    const reportFile = path.join(OUT, 'report.html');
    await rep.saveAs(reportFile);
    const html = readFileSync(reportFile, 'utf8');
    expect(html).toContain('Content-Security-Policy');
    expect(html).not.toContain(HOSTILE);

    // interop: folded stacks of the target dump
    await page.getByTestId('export-open').click();
    const [fold] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-folded').click()]);
    const foldedFile = path.join(OUT, fold.suggestedFilename());
    await fold.saveAs(foldedFile);
    expect(readFileSync(foldedFile, 'utf8')).toMatch(/leak_steady;make_node \d+/);
    await page.getByTestId('export-dialog').getByRole('button', { name: 'Close', exact: true }).click();

    // 8. reopen the report: read-only, notes included
    await page.reload();
    await expect(page.getByTestId('dropzone')).toBeVisible();
    await dropFiles(page, '[data-testid=dropzone]', [asDrop(reportFile)]);
    await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('note-item')).toHaveCount(5);
    // the stack selected when the report was made is selected again
    await expect(page.getByTestId('stack-frames')).toContainText('leak_steady');
    await expect(page.getByTestId('note-item-text').filter({ hasText: HOSTILE })).toHaveCount(1);
    await expect(page.getByTestId('base-select')).toBeDisabled();
    await expect(page.getByTestId('base-select')).toHaveValue('1');
    await expect(page.getByTestId('save-session')).toHaveCount(0);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toContainText('make_node');
    await expect(page.getByTestId('row-note-badge').first()).toBeVisible();
    await expect(page.locator('[data-testid=timeline-notes] .note-span')).toHaveCount(1);
    await shot(page, '26-report-read-only');
    await page.getByTestId('note-item').filter({ hasText: 'never freed' }).locator('button.open').click();
    await expect(page.getByTestId('stack-frames')).toContainText('leak_steady');
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await page.waitForTimeout(300);
    await shot(page, '27-report-read-only-diff');
  });

  test('a session from a newer heaplens says so', async ({ page }) => {
    await page.goto('/');
    const file = path.join(OUT, 'newer.heaplens.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      JSON.stringify({ format: 'heaplens-session', schema: 99, savedAt: '2026-11-29T10:00:00Z', notes: [] }),
    );
    await dropFiles(page, '[data-testid=dropzone]', [asDrop(file)]);
    await expect(page.getByRole('alert')).toContainText('written by a newer heaplens (schema 99)');
    await shot(page, '28-session-newer');
  });
});
