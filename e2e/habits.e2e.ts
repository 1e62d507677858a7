// The habits of a profiler (issue 44 item 8), on real jobs of fixtures/: ↑/↓ move through the Suspects and the stack
// panel follows, Enter opens the stack on the growth table; "copy stack" puts the stack on the clipboard as text,
// its Python frames first with their file:line; a frame's file:line in the web page copies its path:line (the
// desktop app opens it in the editor: app/editor-link.ts, unit-tested); a drag across the timeline zooms its time
// axis, a double-click brings the whole axis back; the dumps are named by their trigger in the timeline's hover
// text. The leak's line comes from the workload's tagged source line, never from heaplens.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, ROOT, SHOTS } from './helpers.ts';

const WD = path.join(ROOT, 'fixtures', 'watchdog-job');
const LEAK_LINE =
  readFileSync(path.join(ROOT, 'fixtures', 'launcher', 'launch.py'), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes('# @leak-alloc')) + 1;

async function open(page: Page, files: Parameters<typeof dropFiles>[2]): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', files);
  await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('suspects-table')).not.toContainText('so far', { timeout: 30_000 });
  await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible({ timeout: 30_000 });
}
const openWatchdog = (page: Page) =>
  open(page, [...folderFiles(path.join(WD, 'dumps')), ...folderFiles(path.join(WD, 'logs'))]);
const openJob = (page: Page) => open(page, folderFiles(path.join(ROOT, 'fixtures', 'job', 'dumps')));

/** a row's stack as the stack panel titles it: `fn (file:line)` */
async function rowTitle(page: Page, i: number): Promise<string> {
  const row = page.getByTestId('suspect-row').nth(i);
  const fn = (await row.locator('.fn').textContent())!.trim();
  const site = await row.getByTestId('suspect-site').count();
  return site > 0 ? `${fn} ${(await row.getByTestId('suspect-site').textContent())!.trim()}` : fn;
}

test('↑/↓ move through the Suspects with the stack panel following; Enter opens the stack', async ({ page }) => {
  await openJob(page);
  const rows = page.getByTestId('suspect-row');
  const panel = page.getByTestId('stack-panel').locator('h3');
  // suspect #1 is selected without a click: its stack in the panel, its row marked
  await expect(rows.nth(0)).toHaveAttribute('aria-selected', 'true');
  await expect(panel).toHaveText(await rowTitle(page, 0));
  await page.getByTestId('suspects-grid').focus();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(1)).toHaveAttribute('aria-selected', 'true');
  await expect(rows.nth(0)).toHaveAttribute('aria-selected', 'false');
  await expect(panel).toHaveText(await rowTitle(page, 1));
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(2)).toHaveAttribute('aria-selected', 'true');
  await expect(panel).toHaveText(await rowTitle(page, 2));
  await page.keyboard.press('ArrowUp');
  await expect(rows.nth(1)).toHaveAttribute('aria-selected', 'true');
  const second = await rowTitle(page, 1);
  await expect(panel).toHaveText(second);
  // Enter: the stack on the growth table of its process, the panel keeping it
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('tab-growth')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('growth-row').first()).toBeVisible();
  await expect(panel).toHaveText(second);
  await page.screenshot({ path: path.join(SHOTS, 'habits-enter-growth.png') });
});

