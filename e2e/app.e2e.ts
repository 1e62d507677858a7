// The web build in Chromium: drop the real fixture series and check every view.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { flameNodes, flamePixel, waitForFlame } from './flame-hook.ts';
import {
  dropFiles,
  elfSymbolRange,
  fixtureSeries,
  folderFiles,
  guardNetwork,
  labelHits,
  ROOT,
  SHOTS,
  TRUNCATED,
  withBarControl,
} from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

// The exact run (every allocation recorded) of fixtures/jemalloc/src/leaky.c: its known leaking call path goes
// through leak_steady() (16 KiB per step). Symbolized frames read "leak_steady"; unsymbolized ones read
// "leaky+0x…" with a return address inside leak_steady's range in fixtures/jemalloc/bin/leaky.
const LEAK_FN = 'leak_steady';
const LEAK_RANGE = elfSymbolRange(path.join(ROOT, 'fixtures', 'jemalloc', 'bin', 'leaky'), LEAK_FN);
const isLeak = (label: string): boolean => labelHits(label, LEAK_FN, LEAK_RANGE);

test.describe('heaplens web build', () => {
  let net: { requests: string[]; blocked: string[] };
  const consoleErrors: string[] = [];

  test.beforeEach(async ({ context, page }) => {
    net = await guardNetwork(context);
    consoleErrors.length = 0;
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
  });

  test.afterEach(() => {
    // nothing was requested from anywhere but the local server, and nothing had to be blocked
    expect(net.blocked, `blocked requests: ${net.blocked.join(', ')}`).toEqual([]);
    for (const u of net.requests) expect(new URL(u).hostname).toBe('127.0.0.1');
    expect(consoleErrors).toEqual([]);
  });

  test('drop the fixture series: timeline, growth, flame graphs, warnings', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId('dropzone')).toBeVisible();
    await shot(page, '01-open');

    const files = fixtureSeries();
    await dropFiles(page, '[data-testid=dropzone]', files);
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });

    // focus the exact run
    const exactRow = page.locator('[data-testid=processes] tr[data-prefix="exact"]');
    await exactRow.click();
    const exactPid = (await exactRow.getAttribute('data-pid')) ?? '';
    const nExact = files.filter((f) => f.name.startsWith('exact.')).length;
    // the timeline shows every snapshot
    await expect(page.locator('[data-testid=timeline-points] .snap')).toHaveCount(nExact);
    // default base = first, target = last
    await expect(page.getByTestId('base-select')).toHaveValue('0');
    await expect(page.getByTestId('target-select')).toHaveValue(String(nExact - 1));

    // the known leaking stack is first in the growth table (of this process, base 0, target last)
    await page.getByTestId('tab-growth').click(); // the Suspects view opens first
    await expect(
      page.locator(`[data-testid=growth][data-pid="${exactPid}"][data-base="0"][data-target="${nExact - 1}"]`),
    ).toBeVisible();
    const first = page.getByTestId('growth-row').first();
    await expect(first).toBeVisible();
    const firstTitle = (await first.locator('.lbl').getAttribute('title')) ?? '';
    expect(isLeak(firstTitle), `first growth row: ${firstTitle}; leak_steady at ${JSON.stringify(LEAK_RANGE)}`).toBe(
      true,
    );
    await first.click();
    await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible();
    expect(isLeak((await page.getByTestId('stack-frames').innerText()).replace(/\s+/g, ' '))).toBe(true);
    await shot(page, '02-growth');

    // export the growth tables as JSON (a download in the browser, a save dialog in Electron)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
    const exported = JSON.parse(readFileSync(await download.path(), 'utf8')) as {
      process: { pid: number };
      stacks: { deltaBytes: number; label: string; context: string }[];
    };
    expect(String(exported.process.pid)).toBe(exactPid);
    expect(isLeak(`${exported.stacks[0].label} ← ${exported.stacks[0].context}`)).toBe(true);

    // several processes on the timeline: Ctrl-click adds one
    await page.locator('[data-testid=processes] tr[data-prefix="sampled"]').click({ modifiers: ['Control'] });
    await expect(page.locator('[data-testid=timeline] path.proc-line[stroke-width="1.6"]')).toHaveCount(1);
    await shot(page, '02b-multi-select');

    // single-snapshot flame graph
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await waitForFlame(page, 'flame');
    await page.waitForTimeout(200);
    await shot(page, '03-flame');

    // diff flame graph: the leak is drawn in the growth colour
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    // the leaking frame's node, found by label (the page knows no ELF; the test passes candidate labels); read
    // again until the diff of this base/target has arrived and been drawn (the worker may still be busy)
    const readLeakPixel = async () => {
      const nodes = await flameNodes(page, 'diff-flame');
      const leakNode = nodes.find((n) => isLeak(n.label) && n.rect !== null && n.rect.w > 4);
      if (!leakNode?.rect) return { label: JSON.stringify(nodes.map((n) => n.label)), r: -1, g: -1, b: -1 };
      return { label: leakNode.label, ...(await flamePixel(page, 'diff-flame', leakNode.rect)) };
    };
    let px = await readLeakPixel();
    await expect.poll(async () => (px = await readLeakPixel()).r).toBeGreaterThan(180);
    // growth = Okabe–Ito vermillion (213, 94, 0): strongly red-orange, no blue
    expect(px.r, JSON.stringify(px)).toBeGreaterThan(180);
    expect(px.b, JSON.stringify(px)).toBeLessThan(80);
    expect(px.r - px.g, JSON.stringify(px)).toBeGreaterThan(60);
    await shot(page, '04-diff');

    // a truncated dump shows its warning, and the timeline marks it
    const warn = page.getByTestId('warnings').locator('li[data-kind=truncated]', { hasText: TRUNCATED });
    await expect(warn).toBeVisible();
    await page.locator('[data-testid=processes] tr[data-prefix="sampled"]').click();
    await expect(page.locator('[data-testid=timeline-points] .snap.truncated')).toHaveCount(1);
    await shot(page, '05-truncated');

    // dark theme: the page's background turns dark
    const luminance = () =>
      page.evaluate(() => {
        const m = /(\d+), (\d+), (\d+)/.exec(getComputedStyle(document.body).backgroundColor) ?? [
          '',
          '255',
          '255',
          '255',
        ];
        return (Number(m[1]) + Number(m[2]) + Number(m[3])) / 3;
      });
    const light = await luminance();
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    expect(await luminance()).toBeLessThan(Math.min(light, 100));
    await page.getByTestId('tab-flame').click();
    await page.waitForTimeout(300);
    await shot(page, '06-dark-flame');
  });

  test('with the binary dropped too, frames are symbolized in the worker (WASM addr2line)', async ({ page }) => {
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', fixtureSeries(true));
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });
    const exactRow = page.locator('[data-testid=processes] tr[data-prefix="exact"]');
    await exactRow.click();
    await page.getByTestId('tab-growth').click(); // the Suspects view opens first
    await expect(
      page.locator(`[data-testid=growth][data-pid="${await exactRow.getAttribute('data-pid')}"]`),
    ).toBeVisible();
    const first = page.getByTestId('growth-row').first();
    await expect(first.locator('.lbl')).toHaveAttribute('title', /make_node ← leak_steady ← main/);
    await first.click();
    // function, file:line and module of each frame
    await expect(page.getByTestId('stack-frames')).toContainText('leak_steady');
    await expect(page.getByTestId('stack-frames')).toContainText(/leaky\.c:\d+/);
    await shot(page, '08-symbolized-growth');
    // by function: leak_steady's total grew by what its stack grew (the workload: 57 more steps × 16,384 B)
    await page.getByRole('tab', { name: 'By function' }).click();
    const leakRow = page.locator('.row.function', { has: page.locator('.fn', { hasText: /^leak_steady$/ }) });
    await expect(leakRow).toHaveCount(1);
    await expect(leakRow.locator('.n').nth(3)).toHaveText('+912 KiB');
    await shot(page, '08b-by-function');
    await page.getByRole('tab', { name: 'By stack' }).click();
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    // the leak_steady node: in width-by-delta it takes a larger share than in width-by-target (it is most of the growth)
    const leakNode = async () =>
      (await flameNodes(page, 'diff-flame', 'leak_steady')).find((n) => n.rect !== null) ?? null;
    const byTarget = await leakNode();
    await withBarControl(page, 'diff-width', (el) => el.selectOption('delta').then(() => undefined));
    await page.waitForTimeout(300);
    const byDelta = await leakNode();
    expect(byTarget?.rect && byDelta?.rect, 'leak_steady drawn in both').toBeTruthy();
    expect(byDelta!.rect!.w).toBeGreaterThan(byTarget!.rect!.w * 1.2);
    await shot(page, '09-symbolized-diff-width-delta');
    await withBarControl(page, 'diff-width', (el) => el.selectOption('target').then(() => undefined));
    await withBarControl(page, 'diff-mode', (el) => el.selectOption('share').then(() => undefined));
    // search: matching nodes keep their colour, the others are dimmed
    const pixelAt = async (r: { x: number; y: number }) => {
      const { r: red, g, b } = await flamePixel(page, 'diff-flame', r);
      return [red, g, b];
    };
    const others = (await flameNodes(page, 'diff-flame'))
      .filter((n) => n.rect !== null && n.rect.w > 4 && !n.label.toLowerCase().includes('leak'))
      .map((n) => n.rect!);
    expect(others.length).toBeGreaterThan(0);
    const leakRect = (await leakNode())!.rect!;
    const [leakBefore, otherBefore] = [await pixelAt(leakRect), await pixelAt(others[0])];
    await page.getByTestId('flame-search').fill('leak');
    await page.waitForTimeout(300);
    expect(await pixelAt(leakRect)).toEqual(leakBefore);
    expect(await pixelAt(others[0])).not.toEqual(otherBefore);
    await shot(page, '10-diff-share-search');
  });

  test('Python frames (PYFRAMES/1 sidecars): merged, python-only and native views', async ({ page }) => {
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(ROOT, 'fixtures', 'python', 'py312')));
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    // the parent (two dumps: a growth pair) has Python frames
    const parent = page.locator('[data-testid=processes] tr', { has: page.locator('td', { hasText: /^2$/ }) }).first();
    await parent.click();
    await expect(parent.locator('.badge.py')).toBeVisible();
    await page.getByTestId('stack-mode').selectOption('python');
    const pid = await parent.getAttribute('data-pid');
    await page.getByTestId('tab-growth').click(); // the Suspects view opens first
    await expect(page.locator(`[data-testid=growth][data-pid="${pid}"]`)).toBeVisible();
    // the steady leak grows most: make_record ← leaky_handler ← Pipeline.step
    const first = page.getByTestId('growth-row').first();
    await expect(first.locator('.lbl')).toHaveAttribute(
      'title',
      /make_record \(workload\.py:\d+\) ← leaky_handler ← Pipeline\.step/,
    );
    await first.click();
    // the exact lines of the allocation and its call, read from the workload's source (marked @leak-alloc, @leak-call)
    const src = readFileSync(path.join(ROOT, 'fixtures', 'python', 'workload', 'workload.py'), 'utf8').split('\n');
    const lineOf = (mark: string) => src.findIndex((l) => l.includes(mark)) + 1;
    await expect(page.getByTestId('stack-frames')).toContainText(`workload.py:${lineOf('@leak-alloc')}`);
    await expect(page.getByTestId('stack-frames')).toContainText(`workload.py:${lineOf('@leak-call')}`);
    await expect(page.getByTestId('stack-frames').locator('.badge.py').first()).toBeVisible();
    await shot(page, '11-python-growth');
    await page.getByTestId('stack-mode').selectOption('merged');
    await page.getByTestId('tab-flame').click();
    // merged: the Python frame make_record and the interpreter's native frames are both in the flame graph
    await expect
      .poll(
        async () =>
          (await flameNodes(page, 'flame', 'make_record')).length > 0 &&
          (await flameNodes(page, 'flame', 'PyByteArray_Resize')).length +
            (await flameNodes(page, 'flame', 'libpython')).length >
            0,
        { timeout: 30_000 },
      )
      .toBe(true);
    await page.waitForTimeout(200);
    await shot(page, '12-python-merged-flame');
  });

  test('a load can be cancelled, and the next one works', async ({ page }) => {
    await page.goto('/');
    // 3,000 copies of a real dump under new names: long enough a load to cancel
    const one = fixtureSeries().find((f) => f.name.startsWith('exact.')) as {
      name: string;
      b64: string;
      mtimeMs: number;
    };
    const many = Array.from({ length: 3000 }, (_, i) => ({
      name: `copy.${100 + (i % 30)}.${i}.i${i}.heap`,
      b64: one.b64,
      mtimeMs: one.mtimeMs,
    }));
    await dropFiles(page, '[data-testid=dropzone]', many);
    await expect(page.getByTestId('progress')).toBeVisible();
    await page.getByTestId('cancel').click();
    await expect(page.getByTestId('progress')).toBeHidden({ timeout: 20_000 });
    await expect(page.getByTestId('job-info')).toHaveCount(0);
    await dropFiles(page, '[data-testid=dropzone]', fixtureSeries());
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });
  });

  test('"try it" opens the bundled sample series', async ({ page }) => {
    await page.goto('/');
    await page.getByTestId('try-sample').click();
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    await expect(page.locator('[data-testid=processes] tbody tr')).not.toHaveCount(0);
    await expect(page.locator('[data-testid=timeline-points] .snap').first()).toBeVisible();
    await shot(page, '07-sample');
  });
});
