// Progressive opening of a generated job (issue 12): every process's timeline from the dump heads
// shows while the records are read by the pool of dump readers, then the full job replaces it.
import { copyFileSync, mkdirSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, expect, type Page } from '@playwright/test';
import { formatBytes } from '../core/model/units.ts';
import { RANK_GROWTH, RANK_STALE_MS } from '../renderer/src/lib/ranking-pace.ts';
import { guardNetwork, ROOT, SHOTS } from './helpers.ts';

// in the run's own temporary folder (playwright.config.ts globalSetup, tools/test-tmp.ts): made by each run, removed at
// its end, never shared with another checkout's run
const DIR = path.join(tmpdir(), 'heaplens-e2e-scale');
const PROCS = 6;
const SNAPS = 12;
const STACKS = 4000;

/** Hands the page every file of the generated job through the file input, as a user opening the folder would. */
async function openGeneratedJob(page: Page): Promise<void> {
  const files = readdirSync(DIR)
    .filter((n) => !n.startsWith('.'))
    .map((n) => path.join(DIR, n));
  await page.locator('[data-testid=file-input]').setInputFiles(files);
}

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
    await openGeneratedJob(page);
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
        (window as unknown as { __heaplens?: { job?: { summary?: { readers?: number } } } }).__heaplens?.job?.summary
          ?.readers ?? 0,
    );
    expect(readers).toBeGreaterThanOrEqual(1);
  });

  test('a provisional ranking of the dumps read so far shows while it loads, says so, and the final one replaces it', async ({
    page,
  }) => {
    await page.goto('/');
    // what the page showed when the provisional note first appeared (it may last only a moment on a fast machine)
    await page.evaluate(() => {
      type Seen = { note: string; rows: number; inPreview: boolean; loaded: boolean };
      const w = window as unknown as { __provisional: Seen | null };
      w.__provisional = null;
      new MutationObserver(() => {
        const note = document.querySelector('[data-testid=suspects-provisional]');
        if (w.__provisional || !note) return;
        w.__provisional = {
          note: note.textContent ?? '',
          rows: document.querySelectorAll('[data-testid=suspect-row]').length,
          inPreview: note.closest('[data-testid=preview]') !== null,
          loaded: document.querySelector('[data-testid=job-info]') !== null,
        };
      }).observe(document.body, { childList: true, subtree: true });
    });
    await openGeneratedJob(page);
    await expect(page.getByTestId('job-info')).toContainText(`${PROCS} processes`, { timeout: 60_000 });
    const seen = await page.evaluate(
      () =>
        (
          window as unknown as {
            __provisional: { note: string; rows: number; inPreview: boolean; loaded: boolean } | null;
          }
        ).__provisional,
    );
    expect(seen, 'a provisional ranking was shown while loading').not.toBeNull();
    expect(seen!.loaded).toBe(false);
    // shown before the first process is read whole, over the preview's timelines: ranked from some of the first
    // process's dumps, of the job's PROCS × SNAPS
    expect(seen!.inPreview).toBe(true);
    const m = /Provisional — ranking from (\d+) of (\d+)\s+dumps so far/.exec(seen!.note.replace(/\s+/g, ' '));
    expect(m, seen!.note).not.toBeNull();
    expect(Number(m![2])).toBe(PROCS * SNAPS);
    expect(Number(m![1])).toBeGreaterThanOrEqual(1);
    expect(Number(m![1])).toBeLessThan(SNAPS);
    expect(seen!.rows).toBeGreaterThan(0);
    // the whole job: its own ranking, of every process, nothing provisional left
    await expect(page.getByTestId('suspects-provisional')).toHaveCount(0);
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    await expect(page.getByTestId('suspects-table')).toContainText(`across ${PROCS} processes`);
  });

  test('screenshot of the preview at 1024, 1280 and 1920 px', async ({ page }) => {
    for (const width of [1024, 1280, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto('/');
      await openGeneratedJob(page);
      await page.getByTestId('preview').waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(SHOTS, `scale-preview-${width}.png`) });
      await page.getByTestId('cancel').click();
      await expect(page.getByTestId('preview')).toBeHidden({ timeout: 10_000 });
    }
  });
});

// The real 5-process job of fixtures/job, copied into six folders (nodes of one job: 30 processes, same pids
// per folder, as on a cluster): while the later folders are read, the first ones' processes are open.
const NODES = 6;
const PROGRESSIVE = path.join(tmpdir(), 'heaplens-e2e-progressive');

