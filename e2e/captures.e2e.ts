// The other capture paths open in the app as dumps do (issue 26 item 5): a PyTorch CUDA memory snapshot and a
// memleak.bt capture of a running process, dropped on the page, rank their growing stacks in the Suspects view.
// Expected names come from the fixtures' own scripts (fixtures/torch/expected.json: `remember` holds the most
// active bytes and grows; fixtures/ebpf/expected.json: `leak_step` is the leak).
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from '@playwright/test';
import { dropFiles, heaplens, openTab, ROOT, SHOTS, type DropFile } from './helpers.ts';
import { flameNodes, flameView, waitForFlame } from './flame-hook.ts';

const file = (dir: string, name: string): DropFile => {
  const p = path.join(ROOT, 'fixtures', dir, name);
  return { name, b64: readFileSync(p).toString('base64'), mtimeMs: statSync(p).mtimeMs };
};

test('a PyTorch memory snapshot: its device as a process, the growing cache as suspect #1', async ({ page }) => {
  const want = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/torch/expected.json'), 'utf8')) as {
    devices: { active_by_leaf: Record<string, { bytes: number }> }[];
  };
  const biggest = Object.entries(want.devices[0].active_by_leaf).sort((a, b) => b[1].bytes - a[1].bytes)[0][0];
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('torch', 'snapshot-p4.pickle')]);
  // one series per CUDA device the snapshot holds
  const n = want.devices.length;
  await expect(page.getByTestId('job-info')).toContainText(`${n} process${n === 1 ? ' ' : 'es'}`, { timeout: 30_000 });
  const rows = page.getByTestId('suspects-view').getByTestId('suspect-row');
  await expect(rows.first()).toBeVisible();
  await expect(rows.first().locator('.lbl')).toContainText(biggest);
  await page.screenshot({ path: path.join(SHOTS, 'capture-torch.png') });
});

test('a memleak.bt capture with its maps copy: leak_step leads the ranking', async ({ page }) => {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('ebpf', 'memleak.txt'), file('ebpf', '31612.maps')]);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  const rows = page.getByTestId('suspects-view').getByTestId('suspect-row');
  await expect(rows.first()).toBeVisible();
  await expect(rows.first().locator('.lbl')).toContainText('leak_step');
  await page.screenshot({ path: path.join(SHOTS, 'capture-memleak.png') });
});

test("a PyTorch snapshot's device over time: allocated vs reserved, its peak and its OOM where the trace has them", async ({
  page,
}) => {
  const want = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/torch/expected.json'), 'utf8')) as {
    annotations: number;
    devices: {
      device: number;
      peak_allocated_bytes: number;
      ooms: { time_us: number; size: number }[];
      first_time_us: number;
      last_time_us: number;
    }[];
  };
  const dev = want.devices.find((d) => d.ooms.length > 0)!;
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('torch', 'snapshot-p4.pickle')]);
  await expect(page.getByTestId('job-info')).toContainText(`${want.devices.length} processes`, { timeout: 30_000 });
  // the device with the OOM is the one whose cache grew: the job opens on it (suspect #1's holder)
  const chart = page.locator(`[data-testid=gpu-chart][data-device="${dev.device}"]`);
  await expect(chart).toBeVisible();
  // the peak: the simulation's own peak of allocated bytes, on the allocated line
  const peak = chart.getByTestId('gpu-peak');
  await expect(peak).toHaveAttribute('data-bytes', String(dev.peak_allocated_bytes));
  await expect(chart.getByTestId('gpu-peak-text')).toContainText(
    `${(dev.peak_allocated_bytes / 2 ** 20).toFixed(1)} MiB`,
  );
  // the OOM at the simulation's time (time_us / 1000), drawn where that time falls on the trace's axis
  const oom = chart.getByTestId('gpu-oom');
  await expect(oom).toHaveCount(dev.ooms.length);
  const atMs = dev.ooms[0].time_us / 1000;
  await expect(oom.first()).toHaveAttribute('data-time-ms', String(atMs));
  await expect(oom.first()).toHaveAttribute('data-size', String(dev.ooms[0].size));
  const hhmmss = new Date(atMs).toISOString().slice(11, 23);
  await expect(chart.getByTestId('gpu-oom-text')).toContainText(`OOM at ${hhmmss}`);
  const svgWidth = Number(await chart.locator('svg').getAttribute('width'));
  const x = Number(await oom.first().locator('line').getAttribute('x1'));
  // the plot frame's margins (renderer/src/charts/plot-frame.ts) and the trace's first and last entries
  const [left, right] = [62, svgWidth - 14];
  const [t0, t1] = [dev.first_time_us / 1000, dev.last_time_us / 1000];
  expect(Math.abs(x - (left + ((atMs - t0) / (t1 - t0)) * (right - left)))).toBeLessThan(1);
  // the record_function spans in a band under the plot: every begin/end pair of the trace's annotations
  const spans = want.annotations / 2;
  await expect(chart.getByTestId('gpu-spans').locator('.gpu-span')).toHaveCount(spans);
  await expect(chart.getByTestId('gpu-spans')).toHaveAttribute('data-skipped', '0');
  await expect(chart.getByTestId('gpu-axis')).toHaveAttribute('data-axis', 'wall');
  // the figures under the pointer
  await chart.getByTestId('gpu-hover').hover();
  await expect(chart.getByTestId('gpu-readout')).toContainText(/allocated [\d.]+ MiB · reserved [\d.]+ MiB/);
  await chart.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SHOTS, 'capture-torch-gpu.png') });
  // the peak's point opens the snapshot taken there
  await peak.locator('circle').click();
  await expect(chart.getByTestId('gpu-picked')).toBeAttached();
});

