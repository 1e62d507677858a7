// Issue 22 item 10 on the real multi-process job (fixtures/job): at 1024×640 suspect #1 is fully visible without
// scrolling; the tab bar stays one line at every size; switching tabs does not move the window's columns (no
// scrollbar appearing and taking 17 px). Screenshots at the three sizes.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, ROOT, SHOTS } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

async function openJob(page: Page): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(ROOT, 'fixtures', 'job', 'dumps')));
  await expect(page.getByTestId('job-info')).toContainText('5 processes', { timeout: 60_000 });
  await expect(page.getByTestId('suspect-row').first()).toBeVisible();
}

for (const [w, h] of [
  [1024, 640],
  [1280, 800],
  [1920, 1080],
] as const)
  test(`layout at ${w}×${h}: suspect #1 above the fold, one-line tab bar, no jump between tabs`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    await openJob(page);
    await page.waitForTimeout(300);
    await shot(page, `layout-suspects-${w}`);
    const row = await page.getByTestId('suspect-row').first().boundingBox();
    expect(row, 'suspect #1 row').not.toBeNull();
    expect(row!.y + row!.height, `suspect #1 bottom at ${w}×${h}`).toBeLessThanOrEqual(h);
    const tabs = page.locator('.tabs[role=tablist]');
    const tab = await page.getByTestId('tab-suspects').boundingBox();
    const bar = await tabs.boundingBox();
    expect(bar!.height, 'tab bar is one line').toBeLessThan(tab!.height * 1.6);
    // the centre column keeps its place and width on every tab
    const centre = async () => (await tabs.boundingBox())!;
    const ref = await centre();
    for (const id of ['growth', 'flame', 'diff', 'suspects']) {
      await page.getByTestId(`tab-${id}`).click();
      await page.waitForTimeout(200);
      const b = await centre();
      expect([b.x, b.width], `tab ${id}`).toEqual([ref.x, ref.width]);
    }
  });
