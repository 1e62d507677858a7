// The report of a big job (issue 49 item 7): `heaplens report` on the 1,000-process job (1,000 × 10 dumps × 1,000 deep
// stacks on 25 hosts, generate-series.mjs, cached), then the report opened from file:// in headless Chromium until
// its first suspect row shows. Prints the write time, its peak RSS, the file's size and what the report holds (the
// job's stack and frame tables, what its bounds left out), the open-to-first-suspect time (goal ≤ 10 s) and the
// browser's peak PSS, each against `heaplens summary` of the same job timed in the same run. Firefox too when Debian's
// firefox-esr is there: Playwright drives only its own patched Firefox, which cannot be downloaded here, so it is
// driven over WebDriver BiDi (firefox-bidi.mjs), the same file, the same first suspect row.
// Usage: npm run bench:report:open -- [--job DIR] [--out DIR] [--open-only report.html]    Env: CHROMIUM_PATH, BENCH_DATA.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureJob } from './generate-series.mjs';
import { needGnuTime, timed } from './gnu-time.mjs';
import { childPids, childTree } from './proc-tree.mjs';
import { FIREFOX, firefoxTimeTo } from './firefox-bidi.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'bin/heaplens.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DATA = process.env.BENCH_DATA ?? '/tmp';
const { values } = parseArgs({
  options: { job: { type: 'string' }, out: { type: 'string' }, 'open-only': { type: 'string' } },
});
const GOAL_OPEN_S = 10;

/** KiB of Pss from a process's smaps_rollup (0 once it is gone). */
function pss(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** What the written report holds: its header, read with the built reader (nothing but the header inflated twice). */
async function reportContents(file) {
  const { extractPayload } = await import(path.join(ROOT, 'dist/core/report/html.js'));
  const { readPayload } = await import(path.join(ROOT, 'dist/core/report/job-unpack.js'));
  const payload = extractPayload(readFileSync(file, 'utf8'));
  const { job, cols } = readPayload(payload);
  return {
    payload: payload.length,
    inflated: cols.length,
    processes: job.processes.length,
    kept: job.processes.reduce((a, p) => a + p.stacks.n, 0),
    stacks: job.stacks.offsets.n - 1,
    frames: job.stacks.frames.n,
    addresses: job.frames.addresses.length,
    python: job.frames.python.length,
    leftOut: job.leftOut ?? null,
  };
}

async function openReport(file) {
  needChromium();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const browserPid = childPids(process.pid).find((p) => /chrom/i.test(readFileSync(`/proc/${p}/comm`, 'utf8')));
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // nothing but the file itself may load
    await context.route('**/*', (route) =>
      route.request().url().startsWith('file:') ? route.continue() : route.abort(),
    );
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let peak = 0;
    const timer = setInterval(() => {
      peak = Math.max(
        peak,
        childTree(browserPid).reduce((a, p) => a + pss(p), 0),
      );
    }, 100);
    const t0 = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'commit', timeout: 600_000 });
    const row = page.getByTestId('suspect-row').first();
    const failed = page.locator('text=This report cannot be shown').first();
    const first = await Promise.race([
      row.waitFor({ timeout: 600_000 }).then(() => 'suspect'),
      failed.waitFor({ timeout: 600_000 }).then(() => 'refused'),
    ]);
    const openS = (performance.now() - t0) / 1000;
    clearInterval(timer);
    const text = first === 'suspect' ? await row.textContent() : await failed.textContent();
    const leftOut = await page
      .getByTestId('report-left-out')
      .textContent({ timeout: 1000 })
      .catch(() => null);
    return { first, openS, text: (text ?? '').replace(/\s+/g, ' ').trim(), leftOut, pssMB: peak / 1024, errors };
  } finally {
    await browser.close();
  }
}

/** The same open in Debian's Firefox ESR (null without one). */
async function openInFirefox(file) {
  if (!FIREFOX) return null;
  return firefoxTimeTo(pathToFileURL(file).href, '[data-testid=suspect-row]', 'This report cannot be shown');
}

