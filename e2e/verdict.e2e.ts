// Why the job died, in the app and its report, on the real OOM kill of fixtures/oom-job (dumps + the kernel log,
// cgroup files, job log and smaps_rollup samples it copied): the verdict sentence first with the culprits and the
// logs read; the kill as a marker on the timeline and the victim's memory chart, labelled who and when; the
// cgroup's limit as a line with its value and every other process's time to it; heap vs RSS with the part outside
// named; a typed limit; the report's first sentence the same. Every expected figure is from the fixture's
// expected.json (the workload's waitpid and counters, the cgroup's files, /proc smaps_rollup), never heaplens'.
// Screenshots at 1024×640, 1280×800, 1920×1080: test-results/screenshots/verdict-*.png.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles, folderFiles, guardNetwork, heaplens, ROOT, SHOTS, type DropFile } from './helpers.ts';

const OOM = path.join(ROOT, 'fixtures', 'oom-job');
const LOGS = ['dmesg.txt', 'dmesg-T.txt', 'job.log'];

interface Expected {
  cgroup: { limitBytes: number };
  kill: { pid: number; role: string; seenByTrainerAt: { realtime: number } };
  trainer: { pid: number };
  processes: { role: string; pid: number }[];
}
const want = JSON.parse(readFileSync(path.join(OOM, 'expected.json'), 'utf8')) as Expected;
const MiB = 1048576;

async function openOomJob(page: Page): Promise<void> {
  await page.goto('/');
  const files: DropFile[] = ['dumps', 'logs/cgroup', 'smaps'].flatMap((d) => folderFiles(path.join(OOM, d)));
  for (const name of LOGS) {
    const abs = path.join(OOM, 'logs', name);
    files.push({ name, b64: readFileSync(abs).toString('base64'), mtimeMs: statSync(abs).mtimeMs });
  }
  await dropFiles(page, '[data-testid=dropzone]', files);
  await expect(page.getByTestId('verdict')).toBeVisible({ timeout: 60_000 });
}

test('the verdict first: the kernel OOM-killed the loader, the culprits ranked, the logs read listed', async ({
  context,
  page,
}) => {
  await guardNetwork(context);
  await openOomJob(page);
  const v = page.getByTestId('verdict');
  // named by the role the job's log gives the pid (expected.json: the workload's role)
  await expect(v).toContainText(`The kernel OOM-killed ${want.kill.role} (pid ${want.kill.pid},`);
  await expect(v).toContainText('copy-on-write');
  // the culprits by their share: the trainer's leak (the workload's StepLog.add) and the loaders' copied pages
  const culprits = page.getByTestId('culprits');
  await expect(culprits.locator('li')).toHaveCount(2);
  await expect(culprits.locator('li[data-kind=heap]')).toContainText('StepLog.add');
  await expect(culprits.locator('li[data-kind=heap]')).toContainText(`pid ${want.trainer.pid}`);
  await expect(culprits.locator('li[data-kind=outside-heap]')).toContainText('copy-on-write');
  const loaders = want.processes.filter((p) => p.role.startsWith('loader')).map((p) => p.pid);
  await expect(culprits.locator('li[data-kind=outside-heap]')).toContainText(`pid ${loaders.join(', ')}`);
  // the logs read, each named with what it gave: none of them is an ignored file
  await expect(v.locator('summary')).toContainText('dmesg.txt');
  await v.locator('summary').click();
  await expect(page.getByTestId('logs-read')).toContainText(`pid ${want.kill.pid}`);
  for (const name of LOGS) await expect(page.getByTestId('logs-read')).toContainText(name);
  await expect(page.getByTestId('warnings')).not.toContainText(/dmesg|job\.log|memory\.limit_in_bytes/);
  // the victim's row says what the kernel did, and no banner calls it "stopped without a final dump" beside that
  const victimRow = page.locator(`[data-testid=processes] tr[data-pid="${want.kill.pid}"]`);
  await expect(victimRow).toContainText(want.kill.role);
  await expect(victimRow.getByTestId('process-killed')).toHaveAttribute('title', 'oom-killed');
  await expect(page.getByTestId('suspects-killed')).toHaveCount(0);
});

