// The exit dump after teardown, in the app (issue 44 item 2), on the real OOM job of fixtures/oom-job: its trainer
// wrote a final dump at exit after Python freed its history (expected.json: exitDumpAfterTeardown). Every view
// reads the series without it and marks it: the process table's live figure is the last interval dump's, the
// Suspects holder's sparkline and the stack panel draw it hollow off the line, the timeline's default target is
// the dump before it, where it is a hollow point. Expected figures from the workload's arithmetic. Screenshots:
// test-results/screenshots/exit-dump-*.png.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, folderFiles, guardNetwork, openTab, ROOT, SHOTS } from './helpers.ts';

const OOM = path.join(ROOT, 'fixtures', 'oom-job');
const want = JSON.parse(readFileSync(path.join(OOM, 'expected.json'), 'utf8')) as {
  trainer: { pid: number };
  leak: { function: string; stepBytes: number };
};
const MiB = 1048576;

test('the exit dump after teardown is a marked point: the table, the sparkline, the timeline and the panel read the series', async ({
  context,
  page,
}) => {
  await guardNetwork(context);
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(OOM, 'dumps')));
  const row = page.getByTestId('suspect-row').first();
  await expect(row).toContainText(want.leak.function, { timeout: 60_000 });
  // the leak's row grew (its Δ is not the exit dump's collapse), and its holder's sparkline marks the exit dump
  await expect(row.getByTestId('suspect-delta')).toHaveText(/^\+/);
  const spark = row.locator(`[data-testid=suspect-spark][data-pid="${want.trainer.pid}"]`);
  await expect(spark.getByTestId('spark-exit-dump')).toHaveCount(1);
  await expect(spark).toHaveAttribute('title', /exit dump after teardown/);

  // the process table: the trainer's live figure at the series' end holds the history the log's step 420 had
  // (421 steps of 256 KiB: 105 MiB), not the 0.5 MiB of the exit dump
  const tr = page.locator(`[data-testid=processes] tr[data-pid="${want.trainer.pid}"]`);
  await tr.click();
  const live = ((await tr.locator('td.n').nth(1).textContent()) ?? '').trim();
  const m = /^([\d.]+) MiB$/.exec(live);
  expect(m, live).not.toBeNull();
  expect(Number(m![1]) * MiB).toBeGreaterThan(421 * want.leak.stepBytes);

  // the timeline: the exit dump is a hollow point, the default target the dump before it
  const points = page.getByTestId('timeline-points');
  const exit = points.locator('.snap.exit-dump');
  await expect(exit).toHaveCount(1);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, 'exit-dump-timeline.png') });
  const exitSeq = Number(await exit.getAttribute('data-seq'));
  await expect(page.locator('.marker-label').filter({ hasText: 'target' })).toHaveText(`target #${exitSeq - 1}`);

  // the stack panel of the leak: its series ends before the exit dump, which is drawn apart
  await openTab(page, 'tab-suspects');
  await spark.click();
  const panel = page.getByTestId('stack-panel');
  await expect(panel.getByTestId('panel-exit-dump')).toHaveCount(1);
  await expect(panel).toContainText('not in the series');
  await page.screenshot({ path: path.join(SHOTS, 'exit-dump-panel.png') });
});