function needChromium() {
  if (existsSync(CHROMIUM)) return;
  console.log(`report-open-bench: no Chromium at ${CHROMIUM} (apt-get install chromium, or CHROMIUM_PATH)`);
  process.exit(0);
}

async function main() {
  needChromium();
  if (values['open-only']) {
    // a report already written: only the page's open (for working on the page)
    const open = await openReport(values['open-only']);
    console.log(
      `opened: ${open.first} after ${open.openS.toFixed(1)} s, peak PSS ${open.pssMB.toFixed(0)} MB: ${open.text.slice(0, 160)}`,
    );
    if (open.errors.length > 0) console.log(`page errors: ${open.errors.join(' | ')}`);
    const ff = await openInFirefox(values['open-only']);
    if (ff) console.log(`Firefox ESR: ${ff.found ? 'first suspect' : 'REFUSED'} after ${ff.s.toFixed(1)} s`);
    return;
  }
  needGnuTime('report-open-bench');
  const dir =
    values.job ??
    (
      await ensureJob(path.join(DATA, 'heaplens-hosts-1000x10x1000'), {
        processes: 1000,
        dumps: 10,
        stacks: 1000,
        depth: 26,
        python: false,
        gzipHalf: false,
        deep: true,
        gzip: true,
        hosts: 25,
        growing: 2,
      })
    ).dir;
  const outDir = values.out ?? path.join(DATA, 'heaplens-report-open-bench');
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, 'report.html');
  const summary = timed(process.execPath, [CLI, 'summary', dir]);
  const write = timed(process.execPath, [CLI, 'report', dir, '-o', file]);
  const size = statSync(file).size;
  const held = await reportContents(file);
  const open = await openReport(file);
  const ff = await openInFirefox(file);
  const x = (a, b) => `${(a / b).toFixed(2)}×`;
  console.log(`heaplens report of ${dir}`);
  console.log(
    [
      `summary (reference): ${summary.s.toFixed(1)} s, peak RSS ${summary.rssMB.toFixed(0)} MB`,
      `report written: ${write.s.toFixed(1)} s (${x(write.s, summary.s)} summary), peak RSS ${write.rssMB.toFixed(0)} MB (${x(write.rssMB, summary.rssMB)} summary)`,
      `report file: ${(size / 2 ** 20).toFixed(1)} MiB (payload ${(held.payload / 2 ** 20).toFixed(1)} MiB deflated, columns ${(held.inflated / 2 ** 20).toFixed(1)} MiB inflated)`,
      `holds: ${held.processes} processes, ${held.kept} kept stacks referring to the job's ${held.stacks} stacks of ${held.frames} frames (${held.addresses} distinct frames, ${held.python} Python frames)`,
      `left out: ${held.leftOut ? held.leftOut.reason : 'nothing'}`,
      `opened in Chromium: ${open.first === 'suspect' ? 'first suspect' : 'REFUSED'} after ${open.openS.toFixed(1)} s (${x(open.openS, summary.s)} summary; goal ≤ ${GOAL_OPEN_S} s), browser peak PSS ${open.pssMB.toFixed(0)} MB`,
      `first suspect row: ${open.text.slice(0, 160)}`,
      `page says left out: ${open.leftOut ?? '(nothing)'}`,
      `page errors: ${open.errors.length === 0 ? 'none' : open.errors.join(' | ')}`,
      ff
        ? `opened in Firefox ESR (WebDriver BiDi): ${ff.found ? 'first suspect' : 'REFUSED'} after ${ff.s.toFixed(1)} s (goal ≤ ${GOAL_OPEN_S} s)`
        : 'Firefox: not timed (no firefox-esr or firefox)',
    ].join('\n  '),
  );
  if (open.first !== 'suspect' || open.openS > GOAL_OPEN_S) process.exitCode = 1;
  if (ff && (!ff.found || ff.s > GOAL_OPEN_S)) process.exitCode = 1;
}

await main();
