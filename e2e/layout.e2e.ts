// Issue 22 item 10, from element boxes, on two real multi-process jobs (fixtures/oom-job with the logs it copied,
// the fork job of fixtures/job) at 1024×640, 1280×800 and 1920×1080: suspect #1 is fully visible without scrolling;
// the header, the snapshot bar, the tab bar and the chip bar stay one line (what does not fit is in their "⋯"
// menus, reachable); switching tabs moves nothing above the view (no 17 px jump); the holders' sparklines sit
// beside the row's figures, not at the far end of a wide window. Screenshots: test-results/screenshots/layout-*.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, ROOT, SHOTS, type DropFile } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const OOM = path.join(ROOT, 'fixtures', 'oom-job');

/** fixtures/oom-job as its README says to open it: the dumps with the kernel log, cgroup files, job log, smaps */
function oomFiles(): DropFile[] {
  const files = ['dumps', 'logs/cgroup', 'smaps'].flatMap((d) => folderFiles(path.join(OOM, d)));
  for (const name of ['dmesg.txt', 'dmesg-T.txt', 'job.log']) {
    const abs = path.join(OOM, 'logs', name);
    files.push({ name, b64: readFileSync(abs).toString('base64'), mtimeMs: statSync(abs).mtimeMs });
  }
  return files;
}
const JOBS: Record<string, { files: () => DropFile[]; processes: number }> = {
  'oom-job': { files: oomFiles, processes: 4 },
  job: { files: () => folderFiles(path.join(ROOT, 'fixtures', 'job', 'dumps')), processes: 5 },
};

async function open(page: Page, job: string): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', JOBS[job].files());
  await expect(page.getByTestId('job-info')).toContainText(`${JOBS[job].processes} processes`, { timeout: 60_000 });
  await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('suspects-table')).not.toContainText('so far', { timeout: 30_000 });
  await page.waitForTimeout(300);
}

/** A bar's items: each one's box, and the bar's. */
async function barBoxes(page: Page, testid: string) {
  return page.getByTestId(testid).evaluate((bar) => {
    const r = bar.getBoundingClientRect();
    const items = [...bar.children]
      .filter((c) => c.hasAttribute('data-bar-item') || c.classList.length > 0)
      .map((c) => {
        const q = c.getBoundingClientRect();
        return {
          id: c.getAttribute('data-bar-item') ?? 'menu',
          top: q.top,
          bottom: q.bottom,
          left: q.left,
          right: q.right,
        };
      })
      .filter((q) => q.bottom > q.top);
    return { bar: { top: r.top, bottom: r.bottom, left: r.left, right: r.right }, items };
  });
}

for (const [w, h] of [
  [1024, 640],
  [1280, 800],
  [1920, 1080],
] as const)
  for (const job of Object.keys(JOBS))
    test(`layout of ${job} at ${w}×${h}: suspect #1 above the fold, one-line bars, no jump between tabs`, async ({
      page,
    }) => {
      await page.setViewportSize({ width: w, height: h });
      await open(page, job);
      await page.screenshot({ path: path.join(SHOTS, `layout-${job}-${w}.png`) });

      // suspect #1: every part of the row on screen, inside the table's scroll box (not scrolled to)
      const row = page.getByTestId('suspect-row').first();
      const rb = (await row.boundingBox())!;
      const body = (await page.locator('[data-testid=suspects-table] .tbody').boundingBox())!;
      expect(rb.y + rb.height, `suspect #1's bottom at ${w}×${h}`).toBeLessThanOrEqual(
        Math.min(h, body.y + body.height),
      );
      expect(rb.x + rb.width).toBeLessThanOrEqual(w);
      expect(await page.locator('[data-testid=suspects-table] .tbody').evaluate((e) => e.scrollTop)).toBe(0);

      // one line each: every item of the bar on the same line, inside the bar
      for (const bar of ['header-bar', 'snap-bar', 'tab-bar', 'slice-bar-items']) {
        const { bar: b, items } = await barBoxes(page, bar);
        expect(items.length, bar).toBeGreaterThan(0);
        const mid = (q: { top: number; bottom: number }) => (q.top + q.bottom) / 2;
        for (const it of items) {
          expect(Math.abs(mid(it) - mid(items[0])), `${bar}: ${it.id} on the first line`).toBeLessThan(4);
          expect(it.right, `${bar}: ${it.id} inside the bar`).toBeLessThanOrEqual(b.right + 1);
          expect(it.left, `${bar}: ${it.id} inside the bar`).toBeGreaterThanOrEqual(b.left - 1);
        }
        expect(b.bottom - b.top, `${bar} is one line high`).toBeLessThan(36);
      }

      // columns sized to content: the first holder starts near the row's figures, not across the window
      const rate = (await row.getByTestId('suspect-rate').boundingBox())!;
      const spark = (await row.getByTestId('suspect-spark').first().boundingBox())!;
      expect(spark.x - (rate.x + rate.width), 'rate → first holder (px)').toBeLessThan(120);

      // no jump: the bars above the view and the view's top keep their places on every tab
      const place = async () =>
        page.evaluate(() =>
          ['header-bar', 'snap-bar', 'tab-bar', 'slice-bar-items'].map((id) => {
            const r = document.querySelector(`[data-testid=${id}]`)!.getBoundingClientRect();
            return [id, Math.round(r.top), Math.round(r.left), Math.round(r.width)];
          }),
        );
      const ref = await place();
      for (const id of ['growth', 'flame', 'diff', 'suspects']) {
        await page.getByTestId(`tab-${id}`).click();
        await expect(page.getByTestId(`tab-${id}`)).toHaveAttribute('aria-selected', 'true');
        await page.waitForTimeout(200);
        expect(await place(), `tab ${id}`).toEqual(ref);
      }
    });

test('what does not fit is one click away: tabs, view settings and actions in the "⋯" menus at 1024×640', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1024, height: 640 });
  await open(page, 'job');
  // a tab from the tab bar's menu opens, and then stands in the bar
  await expect(page.getByTestId('tab-sandwich')).toBeHidden();
  await page.getByTestId('tab-bar-more').click();
  await page.getByTestId('tab-bar-menu').getByTestId('tab-sandwich').click();
  await expect(page.getByTestId('tab-sandwich')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('tab-bar-menu')).toBeHidden();
  await expect(page.locator('[data-testid=tab-bar] > [data-bar-item=sandwich]')).toBeVisible();
  await page.getByTestId('tab-suspects').click();
  // the header's: the menu closes on Escape
  await page.getByTestId('header-bar-more').click();
  await expect(page.getByTestId('header-bar-menu')).toBeVisible();
  await expect(page.getByTestId('header-bar-menu').getByTestId('open-session-header')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('header-bar-menu')).toBeHidden();
  await page.screenshot({ path: path.join(SHOTS, 'layout-menu-1024.png') });
});
