// The flame graphs on the real OOM-killed job (fixtures/oom-job), as a user reads them (issue 22 items 8, 12):
// the start-up rows folded into the root's row so the leak's leaf is on screen at 1280×800 without scrolling,
// root-first/leaf-first and left-heavy/by-name orders kept in the session, the selected suspect's stack brought
// into view, Callers/callees on the selected frame, "By function" from the leaf up. The leak's function and the
// script's lines come from the workload (expected.json, oom_job.py), not from heaplens.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { flameHighlighted, flameNodes, flameView, waitForRedraw, type FlameHit, type FlameRect } from './flame-hook.ts';
import { dropFiles, folderFiles, guardNetwork, ROOT, SHOTS, withBarControl, openTab } from './helpers.ts';

const OOM = path.join(ROOT, 'fixtures', 'oom-job');
const want = JSON.parse(readFileSync(path.join(OOM, 'expected.json'), 'utf8')) as {
  leak: { function: string };
  trainer: { pid: number };
};
const script = readFileSync(path.join(OOM, 'workload', 'oom_job.py'), 'utf8').split('\n');
const CALL_MAIN = script.findIndex((l) => /^\s+main\(\)/.test(l)) + 1;
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

type Rect = FlameRect;
type Hit = FlameHit;

/** The job's dumps dropped; suspect #1 (the trainer's history, the workload's StepLog.add) clicked. */
async function openJob(page: Page): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(OOM, 'dumps')));
  const row = page.getByTestId('suspect-row').first();
  await expect(row).toContainText(want.leak.function, { timeout: 90_000 });
  await row.click();
}

/** The leak's heaviest node in a graph: on screen (inside the canvas, not scrolled away) and wide enough to read. */
async function leakOnScreen(page: Page, graph: string): Promise<{ hit: Hit; canvas: Rect }> {
  await waitForRedraw(page, graph);
  const box = await page.getByTestId(graph).locator('canvas').boundingBox();
  expect(box).not.toBeNull();
  const hits = (await flameNodes(page, graph, want.leak.function)).filter((h) => h.rect !== null);
  expect(hits.length, `${want.leak.function} in ${graph}`).toBeGreaterThan(0);
  const hit = hits.reduce((a, b) => ((b.rect as Rect).w > (a.rect as Rect).w ? b : a));
  return { hit, canvas: { x: box!.x, y: box!.y, w: box!.width, h: box!.height } };
}

