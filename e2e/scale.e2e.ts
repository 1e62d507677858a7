// Progressive opening of a generated job (issue 12): every process's timeline from the dump heads
// shows while the records are read by the pool of dump readers, then the full job replaces it.
import { mkdirSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { formatBytes } from '../analysis/units.ts';
import { SHOTS } from './helpers.ts';

const DIR = '/tmp/heaplens-e2e-scale';
const PROCS = 6;
const SNAPS = 12;
const STACKS = 4000;

test.describe('large job, progressive', () => {
  test.beforeAll(async () => {
    if (existsSync(path.join(DIR, '.complete'))) return;
    const generator = path.resolve(import.meta.dirname, '..', 'bench', 'generate-series.mjs');
    const { ensureJob } = (await import(generator)) as { ensureJob: (d: string, s: object) => Promise<unknown> };
    mkdirSync(DIR, { recursive: true });
    await ensureJob(DIR, { processes: PROCS, dumps: SNAPS, stacks: STACKS, depth: 26, python: true, gzipHalf: true });
  });

  test('timelines from the header totals first, per-process progress, then the parsed job', async ({ page }) => {
    await page.goto('/');
    // Watch for the preview from the start: on a fast machine the whole load may take only a second or two.
    await page.evaluate(() => {
      const w = window as unknown as {
        __preview: { rows: number; labels: string[]; values: string[]; at: number } | null;
      };
      w.__preview = null;
      const t0 = performance.now();
      new MutationObserver(() => {
        const rows = document.querySelectorAll('[data-testid=preview-process]');
        if (rows.length > 0 && !w.__preview) {
          w.__preview = {
            rows: rows.length,
            labels: [...rows].map((r) => r.querySelector('.name')?.textContent ?? ''),
            values: [...rows].map((r) => r.querySelector('.num')?.textContent ?? ''),
            at: performance.now() - t0,
          };
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    const files = readdirSync(DIR)
      .filter((n) => !n.startsWith('.'))
      .map((n) => path.join(DIR, n));
    await page.locator('[data-testid=file-input]').setInputFiles(files);
    await expect(page.getByTestId('job-info')).toContainText(`${PROCS} processes`, { timeout: 60_000 });
    const seen = await page.evaluate(
      () =>
        (window as unknown as { __preview: { rows: number; labels: string[]; values: string[]; at: number } | null })
          .__preview,
    );
    expect(seen, 'the preview was shown before the job').not.toBeNull();
    expect(seen!.rows).toBe(PROCS);
    expect(seen!.labels).toEqual(Array.from({ length: PROCS }, (_, p) => `jeprof ${1000 + p}`));
    // Each row ends at its last dump's header line "t*: objects: bytes", read here from the file's text and
    // unbiased as one record at the 2^19 period: bytes / (1 − exp(−(bytes/objects) / period)).
    const expected = Array.from({ length: PROCS }, (_, p) => {
      const name = readdirSync(DIR).find((n) => n.startsWith(`jeprof.${1000 + p}.${SNAPS - 1}.`)) as string;
      const raw = readFileSync(path.join(DIR, name));
      const text = (name.endsWith('.gz') ? gunzipSync(raw) : raw).subarray(0, 4096).toString('latin1');
      const m = /^\s*t\*:\s*(\d+):\s*(\d+)/m.exec(text) as RegExpExecArray;
      const [objs, bytes] = [Number(m[1]), Number(m[2])];
      return formatBytes(bytes / (1 - Math.exp(-(bytes / objs) / 524288)));
    });
    expect(seen!.values).toEqual(expected);
    const readers = await page.evaluate(
      () =>
        (window as unknown as { __heaplens?: { summary?: { readers?: number } } }).__heaplens?.summary?.readers ?? 0,
    );
    expect(readers).toBeGreaterThanOrEqual(1);
  });

  test('screenshot of the preview at 1024, 1280 and 1920 px', async ({ page }) => {
    for (const width of [1024, 1280, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto('/');
      const files = readdirSync(DIR)
        .filter((n) => !n.startsWith('.'))
        .map((n) => path.join(DIR, n));
      await page.locator('[data-testid=file-input]').setInputFiles(files);
      await page.getByTestId('preview').waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(SHOTS, `scale-preview-${width}.png`) });
      await page.getByTestId('cancel').click();
      await expect(page.getByTestId('preview')).toBeHidden({ timeout: 10_000 });
    }
  });
});
