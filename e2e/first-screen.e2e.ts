// The answer on the first screen (issue 22): a real multi-process job (fixtures/job: fork and spawn, a leak, bounded
// buffers, a killed rollout) opened as a new user opens it, checked from the DOM without a click.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, folderFiles, ROOT, SHOTS } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const JOB_DUMPS = path.join(ROOT, 'fixtures', 'job', 'dumps');

for (const size of [
  { width: 1024, height: 640 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
]) {
  test(`first screen at ${size.width}×${size.height}`, async ({ page }) => {
    await page.setViewportSize(size);
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(JOB_DUMPS));
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 60_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 30_000 });
    await page.waitForTimeout(1500);
    await page.screenshot({ path: path.join(SHOTS, `first-${size.width}.png`) });
  });
}
