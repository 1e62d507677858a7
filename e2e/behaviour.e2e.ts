// Behaviour a new user meets on a real series: the timeline's time axis (wall clock from plausible mtimes,
// else seq, and it says which); snapshots named by their seq; hover tooltips with formatted values that hide on
// keys; the stack panel following base/target; `/` and typing; per-job autosave; resizable columns; no line
// outside the chart on either y scale.
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, fixtureSeries, type DropFile } from './helpers.ts';

const seqOf = (name: string): number => Number(name.split('.')[2]);
const exactFiles = (): DropFile[] => fixtureSeries().filter((f) => f.name.startsWith('exact.'));

async function open(page: Page, files: DropFile[]): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', files);
  await expect(page.getByTestId('job-info')).toContainText('dumps', { timeout: 30_000 });
  // the Suspects view opens first; these checks are on the growth table
  await page.getByTestId('tab-growth').click();
  await expect(page.getByTestId('growth-row').first()).toBeVisible();
}

test.describe('behaviour', () => {
  test('time axis: wall clock from plausible mtimes, else seq with the reason; labels name snapshots by seq', async ({
    page,
  }) => {
    // mtimes one minute apart, increasing with seq: a wall-clock axis
    const t0 = Date.UTC(2026, 10, 29, 9, 0, 0);
    const timed = exactFiles().map((f) => ({ ...f, mtimeMs: t0 + seqOf(f.name) * 60_000 }));
    await open(page, timed);
    await expect(page.getByTestId('timeline-axis')).toHaveAttribute('data-axis', 'wall');
    await expect(page.getByTestId('timeline-axis')).toContainText('file modification times');
    const ticks = await page.locator('[data-testid=timeline-x-axis] .tick text').allTextContents();
    expect(ticks.length).toBeGreaterThan(1);
    expect(
      ticks.every((t) => /\d:\d\d|\d\d \w+|AM|PM/.test(t)),
      ticks.join(' | '),
    ).toBe(true);

    // the same files, all with one mtime (a copy that lost them): the axis counts dumps and says why
    const flat = exactFiles().map((f) => ({ ...f, mtimeMs: t0 }));
    await open(page, flat);
    await expect(page.getByTestId('timeline-axis')).toHaveAttribute('data-axis', 'seq');
    await expect(page.getByTestId('timeline-axis')).toHaveAttribute('title', /share a modification time/);

    // only the dumps from seq 5 on: the first snapshot is #5, not #0, in every label
    const late = exactFiles().filter((f) => seqOf(f.name) >= 5);
    await open(page, late);
    const first = Math.min(...late.map((f) => seqOf(f.name)));
    const last = Math.max(...late.map((f) => seqOf(f.name)));
    await expect(page.getByTestId('base-select').locator('option:checked')).toHaveText(new RegExp(`^#${first} · `));
    await expect(page.getByTestId('target-select').locator('option:checked')).toHaveText(new RegExp(`^#${last} · `));
    await expect(page.getByTestId('note-snapshot')).toHaveText(`✎ #${last}`);
    await expect(page.locator('.marker-label').first()).toHaveText(`base #${first}`);
    await expect(page.locator('[data-testid=timeline-points] .snap[data-index="0"]')).toHaveAttribute(
      'data-seq',
      String(first),
    );
    await page.getByTestId('growth-row').first().click();
    await expect(page.getByTestId('stack-panel').locator('dt').first()).toHaveText(`base #${first}`);
  });

  test('hover tooltips carry formatted values and hide on a key; the stack panel follows base/target', async ({
    page,
  }) => {
    await open(page, exactFiles());
    const pt = page.locator('[data-testid=timeline-points] .snap[data-index="3"]');
    await pt.hover();
    const tip = page.getByTestId('timeline-tooltip');
    await expect(tip).toBeVisible();
    await expect(tip).toContainText('#3');
    await expect(tip).toContainText(/\d+(\.\d+)? (KiB|MiB) live · [\d,]+ objects/);
    await page.keyboard.press('Shift');
    await expect(tip).toHaveCount(0);

    // the stack panel shows the selected stack for the current base/target, and follows a change
    await page.getByTestId('growth-row').first().click();
    const dd = page.getByTestId('stack-panel').locator('dd').first();
    const before = await dd.textContent();
    await page.getByTestId('base-select').selectOption('10');
    await expect(page.getByTestId('stack-panel').locator('dt').first()).toHaveText('base #10');
    await expect(dd).not.toHaveText(before ?? '');
    // a flame node's path belongs to the old tree: a base/target change clears it
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    const box = await page.getByTestId('diff-flame').locator('canvas').boundingBox();
    await page.mouse.click(box!.x + box!.width / 2, box!.y + 27);
    await expect(page.getByTestId('stack-panel').locator('h3')).toBeVisible();
    await page.mouse.move(box!.x + box!.width / 2, box!.y + 27);
    await expect(page.getByTestId('diff-flame-tooltip')).toBeVisible();
    await page.getByTestId('diff-flame').locator('canvas').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('diff-flame-tooltip')).toHaveCount(0);
    await page.getByTestId('target-select').selectOption('15');
    await expect(page.getByTestId('stack-panel').locator('.hint')).toBeVisible();
  });

  test('`/` focuses the filter; typing fires no shortcut; Esc leaves the box and keys work again', async ({ page }) => {
    await open(page, exactFiles());
    const modeBefore = await page.getByTestId('stack-mode').inputValue();
    await page.keyboard.press('/');
    await expect(page.getByTestId('growth-filter')).toBeFocused();
    await page.keyboard.type('fdgm');
    await expect(page.getByTestId('growth-filter')).toHaveValue('fdgm');
    await expect(page.getByTestId('tab-growth')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('stack-mode')).toHaveValue(modeBefore); // 'm' typed into the box changed no mode
    await page.getByTestId('growth-filter').fill('');
    await page.keyboard.press('Escape');
    await page.keyboard.press('f');
    await expect(page.getByTestId('tab-flame')).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press('/');
    await expect(page.getByTestId('flame-search')).toBeFocused();
    await page.keyboard.type('d');
    await expect(page.getByTestId('tab-flame')).toHaveAttribute('aria-selected', 'true');
  });

  test("autosave is per job: a second job never overwrites the first's", async ({ page }) => {
    await open(page, exactFiles());
    await page.getByTestId('base-select').selectOption('4');
    await page.waitForTimeout(1800);
    const one = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('heaplens.autosave:')));
    expect(one).toHaveLength(1);
    const firstText = await page.evaluate((k) => localStorage.getItem(k), one[0]);
    const sampled = fixtureSeries().filter((f) => f.name.startsWith('sampled.'));
    await dropFiles(page, 'body', sampled);
    // the new job by its dump count: both jobs are one process, and the first stays on screen until the second
    // shows its first part, so "1 process" alone let the target be picked on the first job (whose autosave it
    // then rewrote) and the wait end before the second job was in
    await expect(page.getByTestId('job-info')).toContainText(`1 process · ${sampled.length} dumps`, {
      timeout: 30_000,
    });
    await expect(page.getByTestId('target-select')).toBeVisible();
    await page.getByTestId('target-select').selectOption('3');
    await page.waitForTimeout(1800);
    const two = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('heaplens.autosave:')));
    expect(two).toHaveLength(2);
    expect(await page.evaluate((k) => localStorage.getItem(k), one[0])).toBe(firstText);
    // the open screen offers the latest one
    await page.reload();
    await expect(page.getByTestId('autosaved-session')).toContainText(`${sampled.length} files`);
  });

  test('columns resize by dragging; every line fits the chart on either y scale', async ({ page }) => {
    await open(page, fixtureSeries());
    const nav = page.locator('nav.left');
    const w0 = (await nav.boundingBox())!.width;
    const h = (await page.getByTestId('split-left').boundingBox())!;
    await page.mouse.move(h.x + 2, h.y + 100);
    await page.mouse.down();
    await page.mouse.move(h.x + 62, h.y + 100, { steps: 4 });
    await page.mouse.up();
    expect(Math.round((await nav.boundingBox())!.width - w0)).toBe(60);
    // the timeline's height too (the splitter below it), within the window's bounds
    const svg = page.locator('[data-testid=timeline] svg').first();
    const h0 = (await svg.boundingBox())!.height;
    const th = (await page.getByTestId('split-timeline').boundingBox())!;
    await page.mouse.move(th.x + 100, th.y + 2);
    await page.mouse.down();
    await page.mouse.move(th.x + 100, th.y + 72, { steps: 4 });
    await page.mouse.up();
    expect((await svg.boundingBox())!.height).toBeGreaterThan(h0 + 30);
    const inside = async (): Promise<boolean> =>
      page.evaluate(() => {
        const svg = document.querySelector('[data-testid=timeline] svg') as SVGSVGElement;
        const top = svg.getBoundingClientRect().top;
        return [...svg.querySelectorAll('path.proc-line')].every((p) => {
          const r = p.getBoundingClientRect();
          return r.top - top >= 0 && r.bottom - top <= svg.height.baseVal.value;
        });
      });
    await expect(page.locator('[data-testid=timeline] path.proc-line')).toHaveCount(3);
    expect(await inside()).toBe(true);
    await page.getByTestId('timeline-scale').click();
    await expect(page.getByTestId('timeline-scale')).toHaveAttribute('data-scale', 'per-process');
    expect(await inside()).toBe(true);
  });

  test('drawn again, the timeline keeps its lines: a path changes only where its process or scale does', async ({
    page,
  }) => {
    await open(page, fixtureSeries());
    const lines = page.locator('[data-testid=timeline] path.proc-line');
    await expect(lines).toHaveCount(3);
    // each line element marked by the test: an element made again would come without the mark
    const before = await lines.evaluateAll((ps) =>
      ps.map((p, k) => {
        p.setAttribute('data-test-mark', String(k));
        return { pid: p.getAttribute('data-pid'), d: p.getAttribute('d') };
      }),
    );
    // another base: the chart is drawn again (its markers move), the lines do not
    await page.getByTestId('base-select').selectOption({ index: 1 });
    await expect(page.locator('.marker-label').first()).toContainText('base');
    const kept = await lines.evaluateAll((ps) =>
      ps.map((p) => ({
        mark: p.getAttribute('data-test-mark'),
        pid: p.getAttribute('data-pid'),
        d: p.getAttribute('d'),
      })),
    );
    expect(kept.map((k) => k.mark)).toEqual(['0', '1', '2']);
    expect(kept.map(({ pid, d }) => ({ pid, d }))).toEqual(before);
    // each line on its own scale: the same elements, the lines of the processes not focused drawn anew
    await page.getByTestId('timeline-scale').click();
    await expect(page.getByTestId('timeline-scale')).toHaveAttribute('data-scale', 'per-process');
    const own = await lines.evaluateAll((ps) =>
      ps.map((p) => ({ mark: p.getAttribute('data-test-mark'), d: p.getAttribute('d') })),
    );
    expect(own.map((k) => k.mark).sort()).toEqual(['0', '1', '2']);
    expect(own.filter((o) => before[Number(o.mark)].d !== o.d).length).toBeGreaterThanOrEqual(1);
  });
});