test("the watchdog's kill: the verdict names rollout-1 by the role its logs give, the launcher's exit codes its fate", async ({
  context,
  page,
}) => {
  await guardNetwork(context);
  const dir = path.join(ROOT, 'fixtures', 'watchdog-job');
  const wd = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) as {
    limitBytes: number;
    kill: { pid: number; role: string };
    workers: { pid: number; role: string; fate: string }[];
  };
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [
    ...folderFiles(path.join(dir, 'dumps')),
    ...folderFiles(path.join(dir, 'logs')),
  ]);
  const v = page.getByTestId('verdict');
  await expect(v).toContainText(`The job's memory watchdog killed ${wd.kill.role} (pid ${wd.kill.pid},`, {
    timeout: 60_000,
  });
  await expect(v).toContainText(`when the job reached its ${wd.limitBytes / MiB} MiB limit`);
  for (const w of wd.workers)
    await expect(page.locator(`[data-testid=processes] tr[data-pid="${w.pid}"]`)).toContainText(w.role);
  // torn down by the launcher: no kill badge; the victim's says it
  for (const w of wd.workers.filter((x) => x.fate === 'torn-down'))
    await expect(page.locator(`[data-testid=processes] tr[data-pid="${w.pid}"]`)).toHaveAttribute(
      'data-killed',
      'false',
    );
  await expect(
    page.locator(`[data-testid=processes] tr[data-pid="${wd.kill.pid}"]`).getByTestId('process-killed'),
  ).toHaveAttribute('title', 'oom-killed');
  await expect(page.getByTestId('suspects-killed')).toHaveCount(0);
  // the watchdog's limit bounds the job: its one row, no process's own countdown
  await expect(page.getByTestId('limit-value')).toHaveAttribute('data-bytes', String(wd.limitBytes));
  await expect(page.getByTestId('limit-row-job')).toContainText('over the limit');
});

