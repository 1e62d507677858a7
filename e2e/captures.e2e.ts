// The other capture paths open in the app as dumps do (issue 26 item 5): a PyTorch CUDA memory snapshot and a
// memleak.bt capture of a running process, dropped on the page, rank their growing stacks in the Suspects view.
// Expected names come from the fixtures' own scripts (fixtures/torch/expected.json: `remember` holds the most
// active bytes and grows; fixtures/ebpf/expected.json: `leak_step` is the leak).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, ROOT, SHOTS, type DropFile } from './helpers.ts';

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