test.describe('flame graphs on fixtures/oom-job', () => {
  test.setTimeout(180_000);

  test('start-up folded into the root row: the leak on screen at 1280×800; unfold and fold again', async ({
    context,
    page,
  }) => {
    await guardNetwork(context);
    await page.setViewportSize({ width: 1280, height: 800 });
    await openJob(page);
    await page.getByTestId('tab-flame').click();
    const flame = page.getByTestId('flame');
    await expect(flame).toBeVisible();
    // the root's row says what it folded; the program's own frames follow: <module> at the line calling main()
    await expect(flame).toHaveAttribute(
      'data-fold',
      /^process start-up: \d+ frames folded \(interpreter frames › … › interpreter frames\) ▸$/,
    );
    const rows = (await flame.getAttribute('data-path'))!.split('|');
    expect(rows[0]).toMatch(/^all stacks · process start-up: /);
    expect(rows[1]).toBe(`<module>`);
    expect(rows.slice(2, 4)).toEqual(['main', want.leak.function]);
    const { hit, canvas } = await leakOnScreen(page, 'flame');
    const r = hit.rect as Rect;
    // drawn in the canvas, fully, without scrolling, and wide enough for its name
    expect(r.y).toBeGreaterThanOrEqual(0);
    expect(r.y + r.h).toBeLessThanOrEqual(canvas.h);
    expect(canvas.y + r.y + r.h).toBeLessThanOrEqual(800);
    expect(r.w).toBeGreaterThan(200);
    expect(CALL_MAIN).toBeGreaterThan(0);
    await shot(page, 'flame-01-folded-1280');
    for (const [w, h] of [
      [1024, 640],
      [1920, 1080],
    ]) {
      await page.setViewportSize({ width: w, height: h });
      const { hit: at, canvas: c } = await leakOnScreen(page, 'flame');
      expect(c.y + (at.rect as Rect).y + (at.rect as Rect).h, `${w}×${h}`).toBeLessThanOrEqual(h);
      await shot(page, `flame-01-folded-${w}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await waitForRedraw(page, 'flame');
    // a click on the folded row unfolds it: the start-up frames are rows of their own again
    const canvasEl = flame.locator('canvas');
    await canvasEl.click({ position: { x: 200, y: 8 } });
    await expect(flame).toHaveAttribute('data-fold', '');
    await expect(page.getByTestId('fold-startup')).not.toBeChecked();
    const unfolded = (await flame.getAttribute('data-path'))!.split('|');
    // as a laptop reads the dumps (no copy of the job machine's libc): __libc_start_main's frames by offset; through
    // heaplens open the engine reads this machine's libc as the CLI does, which here is the job machine's own build
    // (its build id matched), so they may be named
    const libcStart =
      test.info().project.name === 'node-engine'
        ? /^(libc\.so\.6\+0x[0-9a-f]+|__libc_start_\w+)$/
        : /^libc\.so\.6\+0x[0-9a-f]+$/;
    expect(unfolded.slice(0, 2)).toEqual(['all stacks', 'interpreter frames']);
    expect(
      unfolded.slice(2, 4).every((l) => libcStart.test(l)),
      unfolded.join(' | '),
    ).toBe(true);
    await withBarControl(page, 'fold-startup', (el) => el.check());
    await expect(flame).toHaveAttribute('data-fold', /process start-up/);
  });

  test('leaf first and by name: one component, the order kept in the session', async ({ context, page }) => {
    await guardNetwork(context);
    await openJob(page);
    await page.getByTestId('tab-flame').click();
    const flame = page.getByTestId('flame');
    await expect(flame).toHaveAttribute('data-path', /StepLog/);
    await withBarControl(page, 'flame-order', (el) => el.selectOption('leaf').then(() => undefined));
    // bottom-up: the allocation sites are the roots (the leak's StepLog.add: the interpreter frames it called
    // into are no root), its callers below it, the start-up fold at the bottom of each path
    await expect(flame).toHaveAttribute(
      'data-path',
      new RegExp(`^all stacks\\|${want.leak.function.replace('.', '\\.')}\\|main\\|<module>\\|process start-up`),
    );
    await shot(page, 'flame-02-leaf-first');
    await withBarControl(page, 'flame-siblings', (el) => el.selectOption('name').then(() => undefined));
    // by name: the root's children in label order (data-roots lists them heaviest first: compare the drawing)
    // the root's children: the second row (18 px rows), wherever the view is scrolled; read until the drawing
    // follows the order chosen (its answer comes from the engine: over a WebSocket it may come a frame later)
    const rootsByX = async (): Promise<string[]> => {
      const y = 18 - (await flameView(page, 'flame'))!.scrollY;
      const roots = (await flameNodes(page, 'flame')).filter(
        (x) => x.rect && Math.abs(x.rect.y - y) < 1 && x.rect.w > 0.5,
      );
      return [...roots].sort((a, b) => a.rect!.x - b.rect!.x).map((x) => x.label);
    };
    const byName = (xs: string[]): string[] => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    await expect
      .poll(async () => {
        const xs = await rootsByX();
        return xs.length > 1 && JSON.stringify(xs) === JSON.stringify(byName(xs));
      })
      .toBe(true);
    const byX = await rootsByX();
    expect(byX.length).toBeGreaterThan(1);
    expect(byX).toEqual(byName(byX));
    // the Diff tab shares the layout; the session written keeps it
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('flame-order')).toHaveValue('leaf');
    await expect(page.getByTestId('flame-siblings')).toHaveValue('name');
    const session = await page.evaluate(() => {
      const app = (window as unknown as { __heaplens: { session: { text: () => string } } }).__heaplens;
      return JSON.parse(app.session.text()) as { view: { extra: Record<string, unknown> } };
    });
    expect(session.view.extra).toMatchObject({ flameOrder: 'leaf', flameSiblings: 'name', foldStartup: true });
  });

  test('a suspect selected, then Flame and Diff: its stack outlined and in view; Callers/callees on the frame', async ({
    context,
    page,
  }) => {
    await guardNetwork(context);
    await page.setViewportSize({ width: 1280, height: 800 });
    await openJob(page);
    for (const [tab, graph] of [
      ['tab-flame', 'flame'],
      ['tab-diff', 'diff-flame'],
    ]) {
      await page.getByTestId(tab).click();
      await expect(page.getByTestId(graph)).toBeVisible();
      await expect
        .poll(async () => (await flameHighlighted(page, graph))?.label ?? null, { timeout: 20_000 })
        .not.toBeNull();
      // the frame at the graph's size (it learns it from a ResizeObserver after mounting), the stack revealed in it
      await waitForRedraw(page, graph);
      const h = (await flameHighlighted(page, graph))!;
      const box = (await page.getByTestId(graph).locator('canvas').boundingBox())!;
      const r = h.rect!;
      expect(r.y, graph).toBeGreaterThanOrEqual(0);
      expect(r.y + r.h, graph).toBeLessThanOrEqual(box.height);
      expect(r.x, graph).toBeGreaterThanOrEqual(-0.5);
      expect(r.x + r.w, graph).toBeLessThanOrEqual(box.width + 0.5);
      expect(r.w, graph).toBeGreaterThan(100);
      await shot(page, `flame-03-suspect-${graph}`);
    }
    // a frame selected in the flame graph: Callers/callees opens on it, not on a caller
    await page.getByTestId('tab-flame').click();
    const add = (await flameNodes(page, 'flame', want.leak.function)).filter((x) => x.rect && x.rect.w > 20)[0];
    expect(add).toBeTruthy();
    await page
      .getByTestId('flame')
      .locator('canvas')
      .click({ position: { x: add.rect!.x + add.rect!.w / 2, y: add.rect!.y + add.rect!.h / 2 } });
    await openTab(page, 'tab-sandwich');
    const pick = page.getByTestId('sandwich-function');
    await expect(pick.locator('option:checked')).toHaveText(new RegExp(`^${want.leak.function.replace('.', '\\.')}`));
    await expect(page.getByTestId('sandwich-callers')).toHaveAttribute(
      'data-roots',
      new RegExp(`^${want.leak.function.replace('.', '\\.')}`),
    );
    await shot(page, 'flame-04-sandwich');
  });

  test('"By function" leads with the allocation site, its callers after', async ({ context, page }) => {
    await guardNetwork(context);
    await openJob(page);
    await page.getByTestId('tab-growth').click();
    await page.getByRole('tab', { name: 'By function' }).or(page.getByText('By function')).first().click();
    const rows = page.locator('.row.function');
    await expect(rows.first()).toBeVisible();
    const labels = await rows.evaluateAll((els) => els.slice(0, 6).map((e) => e.textContent ?? ''));
    const at = (name: string): number => labels.findIndex((l) => l.includes(name));
    expect(at(want.leak.function), labels.join('\n')).toBeGreaterThanOrEqual(0);
    // the leak's function before the frames calling it (main, <module>), whatever their totals
    for (const caller of ['main', '<module>'])
      if (at(caller) >= 0) expect(at(want.leak.function)).toBeLessThan(at(caller));
    await shot(page, 'flame-05-by-function');
  });
});