test("single-file reports keep what the app shows of them: massif's peak and time unit, a PyTorch device over time", async ({
  page,
}) => {
  const out = mkdtempSync(path.join(tmpdir(), 'heaplens-capture-reports-'));
  // massif's run with --time-unit=B: ms_print's report names the peak snapshot and the unit on its own
  const massif = path.join(ROOT, 'fixtures', 'massif', 'massif.out.pages');
  const ms = readFileSync(`${massif}.ms_print.txt`, 'utf8');
  const peak = /Detailed snapshots: \[[^\]]*?(\d+) \(peak\)/.exec(ms)![1];
  const unit = /^\s+n\s+time\((\w+)\)/m.exec(ms)![1];
  expect(unit).toBe('B');
  const massifReport = path.join(out, 'massif.html');
  heaplens('report', massif, '-o', massifReport, '--no-symbols');
  await page.goto(pathToFileURL(massifReport).href);
  await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
  const axis = page.getByTestId('timeline-axis');
  await expect(axis).toHaveAttribute('data-axis', 'massif');
  await expect(axis).toContainText('x: massif time (bytes allocated and freed)');
  await expect(page.getByTestId('timeline').locator('svg .axis text', { hasText: / B$/ }).first()).toBeVisible();
  await expect(page.getByTestId('target-select').locator('option', { hasText: `#${peak} (peak)` })).toHaveCount(1);
  await expect(page.getByTestId('timeline-points').locator('[data-peak=massif]')).toHaveAttribute('data-seq', peak);
  // it opens on the last snapshot massif kept a tree of (ms_print's last detailed one), not on the first
  const detailed = /Detailed snapshots: \[([^\]]*)\]/.exec(ms)![1].split(',');
  const lastDetailed = detailed[detailed.length - 1].trim().split(' ')[0];
  await expect(page.getByTestId('target-select').locator('option:checked')).toHaveText(
    new RegExp(`^#${lastDetailed} `),
  );
  await page.screenshot({ path: path.join(SHOTS, 'report-massif.png') });
  // the PyTorch snapshot: the device chart with the simulation's peak, as in the app
  const want = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/torch/expected.json'), 'utf8')) as {
    devices: { device: number; peak_allocated_bytes: number; ooms: { time_us: number }[] }[];
  };
  const torchReport = path.join(out, 'torch.html');
  heaplens('report', path.join(ROOT, 'fixtures', 'torch', 'snapshot-p4.pickle'), '-o', torchReport, '--no-symbols');
  await page.goto(pathToFileURL(torchReport).href);
  await expect(page.getByTestId('read-only-banner')).toBeVisible({ timeout: 30_000 });
  const chart = page.locator('[data-testid=gpu-chart][data-device="0"]');
  await expect(chart).toBeVisible();
  await expect(chart.getByTestId('gpu-peak')).toHaveAttribute(
    'data-bytes',
    String(want.devices[0].peak_allocated_bytes),
  );
  await expect(chart.getByTestId('gpu-oom')).toHaveAttribute(
    'data-time-ms',
    String(want.devices[0].ooms[0].time_us / 1000),
  );
  await chart.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SHOTS, 'report-torch.png') });
});

test("a Go delta profile's flame graph: widths by magnitude, main.warm as wide as its share in go tool pprof -top", async ({
  page,
}) => {
  // go tool pprof -top of the same file (fixtures/go/make-go-delta.sh): main.warm's flat (negative: freed inside the
  // window) and its flat% (of the magnitudes' sum, pprof's total)
  const top = readFileSync(path.join(ROOT, 'fixtures/go/delta/heap-delta.pprof-top.inuse_space.txt'), 'utf8');
  const m = /^\s*(-?\d+)B\s+([\d.]+)%.*\smain\.warm$/m.exec(top)!;
  const [flat, share] = [Number(m[1]), Number(m[2]) / 100];
  expect(flat).toBeLessThan(0);
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('go/delta', 'heap-delta.pb.gz')]);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  await openTab(page, 'tab-flame');
  await waitForFlame(page, 'flame');
  const all = await flameNodes(page, 'flame');
  // the root spans the graph's width
  const width = (await flameView(page, 'flame'))!.width;
  const warm = (await flameNodes(page, 'flame', 'main.warm')).filter((h) => h.rect !== null);
  expect(warm.length).toBeGreaterThan(0);
  const widest = warm.reduce((a, b) => (b.rect!.w > a.rect!.w ? b : a));
  // its width over the root's: pprof's flat% (the rounding of a 1-pixel edge aside)
  expect(Math.abs(widest.rect!.w / width - share)).toBeLessThan(0.01);
  // no node drawn wider than the root or with a negative width
  for (const h of all) if (h.rect) expect(h.rect.w).toBeGreaterThanOrEqual(0);
  await page.screenshot({ path: path.join(SHOTS, 'flame-go-delta.png') });
});
