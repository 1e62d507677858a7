// A job of many processes on the first screen (issue 49 item 4): a generated job of 60 processes on 3 hosts
// (bench/generate-series.mjs: `node-0X/` folders, pids 1000…1019 on each, every process growing two stacks, the
// first process of each host — pid 1000 — ten times as fast), opened through `heaplens open` (the folders say
// the hosts; a browser's file input would merge files of the same name). Needs `npm run build` (the CLI) and
// `vite build`. Expected from the generator's arithmetic: 3 hosts of 20, the fast ones are the outliers.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { ROOT, SHOTS } from './helpers.ts';

const PROCESSES = 60;
const HOSTS = ['node-00', 'node-01', 'node-02'];
const PER_HOST = PROCESSES / HOSTS.length;
let dir = '';
let engine: ChildProcess | null = null;

test.beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'heaplens-e2e-groups-'));
  const generator = path.resolve(ROOT, 'bench', 'generate-series.mjs');
  const { writeSeries } = (await import(generator)) as { writeSeries: (d: string, o: object) => number };
  writeSeries(dir, {
    processes: PROCESSES,
    snapshots: 5,
    stacks: 30,
    deep: true,
    hosts: HOSTS.length,
    growing: 2,
    outliers: HOSTS.length,
  });
});
test.afterAll(() => {
  engine?.kill('SIGINT');
});

test('grouped process list, fates counted, and the timeline as bands above 50 processes', async ({ page }) => {
  engine = spawn(process.execPath, [path.join(ROOT, 'bin', 'heaplens.js'), 'open', dir, '--no-browser'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    engine!.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    engine!.on('exit', (code) => reject(new Error(`heaplens open exited ${code}`)));
  });
  await page.goto(url);
  await expect(page.getByTestId('job-info')).toContainText(`${PROCESSES} processes`, { timeout: 60_000 });
  await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 60_000 });

  // the list: the processes that matter, then one group per host of 20 (one command on each)
  const groups = page.getByTestId('process-group');
  await expect(groups).toHaveCount(1 + HOSTS.length);
  // (hosts by their largest growth: the list sorts by growth, most first)
  const hosts = await groups.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-host')));
  expect(hosts[0]).toBe('');
  expect(hosts.slice(1).sort()).toEqual(HOSTS);
  for (const h of HOSTS)
    await expect(page.locator(`[data-testid=process-group][data-host="${h}"]`)).toHaveAttribute(
      'data-count',
      String(PER_HOST),
    );
  // the fast processes (pid 1000 on each host) are among those that matter, as outliers
  const matter = page.locator('[data-testid=process-group][data-host=""]');
  await expect(matter).toContainText('outlier 3');
  // every end is unknown (no final dump anywhere, no log): counted once, not once per process
  await expect(page.getByTestId('fate-counts')).toContainText('unknown');
  await expect(page.getByTestId('fate-count')).toHaveText(String(PROCESSES));

  // a host opens on click, its processes by growth (most first, the list's default sort)
  await page.locator('[data-testid=process-group][data-host="node-01"]').click();
  const rows = page.locator('[data-testid=processes] tbody tr[data-pid]');
  const node01 = await rows.evaluateAll((trs) =>
    trs
      .map((tr) => ({
        pid: tr.querySelector('.pid')?.textContent ?? '',
        growth: tr.lastElementChild?.textContent ?? '',
      }))
      .filter((r) => r.pid.startsWith('node-01:')),
  );
  expect(node01.length).toBeGreaterThanOrEqual(PER_HOST);
  const bytes = (s: string) => {
    const m = /([+−-]?)([\d.]+) (B|KiB|MiB|GiB)/.exec(s)!;
    return (m[1] === '−' || m[1] === '-' ? -1 : 1) * Number(m[2]) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(m[3]);
  };
  const inGroup = node01.slice(-PER_HOST).map((r) => bytes(r.growth));
  expect(inGroup).toEqual([...inGroup].sort((a, b) => b - a));
  expect(node01[node01.length - PER_HOST].pid).toBe('node-01:1000');

  // the search narrows every group to its matches
  await page.getByTestId('process-search').fill('node-02:1000');
  await expect(rows.locator('.pid')).toHaveText(['node-02:1000', 'node-02:1000']); // under "matter" and its host

  // the timeline: one band per host group, lines only for the processes that matter and the selected
  const bands = page.getByTestId('timeline-band');
  await expect(bands).toHaveCount(HOSTS.length);
  expect(await bands.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-count')))).toEqual(
    HOSTS.map(() => String(PER_HOST)),
  );
  const lines = page.locator('.proc-line');
  expect(await lines.count()).toBeLessThan(PROCESSES / 2);
  const outliers = await lines.evaluateAll((ps) =>
    ps.filter((p) => (p.getAttribute('data-why') ?? '').includes('outlier')).map((p) => p.getAttribute('data-pid')),
  );
  expect(outliers).toEqual(['1000', '1000', '1000']);

  mkdirSync(SHOTS, { recursive: true });
  await page.getByTestId('process-search').fill('');
  await page.screenshot({ path: path.join(SHOTS, 'process-groups-1280x800.png') });
});
