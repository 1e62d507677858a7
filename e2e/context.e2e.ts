// The capture context in the app: processes named by their comm with the fork tree, the memory chart
// (heap estimate, allocated, resident, RSS) on a wall-clock axis, the gap's meaning, and an RSS log for
// dumps from jemalloc alone. Real fixtures: fixtures/python/py312 (a parent and its forked child),
// fixtures/hostile (hostile comm/cmdline), fixtures/rss-log.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, guardNetwork, ROOT, SHOTS, type DropFile } from './helpers.ts';

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
const PY312 = path.join(ROOT, 'fixtures', 'python', 'py312');

test.describe('capture context', () => {
  test.beforeEach(async ({ context, page }) => {
    await guardNetwork(context);
    page.on('dialog', (d) => {
      throw new Error(`unexpected dialog: ${d.message()}`);
    });
  });

  test('processes are named and form a tree; memory lines and the gap beside the heap estimate', async ({ page }) => {
    // the workload's own record of pids, parent pids and comm (context-expected.jsonl)
    const rows = readFileSync(path.join(PY312, 'context-expected.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pid: number; ppid: number; comm: string });
    const child = rows.find((r) => rows.some((q) => q.pid === r.ppid))!;
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(PY312));
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    const names = page.locator('[data-testid=processes] [data-testid=process-name]');
    await expect(names).toHaveCount(2);
    for (const n of await names.allTextContents()) expect(n.trim()).toContain(child.comm);
    // tree order: the parent first, the child indented under it
    await page.getByTestId('sort-tree').click();
    const trs = page.locator('[data-testid=processes] tbody tr');
    await expect(trs.nth(0)).toHaveAttribute('data-pid', String(child.ppid));
    await expect(trs.nth(1)).toHaveAttribute('data-pid', String(child.pid));
    await expect(trs.nth(1).getByTestId('process-name')).toContainText('↳');
    await expect(trs.nth(1).getByTestId('process-name')).toHaveAttribute(
      'title',
      new RegExp(`workload\\.py[\\s\\S]*parent pid ${child.ppid} \\(`),
    );
    await trs.nth(0).click();
    const chart = page.getByTestId('memory-chart');
    await expect(chart).toBeVisible();
    for (const k of ['heap', 'allocated', 'resident', 'rss', 'cgroupCurrent'])
      await expect(page.getByTestId(`memory-key-${k}`)).toBeVisible();
    await expect(page.getByTestId('memory-axis')).toContainText('capture times');
    // one time axis: the memory chart's is the timeline's (kind and caption), in UTC
    await expect(page.getByTestId('memory-axis')).toHaveAttribute(
      'data-axis',
      (await page.getByTestId('timeline-axis').getAttribute('data-axis')) ?? '',
    );
    await expect(page.getByTestId('memory-axis')).toHaveText(await page.getByTestId('timeline-axis').innerText());
    await expect(page.getByTestId('memory-axis')).toContainText('UTC');
    await expect(chart.locator('path.mem-line')).toHaveCount(5);
    await expect(page.getByTestId('memory-gap')).toContainText(/RSS .* − allocated .* = /);
    for (const w of [1024, 1280, 1920]) {
      await page.setViewportSize({ width: w, height: 800 });
      await page.waitForTimeout(250);
      await shot(page, `context-py312-${w}`);
    }
  });

  test('the real job: trainer, forked rollouts and the spawned evaluator as a tree', async ({ page }) => {
    const exp = JSON.parse(readFileSync(path.join(ROOT, 'fixtures', 'job', 'expected.json'), 'utf8')) as {
      processes: { pid: number; ppid: number; role: string; start: string }[];
    };
    const trainer = exp.processes.find((e) => e.role === 'trainer')!;
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(ROOT, 'fixtures', 'job', 'dumps')));
    await expect(page.getByTestId('job-info')).toContainText('5 processes', { timeout: 60_000 });
    // it opens on the process that holds suspect #1 — the workload's fastest leaker (plan.leakPerStep), which is
    // also the one killed — not on the trainer, and says why
    const plan = (
      JSON.parse(readFileSync(path.join(ROOT, 'fixtures', 'job', 'expected.json'), 'utf8')) as {
        plan: { leakPerStep: Record<string, number> };
      }
    ).plan.leakPerStep;
    const leakiest = Object.entries(plan).sort((a, b) => b[1] - a[1])[0][0];
    const victim = exp.processes.find((e) => e.role === leakiest)!;
    await expect(page.getByTestId('focus-reason')).toContainText('holds suspect #1');
    await expect(page.locator('.snapbar .pname')).toContainText(`pid ${victim.pid}`);
    await page.getByTestId('sort-tree').click();
    const trs = page.locator('[data-testid=processes] tbody tr');
    await expect(trs.nth(0)).toHaveAttribute('data-pid', String(trainer.pid));
    for (const e of exp.processes.filter((x) => x.ppid === trainer.pid)) {
      const row = page.locator(`[data-testid=processes] tbody tr[data-pid="${e.pid}"]`);
      await expect(row.getByTestId('process-name'), e.role).toContainText('↳');
      await expect(row.getByTestId('process-name'), e.role).toHaveAttribute(
        'title',
        e.start === 'subprocess' ? /evaluator\.py/ : /job\.py/,
      );
    }
    await trs.nth(0).click();
    // one time axis for both charts: the evaluator's dumps have no usable times (their mtimes are off the capture
    // clock), so the memory chart counts dumps as the timeline does, though the trainer's own dumps have times
    await expect(page.getByTestId('timeline-axis')).toHaveAttribute('data-axis', 'seq');
    await expect(page.getByTestId('memory-axis')).toHaveAttribute('data-axis', 'seq');
    await expect(page.getByTestId('memory-axis')).toHaveAttribute('title', /differ from the capture clock/);
    // the trainer's capture times are still each dump's, in UTC, in its tooltip
    await expect(page.locator('[data-testid=memory-points] rect').first().locator('title')).toHaveText(
      // named by its trigger (the job's dumps are jemalloc's interval dumps: `.i<N>.heap`)
      /^#\d+ \(interval\) · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(capture\)/,
    );
    for (const w of [1024, 1280]) {
      await page.setViewportSize({ width: w, height: 800 });
      await page.waitForTimeout(250);
      await shot(page, `context-job-tree-${w}`);
    }
  });

  test('hostile process names and command lines are shown as text', async ({ page }) => {
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(path.join(ROOT, 'fixtures', 'hostile')));
    await expect(page.getByTestId('job-info')).toContainText('process', { timeout: 30_000 });
    const name = page.locator('[data-testid=processes] [data-testid=process-name]').first();
    await expect(name).toContainText('<img src=x onerror=alert(6)>');
    await expect(name).toHaveAttribute('title', /<script>alert\(7\)<\/script>/);
    await expect(page.locator('[data-testid=processes] img')).toHaveCount(0);
  });

  test('dumps from jemalloc alone: plausible mtimes place them and an RSS log gives their RSS', async ({ page }) => {
    const dir = path.join(ROOT, 'fixtures', 'rss-log');
    const log = readFileSync(path.join(dir, 'rss.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // the mtimes the dumps had when written: each pid's k-th dump ↔ its k-th log row (git does not keep mtimes)
    const seen = new Map<string, number>();
    const files: DropFile[] = readdirSync(dir)
      .filter((n) => n.endsWith('.heap') || n.endsWith('.csv'))
      .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
      .map((name) => {
        const b64 = readFileSync(path.join(dir, name)).toString('base64');
        if (!name.endsWith('.heap')) return { name, b64, mtimeMs: Date.now() };
        const pid = name.split('.')[1];
        const k = seen.get(pid) ?? 0;
        seen.set(pid, k + 1);
        return { name, b64, mtimeMs: Date.parse(log.filter((r) => r[1] === pid)[k][0]) };
      });
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', files);
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    await page.locator('[data-testid=processes] tbody tr').first().click();
    await expect(page.getByTestId('memory-key-rss')).toContainText('RSS (log)');
    await expect(page.getByTestId('memory-axis')).toContainText('file modification times');
    await shot(page, 'context-rss-log-1280');
  });
});
