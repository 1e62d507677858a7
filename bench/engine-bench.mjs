// One engine, before and after (issue 18): `heaplens summary`, `heaplens growth` and the app's first timeline
// (the web build in headless Chromium: files handed to the page → the first process drawn from the dump heads, as
// bench/ui-bench.mjs phase 4 measures it) on the 16 × 100 × 5,000 job, for this checkout (or AFTER=<path>) against another
// built checkout (BEFORE=<path>, e.g. a worktree of the commit before the layout step, `npm ci && npm run build &&
// npx vite build` there). The two run in pairs, interleaved and in alternating order (B A, A B, …), so a load that
// drifts over the run hits both alike; each pair gives one ratio after/before. Prints min/median/max of each side
// and of the ratios, and the load average seen (the machine may be shared: quote the median ratio).
//
// Usage: BEFORE=/path/to/checkout npm run bench:engine   Env: RUNS (pairs per measure, default 5),
// HEAPLENS_SCALE_DATA (default /tmp/heaplens-scale-data; the job is generated there once, as scale-bench does),
// BENCH_SCALE_JOB (a job folder to use as is), BENCH_ONLY (summary, growth or timeline), CHROMIUM_PATH,
// HEAPLENS_BENCH_PORT (first of two preview ports, default 4291).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureJob } from './generate-series.mjs';

const AFTER = resolve(process.env.AFTER ?? resolve(import.meta.dirname, '..'));
const BEFORE = process.env.BEFORE ? resolve(process.env.BEFORE) : null;
const RUNS = Number(process.env.RUNS ?? 5);
const ONLY = process.env.BENCH_ONLY;
const PORT = Number(process.env.HEAPLENS_BENCH_PORT ?? 4291);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

if (!BEFORE) {
  console.log('engine bench: skipped (set BEFORE=<path of a built checkout to compare with>)');
  process.exit(0);
}
for (const [side, dir] of [
  ['BEFORE', BEFORE],
  ['AFTER', AFTER],
])
  if (!existsSync(join(dir, 'dist', 'renderer', 'index.html')) || !existsSync(join(dir, 'bin', 'heaplens.js')))
    throw new Error(`${side} (${dir}) is not built: run npm ci && npm run build && npx vite build there`);

const jobDir =
  process.env.BENCH_SCALE_JOB ??
  (
    await ensureJob(join(process.env.HEAPLENS_SCALE_DATA ?? '/tmp/heaplens-scale-data', '16x100x5000'), {
      processes: 16,
      dumps: 100,
      stacks: 5000,
      depth: 26,
      python: true,
      gzipHalf: true,
    })
  ).dir;
const files = readdirSync(jobDir)
  .filter((n) => !n.startsWith('.'))
  .map((n) => join(jobDir, n));
const rev = (dir) => spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
console.log(`job ${jobDir}: ${files.length} files`);
console.log(`after  = ${AFTER} (${rev(AFTER)})\nbefore = ${BEFORE} (${rev(BEFORE)})`);

const loads = [];
const sampleLoad = () => loads.push(loadavg()[0]);

/** Runs `measure(side)` RUNS times per side, in pairs of alternating order; returns the figures. */
async function paired(name, measure) {
  const a = [];
  const b = [];
  const ratios = [];
  for (let i = 0; i < RUNS; i++) {
    sampleLoad();
    let ta;
    let tb;
    if (i % 2 === 0) {
      tb = await measure(BEFORE);
      ta = await measure(AFTER);
    } else {
      ta = await measure(AFTER);
      tb = await measure(BEFORE);
    }
    a.push(ta);
    b.push(tb);
    ratios.push(ta / tb);
    console.log(`  ${name} pair ${i + 1}: after ${fmt(ta)} s, before ${fmt(tb)} s, ratio ${ratios.at(-1).toFixed(3)}`);
  }
  sampleLoad();
  const s = (xs) => `min ${fmt(Math.min(...xs))}  median ${fmt(median(xs))}  max ${fmt(Math.max(...xs))}`;
  console.log(`${name}: after  ${s(a)} s`);
  console.log(`${name}: before ${s(b)} s`);
  console.log(
    `${name}: after/before ratio min ${Math.min(...ratios).toFixed(3)}  median ${median(ratios).toFixed(3)}  max ${Math.max(...ratios).toFixed(3)} (${RUNS} pairs)`,
  );
  return { name, ratios };
}

const fmt = (s) => s.toFixed(2);
function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Wall seconds of one whole `heaplens <args>` process of a checkout (start-up included), output discarded. */
function cli(args) {
  return (dir) => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(dir, 'bin', 'heaplens.js'), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    const s = (performance.now() - t0) / 1000;
    if (r.status !== 0)
      throw new Error(`${dir}: heaplens ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
    return s;
  };
}

async function waitForServer(url, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server did not start: ${url}`);
}

const results = [];
if (!ONLY || ONLY === 'summary') results.push(await paired('summary', cli(['summary', jobDir])));
if (!ONLY || ONLY === 'growth') results.push(await paired('growth', cli(['growth', jobDir])));
if (!ONLY || ONLY === 'timeline') {
  const { chromium } = await import('playwright-core');
  const ports = new Map([
    [BEFORE, PORT],
    [AFTER, PORT + 1],
  ]);
  const servers = [...ports].map(([dir, port]) =>
    spawn(
      process.execPath,
      [join(dir, 'node_modules', 'vite', 'bin', 'vite.js'), 'preview', '--port', String(port), '--strictPort'],
      {
        cwd: dir,
        stdio: 'ignore',
      },
    ),
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    for (const port of ports.values()) await waitForServer(`http://127.0.0.1:${port}/index.html`, 30_000);
    // files handed to the page → the first process's timeline from the dump heads (the preview), then the page is
    // closed (the full load it started is not part of this figure)
    const timeline = async (dir) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.route('**/*', (route) =>
        new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
      );
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${ports.get(dir)}/index.html`);
      const t0 = performance.now();
      await page.locator('[data-testid=file-input]').setInputFiles(files);
      await page.getByTestId('preview-process').first().waitFor({ timeout: 600_000 });
      const s = (performance.now() - t0) / 1000;
      await context.close();
      return s;
    };
    results.push(await paired('first timeline', timeline));
  } finally {
    await browser.close();
    for (const s of servers) s.kill();
  }
}
console.log(
  `load average (1 min) seen: min ${Math.min(...loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)} on ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores`,
);
console.log(
  JSON.stringify({
    after: rev(AFTER),
    before: rev(BEFORE),
    job: jobDir,
    medians: Object.fromEntries(results.map((r) => [r.name, +median(r.ratios).toFixed(3)])),
    mins: Object.fromEntries(results.map((r) => [r.name, +Math.min(...r.ratios).toFixed(3)])),
  }),
);
// Goal (issue 18): not slower; a median ratio above 1.05 is reported as a failure.
const slower = results.filter((r) => median(r.ratios) > 1.05);
if (slower.length > 0) {
  console.log(`slower after than before: ${slower.map((r) => r.name).join(', ')}`);
  process.exitCode = 1;
}