test.describe('progressive opening of the real job', () => {
  test.beforeAll(() => {
    const src = path.join(ROOT, 'fixtures', 'job', 'dumps');
    const names = readdirSync(src);
    for (let n = 1; n <= NODES; n++) {
      const dir = path.join(PROGRESSIVE, `node${n}`);
      mkdirSync(dir, { recursive: true });
      for (const f of names) if (!existsSync(path.join(dir, f))) copyFileSync(path.join(src, f), path.join(dir, f));
    }
  });

  test("a process's suspects, growth and per-process progress show before the whole job is read", async ({
    page,
    context,
  }) => {
    const net = await guardNetwork(context);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto('/');
    // What the page showed when the first suspect row of the main window appeared (a MutationObserver: the state
    // may last a moment; a provisional ranking over the preview, before any process is read whole, comes earlier
    // and has a test of its own above).
    await page.evaluate(() => {
      type Seen = {
        loaded: boolean;
        loading: boolean;
        pending: number;
        progress: string[];
        read: string[];
        holders: string[];
        note: string;
        rankedRead: number | null;
      };
      const w = window as unknown as {
        __partial: Seen | null;
        __heaplens: { job: { rankedRead: number | null } };
      };
      w.__partial = null;
      new MutationObserver(() => {
        if (w.__partial || !document.querySelector('[data-testid=suspects-view] [data-testid=suspect-row]')) return;
        const rows = [...document.querySelectorAll('[data-testid=processes] tbody tr')];
        w.__partial = {
          loaded: document.querySelector('[data-testid=job-info]') !== null,
          loading: document.querySelector('[data-testid=job-loading]') !== null,
          pending: document.querySelectorAll('[data-testid=process-pending]').length,
          progress: [...document.querySelectorAll('[data-testid=process-progress]')].map((e) => e.textContent ?? ''),
          read: rows
            .filter((r) => r.getAttribute('data-testid') !== 'process-pending')
            .map((r) => r.getAttribute('data-pid') ?? ''),
          holders: [...document.querySelectorAll('[data-testid=suspect-spark]')].map(
            (e) => e.getAttribute('data-pid') ?? '',
          ),
          note: document.querySelector('[data-testid=suspects-view] .bar .note')?.textContent ?? '',
          rankedRead: w.__heaplens.job.rankedRead,
        };
      }).observe(document.body, { childList: true, subtree: true });
      // every request to the worker with the tab open and whether the job was still loading when it was sent
      type Asked = { type: string; partial: boolean; tab: string; read: number; at: number };
      type App = {
        client: { start: (...a: unknown[]) => unknown };
        job: { partial: boolean; summary: { processes: { pending?: unknown }[] } | null };
        selection: { tab: string };
      };
      const h = (window as unknown as { __heaplens: App; __asked: Asked[] }).__heaplens;
      const asked: Asked[] = ((window as unknown as { __asked: Asked[] }).__asked = []);
      const start = h.client.start.bind(h.client);
      h.client.start = (...a: unknown[]) => {
        const req = a[0] as { type: string };
        asked.push({
          type: req.type,
          partial: h.job.partial,
          tab: h.selection.tab,
          read: (h.job.summary?.processes ?? []).filter((p) => !p.pending).length,
          at: performance.now(),
        });
        return start(...a);
      };
    });
    await page.locator('[data-testid=folder-input]').setInputFiles(PROGRESSIVE);
    // while it loads: the main window, the load bar with Cancel, the growth tab answering for a process read
    await expect(page.getByTestId('job-loading')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    await expect(page.getByTestId('job-info')).toHaveCount(0);
    await page.screenshot({ path: path.join(SHOTS, 'progressive-mid-1280.png') });
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toBeVisible();
    await page.getByTestId('tab-suspects').click();
    await expect(page.getByTestId('job-info')).toContainText(`${5 * NODES} processes`, { timeout: 120_000 });
    // while it loaded, a growth table was asked only with a tab open that shows it; once in, for the open process
    const asked = await page.evaluate(
      () =>
        (window as unknown as { __asked: { type: string; partial: boolean; tab: string; read: number; at: number }[] })
          .__asked,
    );
    // the loading job's ranking was asked again only once half as many more processes were read, or 8 s on
    // (lib/ranking-pace.ts, whose figures these are), not at each update of the job so far (~20 a load). The request leaves when the one
    // before is answered (latest wins, throttled), so the processes read when it leaves are more than when it was
    // decided: the pace is checked by how many asks a load of this length can make, 1 + log1.5 of the processes
    // read + one per 8 s
    const ranked = asked.filter((a) => a.type === 'suspects' && a.partial);
    expect(ranked.length).toBeGreaterThan(0);
    for (let k = 1; k < ranked.length; k++) expect(ranked[k].read).toBeGreaterThanOrEqual(ranked[k - 1].read);
    const span = ranked[ranked.length - 1].at - ranked[0].at;
    const paced = 1 + Math.ceil(Math.log(5 * NODES) / Math.log(RANK_GROWTH)) + Math.ceil(span / RANK_STALE_MS);
    expect(
      ranked.length,
      `asks at ${ranked.map((a) => `${a.read} read, ${Math.round(a.at - ranked[0].at)} ms`).join('; ')}`,
    ).toBeLessThanOrEqual(paced);
    const growthAsked = asked.filter((a) => a.type === 'growth');
    for (const a of growthAsked.filter((g) => g.partial)) expect(a.tab).toBe('growth');
    await expect
      .poll(async () =>
        page.evaluate(() =>
          (window as unknown as { __asked: { type: string; partial: boolean }[] }).__asked.some(
            (a) => a.type === 'growth' && !a.partial,
          ),
        ),
      )
      .toBe(true);
    const seen = await page.evaluate(
      () => (window as unknown as { __partial: { [k: string]: unknown } | null }).__partial,
    );
    expect(seen, 'suspect rows were shown').not.toBeNull();
    // the first suspects were of a job still loading: no job summary yet, the load bar up, processes pending…
    expect(seen!.loaded).toBe(false);
    expect(seen!.loading).toBe(true);
    expect(seen!.pending as number).toBeGreaterThan(0);
    // …each with how many of its dumps are read ("k/n")
    for (const t of seen!.progress as string[]) expect(t).toMatch(/^\d+\/\d+$/);
    // the holders' sparklines are of processes read, which are the real job's (expected.json)
    const pids = (
      JSON.parse(readFileSync(path.join(ROOT, 'fixtures', 'job', 'expected.json'), 'utf8')) as {
        processes: { pid: number }[];
      }
    ).processes.map((p) => String(p.pid));
    expect((seen!.holders as string[]).length).toBeGreaterThan(0);
    // the table says how many processes the ranking shown is of
    expect(seen!.rankedRead as number).toBeGreaterThan(0);
    expect((seen!.note as string).replace(/\s+/g, ' ')).toContain(
      `across the ${String(seen!.rankedRead)} of ${5 * NODES} processes ranked so far`,
    );
    for (const h of seen!.holders as string[]) {
      expect(seen!.read).toContain(h);
      expect(pids).toContain(h);
    }
    // the full job: nothing pending, the load bar gone
    await expect(page.getByTestId('job-loading')).toHaveCount(0);
    await expect(page.getByTestId('process-pending')).toHaveCount(0);
    await expect(page.locator('[data-testid=processes] tbody tr')).toHaveCount(5 * NODES);
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    expect(errors).toEqual([]);
    expect(net.blocked).toEqual([]);
  });

  test('cancel while shown process by process: what was open before comes back', async ({ page }) => {
    await page.goto('/');
    await page.locator('[data-testid=folder-input]').setInputFiles(path.join(PROGRESSIVE, 'node1'));
    await expect(page.getByTestId('job-info')).toContainText('5 processes', { timeout: 60_000 });
    await page.locator('[data-testid=processes] tbody tr').first().waitFor();
    // a second job over it, cancelled once its first processes show
    await page.evaluate(() => {
      const input = document.createElement('input');
      input.type = 'file';
      input.webkitdirectory = true;
      input.dataset.testid = 'second-folder';
      input.hidden = true;
      input.onchange = () => {
        const w = window as unknown as { __heaplens: { job: { openAny: (f: unknown[]) => Promise<void> } } };
        const files = [...(input.files ?? [])].map((f) => ({
          path: f.webkitRelativePath || f.name,
          size: -1,
          mtimeMs: null,
          blob: f,
        }));
        void w.__heaplens.job.openAny(files);
      };
      document.body.append(input);
    });
    await page.locator('[data-testid=second-folder]').setInputFiles(PROGRESSIVE);
    await expect(page.getByTestId('job-loading')).toBeVisible({ timeout: 30_000 });
    await page.getByTestId('cancel').click();
    await expect(page.getByTestId('job-loading')).toHaveCount(0);
    await expect(page.getByTestId('job-info')).toContainText('5 processes');
    await expect(page.locator('[data-testid=processes] tbody tr')).toHaveCount(5);
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
  });
});
