// Display spoofing (issue 13, item 5): bidi overrides, marks and terminal escapes in a dump's maps paths are
// shown as visible <U+XXXX> marks in the app, never applied to the text around them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, ROOT, SHOTS } from './helpers.ts';

const HOSTILE_NAME = 'le\u202Eaky\u200F\u001b[31m';

test('a module named with U+202E, U+200F and ESC is marked in the growth table and stack panel', async ({ page }) => {
  const dir = path.join(ROOT, 'fixtures', 'jemalloc', 'job');
  const files = readdirSync(dir).filter((n) => /^exact\.\d+\.(0\.m0|10\.m10|20\.f)\.heap$/.test(n));
  const drop = files.map((name) => ({
    name,
    mtimeMs: 0,
    b64: Buffer.from(
      readFileSync(path.join(dir, name), 'utf8').replaceAll(
        '/tmp/heaplens-lab/leaky',
        `/tmp/heaplens-lab/${HOSTILE_NAME}`,
      ),
    ).toString('base64'),
  }));
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', drop);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  // the Suspects view opens first; the checks are on the growth table
  await page.getByTestId('tab-growth').click();
  const first = page.getByTestId('growth-row').first();
  await expect(first.locator('.lbl')).toHaveAttribute('title', /le<U\+202E>aky<U\+200F><U\+001B>\[31m\+0x/);
  await first.click();
  await expect(page.getByTestId('stack-frames')).toContainText('le<U+202E>aky<U+200F><U+001B>[31m');
  // nowhere in the page does a raw override, mark or escape remain
  const raw = await page.evaluate(() =>
    /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u001b]/.test(
      document.body.innerText + [...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join(''),
    ),
  );
  expect(raw).toBe(false);
  for (const width of [1024, 1280, 1920]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(SHOTS, `13-marked-controls-${width}.png`) });
  }
});
