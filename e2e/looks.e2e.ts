// Asserted looks: every view of the app at 1024, 1280 and 1920 px wide (the real job also at 2560×1440), screenshotted and
// checked from the DOM: no text element's box overlaps another's, no text overflows the box that clips it (cut
// text, including a select's chosen option), no control under another element, no sideways page scroll; flame-graph colours where they carry
// meaning checked by pixel (frame kinds, diff growth). Screenshots: test-results/screenshots/looks-*.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { flameNodes, flamePixel, waitForFlame, type Rgb } from './flame-hook.ts';
import { dropFiles, folderFiles, ROOT, SHOTS } from './helpers.ts';
import { layoutProblems } from './looks-check.ts';

const SIZES = [
  { width: 1024, height: 640 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

async function check(page: Page, name: string, size: { width: number }): Promise<void> {
  await page.waitForTimeout(250);
  await page.screenshot({ path: path.join(SHOTS, `looks-${size.width}-${name}.png`) });
  const r = await layoutProblems(page);
  expect(r.checked, `${name}: text elements checked`).toBeGreaterThan(10);
  expect(r.scrollX, `${name} at ${size.width}px: sideways page scroll`).toBeLessThanOrEqual(0);
  expect(r.problems, `${name} at ${size.width}px`).toEqual([]);
}

/** The pixel near the top-left of the first node whose label contains `label` in a flame graph. */
async function nodePixel(page: Page, testid: string, label: string): Promise<(Rgb & { label: string }) | null> {
  const n = (await flameNodes(page, testid, label)).find((x) => x.rect && x.rect.w > 6);
  return n?.rect ? { ...(await flamePixel(page, testid, n.rect, 2, 2)), label: n.label } : null;
}

function hue({ r, g, b }: Rgb): number {
  const mx = Math.max(r, g, b);
  const mn = Math.min(r, g, b);
  if (mx === mn) return -1;
  const d = mx - mn;
  const h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

test.beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

for (const size of SIZES) {
  test(`every view at ${size.width}×${size.height}: no overlap, no cut text, no sideways scroll; colours by pixel`, async ({
    page,
  }) => {
    await page.setViewportSize(size);
    await page.goto('/');
    await check(page, 'open', size);
    await page.getByTestId('try-sample').click();
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    await check(page, 'suspects', size);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toBeVisible();
    await page.getByTestId('growth-row').first().click();
    await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible();
    await check(page, 'growth', size);
    await page.getByRole('tab', { name: 'By function' }).click();
    await check(page, 'by-function', size);

    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await waitForFlame(page, 'flame');
    await check(page, 'flame', size);
    // frame kinds by hue: Python blue (205°), libraries yellow (48°) — colors.ts KIND_HSL ± its spread; the sample
    // is fixtures/oom-job, whose leak is the workload's StepLog.add
    const py = await nodePixel(page, 'flame', 'StepLog.add');
    expect(py, 'Python node').not.toBeNull();
    expect(Math.abs(hue(py!) - 205), JSON.stringify(py)).toBeLessThan(12);
    const lib = await nodePixel(page, 'flame', 'libc.so');
    if (lib) expect(Math.abs(hue(lib) - 48), JSON.stringify(lib)).toBeLessThan(12);

    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await check(page, 'diff', size);
    // growth = Okabe–Ito vermillion (213, 94, 0)
    const grew = await nodePixel(page, 'diff-flame', 'StepLog.add');
    expect(grew, 'grown node').not.toBeNull();
    expect(Math.abs(hue(grew!) - 26), JSON.stringify(grew)).toBeLessThan(10);
    expect(grew!.r).toBeGreaterThan(170);

    // several processes on the timeline, and the dark theme
    await page
      .locator('[data-testid=processes] tbody tr')
      .nth(1)
      .click({ modifiers: ['Control'] });
    await page.getByTestId('theme-toggle').click();
    await page.getByTestId('tab-suspects').click();
    await check(page, 'multi-dark', size);
  });
}

// a real multi-process job (fixtures/job: several workers, one killed), as a new user opens it
const JOB_DUMPS = path.join(ROOT, 'fixtures', 'job', 'dumps');
for (const size of [...SIZES, { width: 2560, height: 1440 }]) {
  test(`a real job at ${size.width}×${size.height}: timeline, growth, flame graphs fit`, async ({ page }) => {
    await page.setViewportSize(size);
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(JOB_DUMPS));
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 60_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 30_000 });
    await check(page, 'job-suspects', size);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toBeVisible({ timeout: 30_000 });
    await page.getByTestId('growth-row').first().click();
    await check(page, 'job-growth', size);
    // every process at once on the timeline, on its own scale
    await page.getByTestId('timeline-scale').click();
    await check(page, 'job-per-process', size);
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await check(page, 'job-flame', size);
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await check(page, 'job-diff', size);
  });
}
