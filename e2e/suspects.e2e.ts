// The Suspects view (opens first): the job-wide ranking of the fixture job — leaky.c's leak is one row
// over its exact and sampled runs, steady; the processes that wrote no final dump (the sampled run's last
// dump is cut, as by a kill mid-write) are marked killed; a holder's sparkline opens its process and stack
// on the growth table, whose default target is the last complete dump.
import { flameNodes, flamePixel, type FlameHit } from './flame-hook.ts';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, elfSymbolRange, fixtureSeries, guardNetwork, labelHits, ROOT, SHOTS } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
const LEAK_RANGE = elfSymbolRange(path.join(ROOT, 'fixtures', 'jemalloc', 'bin', 'leaky'), 'leak_steady');

test('Suspects: job-wide ranking, pattern badges, σ sparklines, killed processes, click opens process + stack', async ({
  context,
  page,
}) => {
  const net = await guardNetwork(context);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto('/');
  const files = fixtureSeries();
  await dropFiles(page, '[data-testid=dropzone]', files);
  await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });

  // it opens first
  await expect(page.getByTestId('tab-suspects')).toHaveAttribute('aria-selected', 'true');
  const view = page.getByTestId('suspects-view');
  await expect(view).toBeVisible();
  const rows = view.getByTestId('suspect-row');
  await expect(rows.first()).toBeVisible();
  // the top row is a steady grower; scores never increase down the list
  await expect(rows.first()).toHaveAttribute('data-pattern', 'steady');
  // its first page drawn (the rows after the first few come a frame later)
  await expect(view.getByTestId('suspects-table')).toHaveAttribute('data-settled', 'true');
  const scores = (await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-score'))))) as number[];
  expect(scores.length).toBeGreaterThan(1);
  for (const s of scores) expect(Number.isFinite(s)).toBe(true);
  for (let i = 1; i < scores.length; i++) expect(scores[i], `row ${i + 1}`).toBeLessThanOrEqual(scores[i - 1]);

  // leaky's leak (make_node ← leak_steady …): one row for both runs of the program
  const titles = await rows.locator('.lbl').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? ''));
  const leakAt = titles.findIndex((t) => labelHits(t, 'leak_steady', LEAK_RANGE));
  expect(leakAt, titles.join('\n')).toBeGreaterThanOrEqual(0);
  const leak = rows.nth(leakAt);
  await expect(leak).toHaveAttribute('data-procs', '2');
  await expect(leak).toHaveAttribute('data-pattern', 'steady');
  const sparks = leak.getByTestId('suspect-spark');
  await expect(sparks).toHaveCount(2);
  const exactPid =
    (await page.locator('[data-testid=processes] tr[data-prefix="exact"]').getAttribute('data-pid')) ?? '';
  const sampledPid =
    (await page.locator('[data-testid=processes] tr[data-prefix="sampled"]').getAttribute('data-pid')) ?? '';
  expect((await sparks.evaluateAll((els) => els.map((e) => e.getAttribute('data-pid')))).sort()).toEqual(
    [exactPid, sampledPid].sort(),
  );
  // the sampled run's band is drawn (σ > 0); its cut last dump is a hollow mark off the line
  const sampledSpark = leak.locator(`[data-testid=suspect-spark][data-pid="${sampledPid}"]`);
  await expect(sampledSpark.locator('polygon.band')).toHaveCount(1);
  await expect(sampledSpark.locator('circle.cut')).toHaveCount(1);
  // the plateau (1 MiB, allocated before the first dump) is flat in both runs: a row that cannot score, hidden
  // until asked for
  await expect(view.locator('[data-testid=suspect-row][data-pattern="flat"]')).toHaveCount(0);
  await view.getByTestId('suspects-quiet').click();
  await expect(view.locator('[data-testid=suspect-row][data-pattern="flat"][data-procs="2"]').first()).toBeVisible();

  // process table: each process's top pattern; the two without a final dump are killed, the exact run is not
  for (const prefix of ['exact', 'sampled', 'pygrow']) {
    const tr = page.locator(`[data-testid=processes] tr[data-prefix="${prefix}"]`);
    await expect(tr.getByTestId('process-pattern').getByTestId('pattern-badge')).toHaveAttribute(
      'data-pattern',
      'steady',
    );
    await expect(tr).toHaveAttribute('data-killed', prefix === 'exact' ? 'false' : 'true');
  }
  await expect(view.getByTestId('suspects-killed')).toContainText('cut off');
  await shot(page, 'suspects-1280');
  for (const w of [1024, 1920]) {
    await page.setViewportSize({ width: w, height: 800 });
    await shot(page, `suspects-${w}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // a holder's sparkline opens its process, the growth tab and that stack
  await sampledSpark.click();
  await expect(page.getByTestId('tab-growth')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('[data-testid=processes] tr[data-prefix="sampled"]')).toHaveClass(/focus/);
  const growth = page.getByTestId('growth');
  await expect(growth).toHaveAttribute('data-pid', sampledPid);
  // default target: the last complete dump (the cut one is the last of 24)
  const nSampled = files.filter((f) => f.name.startsWith('sampled.')).length;
  await expect(growth).toHaveAttribute('data-target', String(nSampled - 2));
  const selected = growth.locator('[data-testid=growth-row].sel');
  await expect(selected).toHaveCount(1);
  expect(labelHits((await selected.locator('.lbl').getAttribute('title')) ?? '', 'leak_steady', LEAK_RANGE)).toBe(true);
  // the stack panel says what the ranking found: steady, held by both runs, its end σ
  const panel = page.getByTestId('stack-panel');
  await expect(panel).toContainText('steady');
  await expect(panel).toContainText('held by');
  await expect(panel).toContainText('±2σ at the end');
  // sampled deltas within 2σ are greyed (the plateau and the worker's buffers did not change)
  await expect(growth.locator('[data-testid=growth-row] [data-noise="true"]').first()).toBeVisible();
  await shot(page, 'suspects-opened');

  // the diff flame graph of the sampled run greys what sampling can explain: the 1 MiB plateau (unchanged) is grey
  await page.getByTestId('tab-diff').click();
  await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
  const PLATEAU_RANGE = elfSymbolRange(path.join(ROOT, 'fixtures', 'jemalloc', 'bin', 'leaky'), 'plateau');
  const findPlateau = async (): Promise<FlameHit | undefined> =>
    (await flameNodes(page, 'diff-flame')).find(
      (n) => labelHits(n.label, 'plateau', PLATEAU_RANGE) && n.rect !== null && n.rect.w > 4,
    );
  // the sampled run's diff arrives after the tab opens: wait for its plateau node
  let plateauNode: FlameHit | undefined;
  await expect
    .poll(async () => {
      plateauNode = await findPlateau();
      return plateauNode !== undefined;
    })
    .toBe(true);
  // grey: no hue (the growth colour is vermillion, the shrink colour blue). Read until the diff with its σ is the
  // one drawn: a diff asked before the sampled run's σ was in could be drawn first (CI once read vermillion here).
  let px = { r: 0, g: 0, b: 0 };
  const hue = async (): Promise<number> => {
    const node = await findPlateau();
    px = await flamePixel(page, 'diff-flame', node?.rect ?? plateauNode?.rect ?? { x: 0, y: 0 });
    return Math.max(Math.abs(px.r - px.g), Math.abs(px.g - px.b));
  };
  await expect.poll(hue, { message: 'the plateau is drawn grey' }).toBeLessThan(16);
  expect(Math.abs(px.r - px.g), JSON.stringify(px)).toBeLessThan(16);
  expect(Math.abs(px.g - px.b), JSON.stringify(px)).toBeLessThan(16);
  await shot(page, 'suspects-diff-noise');

  expect(errors).toEqual([]);
  expect(net.blocked).toEqual([]);
});
