// Python first in the app, on the real Python fixtures (py312: a growth pair with PYFRAMES sidecars, no binaries):
// interpreter frames folded by default and expandable, the sample selector, pprof's slicing chips, the regex search
// with its count and highlights, the bottom-up and callers/callees views, and the missing-binaries panel.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, guardNetwork, ROOT, SHOTS, withBarControl, openTab } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

async function openPy312(page: Page): Promise<string> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(ROOT, 'fixtures', 'python', 'py312')));
  await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
  // the parent: the process with two dumps (the growth pair)
  const parent = page.locator('[data-testid=processes] tr', { has: page.locator('td', { hasText: /^2$/ }) }).first();
  await parent.click();
  const pid = (await parent.getAttribute('data-pid')) ?? '';
  await page.getByTestId('tab-growth').click();
  await expect(page.locator(`[data-testid=growth][data-pid="${pid}"]`)).toBeVisible();
  return pid;
}

test.describe('Python first', () => {
  const errors: string[] = [];
  test.beforeEach(async ({ context, page }) => {
    await guardNetwork(context);
    errors.length = 0;
    page.on('pageerror', (e) => errors.push(String(e)));
  });
  test.afterEach(() => expect(errors).toEqual([]));

  test('default view: the leak row leads with make_record; the panel folds interpreter frames and expands them', async ({
    page,
  }) => {
    await openPy312(page);
    await expect(page.getByTestId('stack-mode')).toHaveValue('python-first');
    const first = page.getByTestId('growth-row').first();
    await expect(first.locator('.lbl')).toHaveAttribute(
      'title',
      /^make_record \(workload\.py:\d+\) ← leaky_handler ← Pipeline\.step/,
    );
    await expect(first.locator('.lbl')).not.toHaveAttribute('title', /libpython/);
    await first.click();
    const frames = page.getByTestId('stack-frames');
    const marker = frames.getByTestId('interpreter-marker').first();
    await expect(marker).toContainText(/\d+ interpreter frames?/);
    const before = await frames.locator('li').count();
    await marker.click();
    await expect.poll(() => frames.locator('li').count()).toBeGreaterThan(before);
    await expect(frames).toContainText('libpython3.12');
    await shot(page, 'py-01-python-first');
    for (const w of [1024, 1920]) {
      await page.setViewportSize({ width: w, height: 800 });
      await shot(page, `py-01-python-first-${w}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // the flame graph's marker node expands every run (the slice bar folds them again)
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame')).toBeVisible();
    await page.getByTestId('unfold-interpreter').check();
    await expect(page.getByTestId('unfold-interpreter')).toBeChecked();
    await page.getByTestId('unfold-interpreter').uncheck();
  });

  test('sample selector: alloc_space puts the allocate-and-free handler first; the functions show their files', async ({
    page,
  }) => {
    await openPy312(page);
    await page.getByTestId('sample-select').selectOption('alloc_space');
    // allocated since start, the 64 KiB buffers freed right away dominate: they lead by Δ, which live bytes never show
    await expect(page.getByTestId('growth-row').first().locator('.lbl')).toHaveAttribute(
      'title',
      /^transient_handler \(workload\.py:\d+\) ← Pipeline\.step/,
    );
    await page.getByTestId('sample-select').selectOption('inuse_space');
    await expect(page.getByTestId('growth-row').first().locator('.lbl')).toHaveAttribute('title', /^make_record/);
    await page.getByTestId('sample-select').selectOption('alloc_space');
    await page.getByRole('tab', { name: 'By function' }).click();
    await expect(page.getByTestId('function-file').filter({ hasText: 'workload.py' }).first()).toBeVisible();
    await shot(page, 'py-02-alloc-space');
  });

  test('chips: focus and ignore slice the stacks like pprof; an invalid expression is refused', async ({ page }) => {
    await openPy312(page);
    await page.getByTestId('chip-kind').selectOption('focus');
    await page.getByTestId('chip-re').fill('^recurse$');
    await page.getByTestId('chip-add').click();
    await expect(page.getByTestId('chip')).toHaveCount(1);
    const rows = page.getByTestId('growth-row');
    await expect(rows.first()).toBeVisible();
    const titles = () => rows.locator('.lbl').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? ''));
    await expect
      .poll(async () => (await titles()).length > 0 && (await titles()).every((t) => t.startsWith('recurse')))
      .toBe(true);
    // hide the recursion: the rows now lead with what remains (the interpreter's marker never leads)
    await page.getByTestId('chip-kind').selectOption('hide');
    await page.getByTestId('chip-re').fill('^recurse$');
    await page.getByTestId('chip-add').click();
    await expect(page.getByTestId('chip')).toHaveCount(2);
    await expect
      .poll(async () => (await titles()).length > 0 && (await titles()).every((t) => !t.includes('recurse')))
      .toBe(true);
    await page.getByTestId('chip-kind').selectOption('ignore');
    await page.getByTestId('chip-re').fill('(unclosed');
    await page.getByTestId('chip-add').click();
    await expect(page.getByTestId('chip-error')).toBeVisible();
    await shot(page, 'py-03-chips');
    await page.getByTestId('chip-remove').first().click();
    await expect(page.getByTestId('chip')).toHaveCount(1);
    await page.getByTestId('chip-remove').first().click();
    await expect(page.getByTestId('chip')).toHaveCount(0);
  });

  test('regex search: count and highlights in the table and the flame graph', async ({ page }) => {
    await openPy312(page);
    await page.getByTestId('growth-filter').fill('make_rec.rd|leaky_h');
    await expect(page.getByTestId('growth-match-count')).toContainText(/\d+ matching/);
    await expect(page.getByTestId('search-hit').first()).toBeVisible();
    await page.getByTestId('tab-flame').click();
    await page.getByTestId('flame-search').fill('make_rec.rd');
    await expect(page.getByTestId('flame-match-count')).toContainText(/[1-9]\d* match/);
    await shot(page, 'py-04-search');
  });

  test('bottom-up and callers/callees views', async ({ page }) => {
    await openPy312(page);
    // bottom-up is the flame graph's leaf-first order (one component, FlameControls)
    await page.getByTestId('tab-flame').click();
    await withBarControl(page, 'flame-order', (el) => el.selectOption('leaf').then(() => undefined));
    const inv = page.getByTestId('flame');
    await expect(inv).toBeVisible();
    // allocation sites are the roots: the leak's make_record is one of them, no interpreter frame leads
    await expect(inv).toHaveAttribute('data-roots', /make_record/);
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame')).toHaveAttribute('data-roots', /make_record/);
    await page.getByTestId('tab-flame').click();
    await shot(page, 'py-05-bottom-up');
    await openTab(page, 'tab-sandwich');
    const pick = page.getByTestId('sandwich-function');
    const value = await pick
      .locator('option', { hasText: /^leaky_handler/ })
      .first()
      .getAttribute('value');
    await pick.selectOption(value ?? '');
    // callers of leaky_handler: Pipeline.step; callees: make_record
    await expect(page.getByTestId('sandwich-callers')).toHaveAttribute('data-roots', /leaky_handler/);
    await expect(page.getByTestId('sandwich-callees')).toHaveAttribute('data-roots', /leaky_handler/);
    await shot(page, 'py-06-sandwich');
  });

  test('missing binaries: libpython unresolved, the bytes through it and the path to hand over', async ({ page }) => {
    await openPy312(page);
    const panel = page.getByTestId('missing-binaries');
    await expect(panel).toBeVisible();
    await expect(panel.getByTestId('missing-binary').filter({ hasText: 'libpython3.12.so.1.0' })).toHaveCount(1);
    await expect(panel).toContainText('Hand over these files');
    await shot(page, 'py-07-missing-binaries');
  });
});
