// The web page and a dataset folder (heaplens ingest): it cannot read Parquet through DuckDB, and says so,
// naming the desktop app and the command line. Dumps dropped afterwards still open.
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, fixtureSeries, JOB, ROOT, SHOTS, type DropFile } from './helpers.ts';

mkdirSync(SHOTS, { recursive: true });

function datasetFiles(dir: string, rel = ''): DropFile[] {
  const out: DropFile[] = [];
  for (const name of readdirSync(path.join(dir, rel))) {
    const p = path.join(dir, rel, name);
    if (statSync(p).isDirectory()) out.push(...datasetFiles(dir, path.join(rel, name)));
    else out.push({ name, b64: readFileSync(p).toString('base64'), mtimeMs: statSync(p).mtimeMs });
  }
  return out;
}

test('a dropped dataset: the web page says it needs the desktop app or the CLI', async ({ page }) => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'heaplens-e2e-ds-'));
  try {
    const ds = path.join(tmp, 'job.dataset');
    execFileSync(process.execPath, [path.join(ROOT, 'bin', 'heaplens.js'), 'ingest', JOB, '-o', ds, '--no-symbols']);
    await page.goto('/');
    await expect(page.getByTestId('dropzone')).toBeVisible();
    await dropFiles(page, '[data-testid=dropzone]', datasetFiles(ds));
    const alert = page.getByRole('alert');
    await expect(alert).toContainText('is a heaplens dataset');
    await expect(alert).toContainText('desktop app');
    await expect(alert).toContainText('command line');
    for (const w of [1024, 1280, 1920]) {
      await page.setViewportSize({ width: w, height: 800 });
      await page.screenshot({ path: path.join(SHOTS, `dataset-web-${w}.png`) });
    }
    // the page still opens dumps
    await dropFiles(page, '[data-testid=dropzone]', fixtureSeries());
    await expect(page.getByTestId('job-info')).toContainText('3 processes', { timeout: 30_000 });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
