// The single-file report in Firefox (issue 11: "opens from file:// offline in Chromium and Firefox").
// Playwright drives only its own patched Firefox, which cannot be downloaded here, so Debian's firefox-esr renders
// the report headless into a PNG (`--screenshot`, no network: a fresh profile with networking pointed nowhere);
// Chromium then reads that PNG's pixels and checks that the app was drawn: the read-only banner, in the colour
// and at the height Chromium itself draws it for the same file, and a page that is not blank.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from '@playwright/test';
import { heaplens, ROOT, SHOTS } from './helpers.ts';

const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((f) => existsSync(f));
const OUT = path.join(ROOT, 'test-results', 'report-firefox');
const W = 1400;
const H = 900;

if (!FIREFOX) console.warn('[report-firefox] SKIPPED: no firefox-esr or firefox (apt-get install firefox-esr)');

test.skip(!FIREFOX, 'no firefox-esr or firefox installed (apt-get install firefox-esr)');

test('a report opened from file:// in Firefox draws the app read-only', async ({ page }) => {
  test.setTimeout(180_000);
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(path.join(OUT, 'profile'), { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  const report = path.join(OUT, 'job.html');
  heaplens('report', path.join(ROOT, 'fixtures', 'job', 'dumps'), '-o', report);
  // no request may leave the machine: every proxy points at a closed local port
  writeFileSync(
    path.join(OUT, 'profile', 'user.js'),
    [
      'user_pref("network.proxy.type", 1);',
      'user_pref("network.proxy.http", "127.0.0.1");',
      'user_pref("network.proxy.http_port", 9);',
      'user_pref("network.proxy.ssl", "127.0.0.1");',
      'user_pref("network.proxy.ssl_port", 9);',
      'user_pref("network.proxy.allow_hijacking_localhost", true);',
      'user_pref("browser.shell.checkDefaultBrowser", false);',
      'user_pref("datareporting.policy.dataSubmissionEnabled", false);',
      'user_pref("toolkit.telemetry.enabled", false);',
      '',
    ].join('\n'),
  );
  const png = path.join(OUT, 'firefox.png');
  const ff = spawnSync(
    FIREFOX!,
    [
      '--headless',
      '--no-remote',
      '--profile',
      path.join(OUT, 'profile'),
      `--window-size=${W},${H}`,
      '--screenshot',
      png,
      pathToFileURL(report).href,
    ],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HOME: OUT, MOZ_HEADLESS: '1' } },
  );
  expect(existsSync(png), `firefox wrote no screenshot: ${ff.stderr}`).toBe(true);
  writeFileSync(path.join(SHOTS, 'report-firefox.png'), readFileSync(png));

  // Chromium's own rendering of the same file: where the banner is and its colour
  await page.setViewportSize({ width: W, height: H });
  await page.goto(pathToFileURL(report).href);
  const banner = page.getByTestId('read-only-banner');
  await expect(banner).toBeVisible({ timeout: 30_000 });
  const box = (await banner.boundingBox())!;
  const colour = await banner.evaluate((e) => getComputedStyle(e).backgroundColor);

  // Firefox's screenshot, read in Chromium: the banner row holds that colour across most of its width
  const b64 = readFileSync(png).toString('base64');
  const seen = await page.evaluate(
    async ({ b64, y, colour }) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d')!;
      g.drawImage(img, 0, 0);
      const [r, gg, b] = (colour.match(/\d+/g) ?? []).map(Number);
      const row = g.getImageData(0, Math.round(y), img.width, 1).data;
      let banner = 0;
      for (let x = 0; x < img.width; x++) {
        const i = x * 4;
        if (Math.abs(row[i] - r) < 24 && Math.abs(row[i + 1] - gg) < 24 && Math.abs(row[i + 2] - b) < 24) banner++;
      }
      const all = g.getImageData(0, 0, img.width, img.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < all.length; i += 4 * 97) colours.add((all[i] << 16) | (all[i + 1] << 8) | all[i + 2]);
      return { width: img.width, banner: banner / img.width, colours: colours.size };
    },
    { b64, y: box.y + box.height / 2, colour },
  );
  expect(seen.width).toBe(W);
  expect(seen.banner, `share of the banner row in ${colour}`).toBeGreaterThan(0.5);
  expect(seen.colours, 'distinct colours in the page (a blank or error page has few)').toBeGreaterThan(20);
});