test('copy stack: the stack as text, Python frames first with file:line; a frame’s path:line copied', async ({
  context,
  page,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openWatchdog(page);
  const clip = (): Promise<string> => page.evaluate(() => navigator.clipboard.readText());
  const title = `Trajectories.keep (launch.py:${LEAK_LINE})`;
  await expect(page.getByTestId('stack-panel').locator('h3')).toHaveText(title);
  await page.getByTestId('copy-stack').click();
  await expect(page.getByTestId('panel-said')).toHaveText('stack copied');
  const text = await clip();
  const lines = text.split('\n');
  expect(lines[0]).toBe(title);
  expect(lines[1]).toBe('Python frames (leaf first):');
  // the leaf: the leak's own line, by its path as the capture recorded it
  expect(lines[2]).toMatch(new RegExp(`^  Trajectories\\.keep  \\S*launcher/launch\\.py:${LEAK_LINE}$`));
  const nativeAt = lines.indexOf('Native (leaf first):');
  expect(nativeAt, text).toBeGreaterThan(2);
  // every Python frame before the native ones, each with a file:line
  for (const l of lines.slice(2, nativeAt)) expect(l).toMatch(/^ {2}\S.* {2}\S+:\d+$/);
  expect(lines.slice(nativeAt + 1).filter((l) => l !== '').length).toBeGreaterThan(0);

  // a frame's file:line in the web page: its path:line to paste into an editor
  const src = page.getByTestId('frame-source').first();
  await expect(src).toHaveAttribute('title', /^copy .*launch\.py:\d+, to paste into an editor$/);
  await src.click();
  const where = (await src.getAttribute('data-where'))!;
  expect(where).toMatch(new RegExp(`launcher/launch\\.py:${LEAK_LINE}$`));
  await expect(page.getByTestId('panel-said')).toHaveText(`copied ${where}`);
  expect(await clip()).toBe(where);
});

test('a drag across the timeline zooms its time axis; a double-click brings the whole axis back', async ({ page }) => {
  await openJob(page);
  const tl = page.getByTestId('timeline');
  const pt = (i: number) => page.locator(`[data-testid=timeline-points] .snap[data-index="${i}"]`);
  const seqOf = async (i: number) => Number(await pt(i).getAttribute('data-seq'));
  const [s4, s8] = [await seqOf(4), await seqOf(8)];
  const a = (await pt(4).boundingBox())!;
  const b = (await pt(8).boundingBox())!;
  const y = a.y + a.height / 2;
  await page.mouse.move(a.x + a.width / 2, y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, y, { steps: 4 });
  await page.mouse.move(b.x + b.width / 2, y, { steps: 4 });
  await page.mouse.up();
  // zoomed to the dumps the drag covered (#seq of dump 4 … dump 8, within a pixel's worth)
  const zoom = (await tl.getAttribute('data-zoom'))!.split(' ').map(Number);
  expect(zoom).toHaveLength(2);
  expect(Math.abs(zoom[0] - s4)).toBeLessThan(0.3);
  expect(Math.abs(zoom[1] - s8)).toBeLessThan(0.3);
  // the axis shows that part: its ticks inside it, dumps 4 and 8 at the plot's ends, spread over it
  const ticks = (await page.locator('[data-testid=timeline-x-axis] .tick text').allTextContents()).map((t) =>
    Number(t.replace('#', '')),
  );
  expect(ticks.length).toBeGreaterThan(1);
  for (const t of ticks) expect(t >= zoom[0] - 1e-9 && t <= zoom[1] + 1e-9, `tick #${t}`).toBe(true);
  const a2 = (await pt(4).boundingBox())!;
  const b2 = (await pt(8).boundingBox())!;
  expect(b2.x - a2.x, 'dumps 4 → 8 spread over the plot').toBeGreaterThan(3 * (b.x - a.x));
  await page.screenshot({ path: path.join(SHOTS, 'habits-zoomed.png') });
  // a double-click on the background: the whole axis again
  const svg = (await tl.locator('svg').first().boundingBox())!;
  await page.mouse.dblclick(svg.x + 70, svg.y + 30);
  await expect(tl).toHaveAttribute('data-zoom', '');
  // and the caption's button does the same
  await page.mouse.move(a.x + a.width / 2, y);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, y, { steps: 6 });
  await page.mouse.up();
  await expect(tl).not.toHaveAttribute('data-zoom', '');
  await page.getByTestId('timeline-zoom-reset').click();
  await expect(tl).toHaveAttribute('data-zoom', '');
});

test('dumps are named by their trigger in the timeline’s hover text', async ({ page }) => {
  await openWatchdog(page);
  const p = page.locator('[data-testid=timeline-points] .snap[data-index="3"]');
  await p.hover();
  await expect(page.getByTestId('timeline-tooltip')).toContainText(/^#\d+ \(interval\) · /);
});

test('counts as counts: with inuse_objects the growth table and the stack panel count objects, never bytes', async ({
  page,
}) => {
  await openJob(page);
  await page.getByTestId('sample-select').selectOption('inuse_objects');
  await page.getByTestId('tab-growth').click();
  const row = page.getByTestId('growth-row').first();
  await expect(row).toBeVisible({ timeout: 30_000 });
  await row.click();
  // base, target, Δ, Δ %, steadiness: counts ("12,345", "+2,048"), the percentage aside
  const cells = (await row.locator('.n').allTextContents()).map((t) => t.trim());
  expect(cells.length).toBe(5);
  for (const c of [cells[0], cells[1], cells[2], cells[4]]) expect(c, cells.join(' | ')).toMatch(/^[+−]?[\d,]+( ~)?$/);
  const facts = page.getByTestId('stack-panel').locator('dd');
  await expect(facts.first()).toHaveText(/^[\d,]+$/);
  await expect(page.getByTestId('stack-panel')).toContainText('objects in each dump');
});