test('the kill as a marker, the limit as a line with each process’s time to it, heap vs RSS named', async ({
  context,
  page,
}) => {
  await guardNetwork(context);
  await openOomJob(page);
  // the timeline: the kill on the victim's line, labelled who killed it and when (UTC, the kernel's time)
  const tk = page.getByTestId('timeline-kill');
  await expect(tk).toHaveAttribute('data-pid', String(want.kill.pid));
  await expect(tk).toHaveAttribute('data-by', 'kernel');
  await expect(tk.locator('text')).toContainText('killed: kernel');
  // the kernel killed it shortly before the trainer's waitpid saw it (expected.json): the label's second is one of those
  const seen = new Date(want.kill.seenByTrainerAt.realtime * 1000);
  const label = (await tk.locator('text').textContent()) ?? '';
  const hms = /(\d\d):(\d\d):(\d\d)/.exec(label);
  expect(hms, label).not.toBeNull();
  const at = Date.UTC(seen.getUTCFullYear(), seen.getUTCMonth(), seen.getUTCDate(), +hms![1], +hms![2], +hms![3]);
  expect(seen.getTime() - at).toBeGreaterThanOrEqual(-1000);
  expect(seen.getTime() - at).toBeLessThan(5000);
  // the limit: the cgroup's 320 MiB, on the timeline and in the panel, with where it came from
  await expect(page.getByTestId('timeline-limit')).toHaveAttribute('data-bytes', String(want.cgroup.limitBytes));
  const lv = page.getByTestId('limit-value');
  await expect(lv).toHaveAttribute('data-bytes', String(want.cgroup.limitBytes));
  await expect(lv).toContainText(`${want.cgroup.limitBytes / MiB} MiB`);
  // the cgroup's limit bounds the job's sum: the victim says who killed it, the job says it was at the limit, and no
  // other process has a countdown of its own
  const rows = page.getByTestId('limit-row');
  await expect(rows).toHaveCount(1);
  await expect(rows.and(page.locator(`[data-pid="${want.kill.pid}"]`))).toContainText('killed by the kernel');
  await expect(page.getByTestId('limit-row-job')).toContainText('at the limit');
  // the victim's memory chart: the marker, the limit line, heap vs RSS with the outside part named copy-on-write
  await page.locator(`[data-testid=processes] tr[data-pid="${want.kill.pid}"]`).click();
  const mc = page.getByTestId('memory-chart');
  await expect(mc.getByTestId('memory-kill')).toHaveAttribute('data-by', 'kernel');
  await expect(mc.getByTestId('memory-limit')).toHaveAttribute('data-bytes', String(want.cgroup.limitBytes));
  await expect(mc.getByTestId('memory-key-outside')).toHaveAttribute('data-explanation', 'copy-on-write');
  await expect(mc.getByTestId('memory-key-outside')).toContainText(/outside the heap .*: copy-on-write/);
  // a forked loader's heap estimate holds the dataset it inherited: its own heap is drawn apart
  await expect(mc.getByTestId('memory-key-own-heap')).toContainText('inherited');
  await expect(mc.getByTestId('memory-outside-band')).toHaveCount(1);
  await expect(mc.getByTestId('memory-key-rss')).toBeVisible();
  await expect(mc.getByTestId('memory-key-heap')).toBeVisible();
  mkdirSync(SHOTS, { recursive: true });
  for (const size of [
    { width: 1024, height: 640 },
    { width: 1280, height: 800 },
    { width: 1920, height: 1080 },
  ]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, `verdict-${size.width}.png`) });
    const box = await page.getByTestId('timeline').boundingBox();
    const mbox = await mc.boundingBox();
    if (box && mbox)
      await page.screenshot({
        path: path.join(SHOTS, `verdict-charts-${size.width}.png`),
        clip: { x: box.x, y: box.y, width: box.width, height: mbox.y + mbox.height - box.y },
      });
  }
  // a typed limit: the line and every time to it follow; a bad one is refused with the reason; empty goes back
  const input = page.getByTestId('limit-input');
  await input.fill('1G');
  await input.press('Enter');
  await expect(lv).toHaveAttribute('data-bytes', String(1024 ** 3));
  await expect(page.getByTestId('timeline-limit')).toHaveAttribute('data-bytes', String(1024 ** 3));
  await expect(mc.getByTestId('memory-key-limit')).toContainText(/limit 1\.0+ GiB/);
  // typed, it bounds the job (the default): the job's time to it, no process's own
  await expect(page.getByTestId('limit-row-job')).toContainText('left:');
  await expect(rows.and(page.locator(`[data-pid="${want.trainer.pid}"]`))).toHaveCount(0);
  // as a limit of each process: each its own time to it, the job none
  await page.getByTestId('limit-scope').selectOption('process');
  await expect(rows.and(page.locator(`[data-pid="${want.trainer.pid}"]`))).toContainText('left:');
  await expect(page.getByTestId('limit-row-job')).toHaveCount(0);
  await input.fill('eight gigs');
  await input.press('Enter');
  await expect(page.getByTestId('limit-error')).toContainText('not a byte count');
  await expect(lv).toHaveAttribute('data-bytes', String(1024 ** 3));
  await input.fill('');
  await input.press('Enter');
  await expect(lv).toHaveAttribute('data-bytes', String(want.cgroup.limitBytes));
});

test("the report opens with the same sentence and the kill, from the job's dumps and logs", async ({
  browser,
  context,
  page,
}) => {
  // the app's load, the CLI's report of the same files and the report's own load, on a shared machine
  test.setTimeout(180_000);
  await guardNetwork(context);
  await openOomJob(page);
  const sentence = (await page.getByTestId('verdict-sentence').textContent())!.trim();
  const out = path.join(ROOT, 'test-results', 'verdict-e2e');
  mkdirSync(out, { recursive: true });
  const html = path.join(out, 'oom-job-report.html');
  heaplens('report', '-o', html, path.join(OOM, 'dumps'), path.join(OOM, 'logs'), path.join(OOM, 'smaps'));
  // the report from disk, in a context of its own (this one lets nothing but the app's server through)
  const rc = await browser.newContext();
  const rp = await rc.newPage();
  await rp.goto(pathToFileURL(html).href);
  const v = rp.getByTestId('verdict-sentence');
  await expect(v).toBeVisible({ timeout: 30_000 });
  await expect(v).toHaveText(sentence);
  await expect(rp.getByTestId('culprits').locator('li[data-kind=heap]')).toContainText('StepLog.add');
  await expect(rp.getByTestId('timeline-kill')).toHaveAttribute('data-pid', String(want.kill.pid));
  await expect(rp.getByTestId('limit-value')).toHaveAttribute('data-bytes', String(want.cgroup.limitBytes));
  // read-only: the report keeps the limit it was made with
  await expect(rp.getByTestId('limit-input')).toHaveCount(0);
  await rp.screenshot({ path: path.join(SHOTS, 'verdict-report.png') });
  await rc.close();
});
