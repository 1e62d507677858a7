// The first screen holds the answer (issue 44 item 6), on the three real dead jobs of fixtures/ (watchdog-job with
// its launcher, job and watchdog logs; oom-job with its kernel log, cgroup files and smaps; the fork job of job/) at
// 1024×640, 1280×800 and 1920×1080, without a click or a scroll: the verdict; suspect #1 with its file:line and rate;
// the process table with five rows (or every process, when fewer); the memory chart whole; suspect #1's stack in the
// right column (its title, the row's call site, and its first frame). Nothing cut or overlapping (the looks check,
// looks-check.ts). Screenshots: test-results/screenshots/first-screen-fit-<job>-<width>.png.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { dropFiles, folderFiles, ROOT, SHOTS, type DropFile } from './helpers.ts';
import { layoutProblems, shownBox } from './looks-check.ts';

mkdirSync(SHOTS, { recursive: true });
const F = path.join(ROOT, 'fixtures');

function logFile(abs: string): DropFile {
  return { name: path.basename(abs), b64: readFileSync(abs).toString('base64'), mtimeMs: statSync(abs).mtimeMs };
}
/** each job as its README says to open it, and its process count */
const JOBS: Record<string, { files: () => DropFile[]; processes: number }> = {
  'watchdog-job': {
    files: () => ['dumps', 'logs'].flatMap((d) => folderFiles(path.join(F, 'watchdog-job', d))),
    processes: 5,
  },
  'oom-job': {
    files: () => [
      ...['dumps', 'logs/cgroup', 'smaps'].flatMap((d) => folderFiles(path.join(F, 'oom-job', d))),
      ...['dmesg.txt', 'dmesg-T.txt', 'job.log'].map((n) => logFile(path.join(F, 'oom-job', 'logs', n))),
    ],
    processes: 4,
  },
  job: { files: () => folderFiles(path.join(F, 'job', 'dumps')), processes: 5 },
};
const SIZES = [
  { width: 1024, height: 640 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

async function open(page: Page, job: string): Promise<void> {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', JOBS[job].files());
  await expect(page.getByTestId('job-info')).toContainText(`${JOBS[job].processes} processes`, { timeout: 60_000 });
  await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('suspects-table')).not.toContainText('so far', { timeout: 30_000 });
  await expect(page.getByTestId('memory-chart')).toBeVisible();
  await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible({ timeout: 30_000 });
}

/** The whole element is on screen (a pixel of rounding aside). */
async function whole(el: Locator, what: string): Promise<void> {
  const { box, shown } = await shownBox(el);
  expect(box.h, `${what}: has a box`).toBeGreaterThan(0);
  expect(shown.h, `${what}: ${shown.h.toFixed(1)} of ${box.h.toFixed(1)} px high shown`).toBeGreaterThanOrEqual(
    box.h - 1,
  );
  expect(shown.w, `${what}: ${shown.w.toFixed(1)} of ${box.w.toFixed(1)} px wide shown`).toBeGreaterThanOrEqual(
    box.w - 1,
  );
}

for (const size of SIZES)
  for (const job of Object.keys(JOBS))
    test(`${job} at ${size.width}×${size.height}: verdict, suspect #1, five processes, memory chart, #1's stack`, async ({
      page,
    }) => {
      await page.setViewportSize(size);
      await open(page, job);
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(SHOTS, `first-screen-fit-${job}-${size.width}.png`) });

      // the verdict: its sentence starts on screen (its box scrolls, with a cue, when the culprits run long)
      const sentence = page.getByTestId('verdict-sentence');
      const { shown: vs } = await shownBox(sentence);
      expect(vs.h, 'the verdict on screen').toBeGreaterThan(40);

      // suspect #1: its call site (file:line) and rate
      const first = page.getByTestId('suspect-row').first();
      await whole(first.getByTestId('suspect-site'), "suspect #1's file:line");
      await expect(first.getByTestId('suspect-site')).toHaveText(/\(.+:\d+\)/);
      await whole(first.getByTestId('suspect-rate'), "suspect #1's rate");
      await expect(first.getByTestId('suspect-rate')).toHaveText(/\/(s|dump)$/);

      // five processes (or all of them) whole in the table
      const rows = page.locator('[data-testid=processes] tbody tr');
      const n = Math.min(5, JOBS[job].processes);
      await expect(rows).toHaveCount(JOBS[job].processes);
      for (let k = 0; k < n; k++) await whole(rows.nth(k), `process row ${k + 1}`);

      // the memory chart whole: its plot and its key
      const mc = page.getByTestId('memory-chart');
      await whole(mc.locator('svg'), 'the memory chart');
      await whole(mc.getByTestId('memory-key-heap'), "the memory chart's key");

      // the right column shows suspect #1's stack without a click: its title is the row's call site, and its first
      // frame is on screen
      const fn = (await first.locator('.fn').textContent())!.trim();
      const site = (await first.getByTestId('suspect-site').textContent())!.trim();
      const panel = page.getByTestId('stack-panel');
      await expect(panel.locator('h3')).toHaveText(`${fn} ${site}`);
      await whole(panel.locator('h3'), "the stack panel's title");
      await whole(panel.getByTestId('stack-frames').locator('li:not(.folded)').first(), "the stack's first frame");
      await expect(panel.getByTestId('stack-frames').locator('li:not(.folded)').first()).toContainText(
        fn.split(' ')[0],
      );

      // nothing cut or overlapping, no sideways scroll
      const r = await layoutProblems(page);
      expect(r.checked).toBeGreaterThan(10);
      expect(r.scrollX).toBeLessThanOrEqual(0);
      expect(r.problems, `${job} at ${size.width}×${size.height}`).toEqual([]);
    });
