// UI benchmark in headless Chromium (Debian's /usr/bin/chromium) against the built web page (vite preview):
//   1. time from "drop" (input files handed to the page) to the first timeline, on a generated series of
//      64 processes × 200 snapshots;
//   2. flame-graph frame time with a 100k+-node tree (draw calls, hover and zoom);
//   3. the longest main-thread task (PerformanceObserver 'longtask') during each phase;
//   4. a large job (issue 12: the 16 × 100 × 5,000 job of bench/scale-bench.mjs, when generated): drop to
//      the first timeline of every process (header totals), to the first processes shown while it loads, to the
//      full load and to the full job's views drawn; the longest main-thread task over all of it; the browser's
//      peak RSS (whole tree, and per kind of process). Targets (issue 12): first timeline ≤ 3 s, no task > 100 ms,
//      tree < 1.5 GiB.
// Targets (issue 5): load < 20 s, frame < 16 ms, main thread never blocked > 100 ms.
// `--deep` (issue 25 item 4, "the app keeps pace"): phase 4 alone on the deep-stack job of
// generate-series.mjs --deep (generated when missing; `--size PxDxS`, default 4x50x5000: the issue's
// 16x100x5000 is 4.8 GB), reporting drop → first timeline (≤ 2 s), → first suspect row (≤ 4 s), → whole job
// against `heaplens summary` of the same job timed in the same run (≤ 1.2×), the longest main-thread task and
// the phase it fell in (≤ 100 ms), and the browser tree's peak PSS (≤ 1.5 GB).
// Usage: npm run bench:ui   (builds the renderer first; --deep also needs `npm run build` for the CLI).
// Env: CHROMIUM_PATH, BENCH_DIR, BENCH_PROCS, BENCH_SNAPS.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { ensureJob } from './generate-series.mjs';
import { timed } from './gnu-time.mjs';
import { childPids, childTree, pssOf, rssOf } from './proc-tree.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = process.env.BENCH_DIR ?? '/tmp/heaplens-ui-bench';
const PROCS = Number(process.env.BENCH_PROCS ?? 64);
const SNAPS = Number(process.env.BENCH_SNAPS ?? 200);
const STACKS = 120;
const BIG_STACKS = 110_000;
const PORT = Number(process.env.HEAPLENS_BENCH_PORT ?? process.env.HEAPLENS_E2E_PORT ?? 4179);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = parseArgs({ options: { deep: { type: 'boolean' }, size: { type: 'string' } } }).values;
const DEEP_SIZE = ARGS.size ?? '4x50x5000';

// ---------- synthetic jemalloc heap_v2 dumps (a writer, for load testing only) ----------
let seed = 12345;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const hex = (n) => '0x' + n.toString(16);
const EXE = 0x55d0a0000000;
const LIBC = 0x7f3a10000000;
const JE = 0x7f3a20000000;
const MAPS = [
  `${EXE.toString(16)}-${(EXE + 0x1000).toString(16)} r--p 00000000 fe:00 1001 /opt/train/bin/trainer`,
  `${(EXE + 0x1000).toString(16)}-${(EXE + 0x400000).toString(16)} r-xp 00001000 fe:00 1001 /opt/train/bin/trainer`,
  `${LIBC.toString(16)}-${(LIBC + 0x200000).toString(16)} r-xp 00000000 fe:00 2002 /usr/lib/x86_64-linux-gnu/libc.so.6`,
  `${JE.toString(16)}-${(JE + 0x100000).toString(16)} r-xp 00000000 fe:00 3003 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2`,
].join('\n');
const ALLOC = [JE + 0x2630, JE + 0x2d21, JE + 0x15f24];

function stackFrames(i, depth) {
  const f = [...ALLOC];
  let x = i;
  for (let d = 0; d < depth; d++) {
    f.push(EXE + 0x1000 + ((x * 2654435761 + d * 97) % 0x3f0000));
    x = Math.floor(x / 3);
  }
  f.push(LIBC + 0x2724a, EXE + 0x1101);
  return f;
}

function dump(stacks, values) {
  const lines = [];
  let tObj = 0;
  let tBytes = 0;
  const recs = [];
  for (let s = 0; s < stacks.length; s++) {
    const bytes = values[s];
    if (bytes <= 0) continue;
    const objs = Math.max(1, Math.round(bytes / 4096));
    tObj += objs;
    tBytes += bytes;
    recs.push(`@ ${stacks[s].map(hex).join(' ')}\n  t*: ${objs}: ${bytes} [0: 0]\n  t0: ${objs}: ${bytes} [0: 0]`);
  }
  lines.push(
    'heap_v2/524288',
    `  t*: ${tObj}: ${tBytes} [0: 0]`,
    `  t0: ${tObj}: ${tBytes} [0: 0]`,
    ...recs,
    '',
    'MAPPED_LIBRARIES:',
    MAPS,
    '',
  );
  return lines.join('\n');
}

function makeSeries(dir) {
  if (existsSync(dir) && readdirSync(dir).length === PROCS * SNAPS) return;
  mkdirSync(dir, { recursive: true });
  for (let p = 0; p < PROCS; p++) {
    const pid = 1000 + p;
    const stacks = Array.from({ length: STACKS }, (_, i) => stackFrames(p * 1000 + i, 6 + (i % 12)));
    const base = stacks.map(() => Math.round(4096 + rnd() * 2_000_000));
    const growth = stacks.map((_, i) => (i % 17 === 0 ? 65536 * (1 + (p % 4)) : 0));
    for (let s = 0; s < SNAPS; s++) {
      const vals = base.map((b, i) => Math.max(0, Math.round(b + growth[i] * s + (rnd() - 0.5) * 20000)));
      writeFileSync(path.join(dir, `bench.${pid}.${s}.i${s}.heap`), dump(stacks, vals));
    }
  }
}

function makeBig(dir) {
  if (existsSync(dir) && readdirSync(dir).length === 2) return;
  mkdirSync(dir, { recursive: true });
  // distinct leaves under a branching tree: > 100k flame-graph nodes
  const stacks = Array.from({ length: BIG_STACKS }, (_, i) => [
    ...ALLOC,
    EXE + 0x200000 + i * 16,
    EXE + 0x100000 + (i % 5000) * 16,
    EXE + 0x80000 + (i % 300) * 16,
    EXE + 0x40000 + (i % 20) * 16,
    EXE + 0x1101,
  ]);
  for (let s = 0; s < 2; s++) {
    const vals = stacks.map((_, i) => 4096 * (1 + (i % 50)) + (s === 1 && i % 7 === 0 ? 8192 : 0));
    writeFileSync(path.join(dir, `big.4242.${s}.i${s}.heap`), dump(stacks, vals));
  }
}

// ---------- run ----------
async function waitForServer(url, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server did not start: ${url}`);
}

const LONGTASKS = `
  window.__longtasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, ms: e.duration }); })
    .observe({ type: 'longtask', buffered: true });
`;

// The browser's floor for a job (--deep): what any page pays to get the job's bytes, with nothing parsed. Every file
// read whole as a dropped File (Blob.arrayBuffer, as the app's readers read one) and each gzip inflated through
// DecompressionStream read chunk by chunk (as core/formats/inflate.ts's webInflater), in as many Web Workers as the
// app starts readers (one per core), files dealt round-robin.
const FLOOR_PAGE = `<!doctype html><input type=file multiple id=f><script>
const src = \`self.onmessage = async (ev) => {
  let out = 0;
  for (const f of ev.data) {
    const bytes = new Uint8Array(await f.arrayBuffer());
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) { out += bytes.length; continue; }
    const ds = new DecompressionStream('gzip');
    const w = ds.writable.getWriter();
    const feed = (async () => { await w.ready; await w.write(bytes); await w.close(); })();
    const r = ds.readable.getReader();
    for (;;) { const x = await r.read(); if (x.done) break; out += x.value.length; }
    await feed;
  }
  self.postMessage(out);
};\`;
window.floor = () => {
  const files = [...document.getElementById('f').files];
  const n = navigator.hardwareConcurrency || 2;
  const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
  const t0 = performance.now();
  return Promise.all(Array.from({ length: n }, (_, k) => new Promise((resolve) => {
    const w = new Worker(url);
    w.onmessage = (e) => { w.terminate(); resolve(e.data); };
    w.postMessage(files.filter((_, i) => i % n === k));
  }))).then((outs) => ({ ms: performance.now() - t0, bytes: outs.reduce((a, b) => a + b, 0), readers: n }));
};
</script>`;

// The same bytes got in Node, as the CLI gets them: read whole (readFileSync) and inflated whole (gunzipSync), one
// thread; its CPU is what the browser's floor is compared with.
const NODE_FLOOR = `const fs = require('node:fs'); const zlib = require('node:zlib'); let out = 0;
for (const f of JSON.parse(fs.readFileSync(process.argv[1], 'utf8'))) {
  const b = fs.readFileSync(f); out += b[0] === 0x1f && b[1] === 0x8b ? zlib.gunzipSync(b).length : b.length;
}
if (out === 0) process.exit(1);`;

/** The browser's floor and Node's for the same files: { browserMs, browserCpuS, nodeCpuS, bytes, readers }. */
async function bytesFloor(browser, browserPid, files) {
  mkdirSync(OUT, { recursive: true });
  const page = path.join(OUT, 'floor.html');
  writeFileSync(page, FLOOR_PAGE);
  const list = path.join(OUT, 'floor-files.json');
  writeFileSync(list, JSON.stringify(files));
  const context = await browser.newContext();
  try {
    const p = await context.newPage();
    await p.goto(`file://${page}`);
    await p.locator('#f').setInputFiles(files);
    const before = treeCpu(browserPid);
    const r = await p.evaluate(() => window.floor());
    const browserCpuS = treeCpu(browserPid).totalS - before.totalS;
    const node = timed(process.execPath, ['-e', NODE_FLOOR, list]);
    return { browserMs: r.ms, browserCpuS, nodeCpuS: node.cpuS, bytes: r.bytes, readers: r.readers };
  } finally {
    await context.close();
  }
}

/** utime + stime (s) of a /proc stat line (the name is in parentheses and may hold spaces: fields 14 and 15). */
function statCpuS(st) {
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * CPU seconds of a process tree: by process type and live thread name (/proc/<pid>/task/<tid>/stat), and in all (/proc/<pid>/stat,
 * which keeps the time of threads that ended, e.g. the dump readers the app closes once every dump is read).
 */
function treeCpu(pid) {
  const byThread = {};
  let totalS = 0;
  for (const p of childTree(pid)) {
    try {
      totalS += statCpuS(readFileSync(`/proc/${p}/stat`, 'utf8'));
      const type =
        /--type=(\S+)/.exec(readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' '))?.[1] ?? 'browser';
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const st = readFileSync(`/proc/${p}/task/${t}/stat`, 'utf8');
        const name = `${type}:${st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'))}`;
        byThread[name] = (byThread[name] ?? 0) + statCpuS(st);
      }
    } catch {
      /* exited */
    }
  }
  return { totalS, byThread };
}

/** What the tree spent between two treeCpu readings; what live threads do not account for is of ended ones. */
function cpuSpent(before, after) {
  const by = Object.entries(after.byThread)
    .map(([k, v]) => [k, v - (before.byThread[k] ?? 0)])
    .filter(([, v]) => v > 0.05)
    .sort((a, b) => b[1] - a[1]);
  const totalS = after.totalS - before.totalS;
  const live = by.reduce((a, [, v]) => a + v, 0);
  return {
    totalS: +totalS.toFixed(2),
    byThread: { ...Object.fromEntries(by.map(([k, v]) => [k, +v.toFixed(2)])), '(ended)': +(totalS - live).toFixed(2) },
  };
}

async function main() {
  if (!existsSync(path.join(ROOT, 'dist', 'renderer', 'index.html')))
    throw new Error('build the renderer first: npm run build:renderer');
  const seriesDir = path.join(OUT, `series-${PROCS}x${SNAPS}`);
  const bigDir = path.join(OUT, 'big');
  let t = Date.now();
  const onlyScale = ARGS.deep || process.env.BENCH_ONLY === 'scale';
  if (!onlyScale) {
    makeSeries(seriesDir);
    makeBig(bigDir);
  }
  console.log(`generated inputs in ${((Date.now() - t) / 1000).toFixed(1)} s (${seriesDir}, ${bigDir})`);

  const server = spawn(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'preview', '--port', String(PORT), '--strictPort'],
    { cwd: ROOT, stdio: 'ignore' },
  );
  const results = {};
  try {
    await waitForServer(`http://127.0.0.1:${PORT}/index.html`, 30_000);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        // V8 flags for the page and its workers, to measure what a desktop build could set (BENCH_JS_FLAGS)
        ...(process.env.BENCH_JS_FLAGS ? [`--js-flags=${process.env.BENCH_JS_FLAGS}`] : []),
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
    );
    await context.addInitScript(LONGTASKS);

    // BENCH_ONLY=scale (or --deep) runs only phase 4
    if (!onlyScale) {
      // 1. drop → first timeline
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${PORT}/index.html`);
      const files = readdirSync(seriesDir).map((n) => path.join(seriesDir, n));
      await page.evaluate(() => (window.__longtasks = []));
      t = performance.now();
      await page.locator('[data-testid=file-input]').setInputFiles(files);
      const tGiven = performance.now();
      await page.locator('[data-testid=timeline-points] .snap').first().waitFor({ timeout: 300_000 });
      await page.waitForFunction(() => performance.getEntriesByName('heaplens:timeline').length > 0, null, {
        timeout: 300_000,
      });
      const tTimeline = performance.now();
      const load = await page.evaluate(() => ({
        worker: window.__heaplens?.client.timings.load ?? null,
        readWait: Math.round(window.__heaplens?.job.summary?.readWaitMs ?? -1),
        mb: Math.round((window.__heaplens?.job.summary?.bytesTotal ?? 0) / 1e6),
        // Playwright's setInputFiles of 12,800 files runs one long task (creating the File objects) that also
        // dispatches the app's change handler; the app's part of it is appDropHandlerMs.
        // tasks that started after the app's change handler (that one also contains Playwright's own work)
        longest: Math.max(
          0,
          ...window.__longtasks
            .filter((e) => e.start > (performance.getEntriesByName('heaplens:load-start')[0]?.startTime ?? 0))
            .map((e) => e.ms),
        ),
        appHandlerMs:
          performance.getEntriesByName('heaplens:load-posted')[0].startTime -
          performance.getEntriesByName('heaplens:load-start')[0].startTime,
        longestAll: Math.max(0, ...window.__longtasks.map((e) => e.ms)),
        count: window.__longtasks.length,
        startToTimeline:
          performance.getEntriesByName('heaplens:timeline')[0].startTime -
          performance.getEntriesByName('heaplens:load-start')[0].startTime,
        // where the long tasks fell, relative to the app's marks (ms after load-start)
        tasks: (() => {
          const t0 = performance.getEntriesByName('heaplens:load-start')[0].startTime;
          const marks = Object.fromEntries(
            ['heaplens:load-posted', 'heaplens:load-done', 'heaplens:timeline'].map((n) => [
              n.slice(9),
              Math.round((performance.getEntriesByName(n)[0]?.startTime ?? NaN) - t0),
            ]),
          );
          return {
            marks,
            long: window.__longtasks
              .filter((e) => e.start > t0)
              .map((e) => ({ at: Math.round(e.start - t0), ms: Math.round(e.ms) })),
          };
        })(),
        procs: window.__heaplens?.job.summary?.processes.length ?? 0,
        snaps: window.__heaplens?.job.summary?.processes.reduce((s, p) => s + p.snapshots.length, 0) ?? 0,
      }));
      results.load = {
        files: files.length,
        processes: load.procs,
        snapshots: load.snaps,
        handToPageMs: Math.round(tGiven - t),
        dropToFirstTimelineMs: Math.round(tTimeline - t),
        appLoadStartToTimelineMs: Math.round(load.startToTimeline),
        appDropHandlerMs: Math.round(load.appHandlerMs),
        workerLoadMs: load.worker === null ? null : Math.round(load.worker),
        loaderReadWaitMs: load.readWait,
        megabytes: load.mb,
        longestMainThreadTaskMs: Math.round(load.longest),
        longestTaskIncludingHarnessMs: Math.round(load.longestAll),
        longTasks: load.count,
        longTasksAfterLoadStart: load.tasks,
      };
      console.log('load', results.load);
      // interaction on the big series: switch processes and tabs
      await page.evaluate(() => (window.__longtasks = []));
      await page.locator('[data-testid=processes] tbody tr').nth(3).click();
      await page.getByTestId('tab-flame').click();
      await page.getByTestId('flame').locator('canvas').waitFor();
      await page.getByTestId('tab-diff').click();
      await page.getByTestId('diff-flame').locator('canvas').waitFor();
      await page.getByTestId('tab-growth').click();
      await page.getByTestId('growth-row').first().waitFor();
      results.interact64 = {
        longestMainThreadTaskMs: Math.round(
          await page.evaluate(() => Math.max(0, ...window.__longtasks.map((e) => e.ms))),
        ),
      };
      console.log('interaction (64×200)', results.interact64);
      await page.close();

      // 2. flame graph at 100k+ nodes
      const p2 = await context.newPage();
      await p2.goto(`http://127.0.0.1:${PORT}/index.html`);
      await p2.locator('[data-testid=file-input]').setInputFiles(readdirSync(bigDir).map((n) => path.join(bigDir, n)));
      await p2.getByTestId('job-info').waitFor({ timeout: 300_000 });
      await p2.getByTestId('tab-flame').click();
      await p2.waitForFunction(() => (window.__heaplensFlame?.flame?.size() ?? 0) > 100_000, null, {
        timeout: 120_000,
      });
      await p2.waitForTimeout(300);
      await p2.evaluate(() => (window.__longtasks = []));
      const frames = await p2.evaluate(async () => {
        const api = window.__heaplensFlame.flame;
        const times = [];
        for (let i = 0; i < 60; i++) times.push(api.drawNow());
        return { nodes: api.size(), times };
      });
      // hover + zoom interactions, measured by the component's own per-frame timer
      const box = await p2.getByTestId('flame').locator('canvas').boundingBox();
      const hoverTimes = [];
      for (let i = 0; i < 40; i++) {
        await p2.mouse.move(box.x + 5 + (i * (box.width - 10)) / 40, box.y + 18 * (2 + (i % 4)) + 5);
        await p2.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        hoverTimes.push(await p2.evaluate(() => window.__heaplensPerf?.flameFrameMs ?? 0));
      }
      await p2.mouse.dblclick(box.x + box.width / 3, box.y + 18 * 2 + 5);
      await p2.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const zoomMs = await p2.evaluate(() => window.__heaplensPerf?.flameFrameMs ?? 0);
      await p2.keyboard.press('Escape');
      await p2.getByTestId('flame-search').fill('trainer+0x2');
      await p2.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const searchMs = await p2.evaluate(() => window.__heaplensPerf?.flameFrameMs ?? 0);
      const sorted = [...frames.times].sort((a, b) => a - b);
      const pct = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      results.flame = {
        nodes: frames.nodes,
        drawMedianMs: +pct(0.5).toFixed(2),
        drawP95Ms: +pct(0.95).toFixed(2),
        drawMaxMs: +sorted[sorted.length - 1].toFixed(2),
        hoverFrameMaxMs: +Math.max(...hoverTimes).toFixed(2),
        zoomFrameMs: +zoomMs.toFixed(2),
        searchFrameMs: +searchMs.toFixed(2),
        longestMainThreadTaskMs: Math.round(
          await p2.evaluate(() => Math.max(0, ...window.__longtasks.map((e) => e.ms))),
        ),
      };
      console.log('flame', results.flame);
      await p2.close();
    }

    // 4. large job: first timeline (the preview from the dump heads) and full load, browser memory
    const scaleData = process.env.HEAPLENS_SCALE_DATA ?? '/tmp/heaplens-scale-data';
    let scaleDir = process.env.BENCH_SCALE_JOB ?? path.join(scaleData, '16x100x5000');
    if (ARGS.deep) {
      // the same folder stacks-bench.mjs makes and reuses for its deep shape
      const [processes, dumps, stacks] = DEEP_SIZE.split('x').map(Number);
      scaleDir = (
        await ensureJob(path.join(scaleData, `stacks-deep-${DEEP_SIZE}`), {
          processes,
          dumps,
          stacks,
          depth: 0,
          python: true,
          gzipHalf: true,
          deep: true,
        })
      ).dir;
    }
    if (existsSync(path.join(scaleDir, '.complete'))) {
      // the CLI's summary of the same job, the peer of the app's whole load: timed before and after the browser's
      // run (the mean of the two is the reference, so a load change during the run shows in both)
      // (wall ms; its CPU, all threads, under GNU time: wall times swing on a shared machine, CPU less)
      const cliCpuS = [];
      const cliSummary = () => {
        const r = timed(process.execPath, [path.join(ROOT, 'bin', 'heaplens.js'), 'summary', scaleDir]);
        cliCpuS.push(r.cpuS);
        return r.s * 1000;
      };
      const cliBefore = ARGS.deep ? cliSummary() : null;
      const p3 = await context.newPage();
      await p3.goto(`http://127.0.0.1:${PORT}/index.html`);
      const scaleFiles = readdirSync(scaleDir)
        .filter((n) => !n.startsWith('.'))
        .map((n) => path.join(scaleDir, n));
      const textBytes = JSON.parse(readFileSync(path.join(scaleDir, '.complete'), 'utf8')).textBytes;
      let peakRss = 0;
      let peakPss = 0;
      const browserPid = childPids(process.pid).find((p) => /chrom/i.test(readFileSync(`/proc/${p}/comm`, 'utf8')));
      let peakOne = 0;
      // peak per kind of browser process (browser, renderer, gpu-process, utility…), and when the tree peaked
      const peakByType = {};
      let t3 = performance.now();
      let atPeak = [];
      let peakAt = 0;
      const rssTimer = setInterval(() => {
        const tree = childTree(browserPid).map((p) => {
          let type = 'browser';
          try {
            const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
            type = /--type=(\S+)/.exec(cmd)?.[1] ?? 'browser';
            if (type === 'utility') type += ':' + (/--utility-sub-type=(\S+)/.exec(cmd)?.[1] ?? '?');
          } catch {
            /* exited */
          }
          return { type, kb: rssOf(p) };
        });
        const now = tree.reduce((a, p) => a + p.kb, 0);
        peakPss = Math.max(
          peakPss,
          childTree(browserPid).reduce((a, p) => a + pssOf(p), 0),
        );
        if (now > peakRss) {
          peakRss = now;
          peakAt = performance.now() - t3;
          atPeak = tree.map((p) => `${p.type} ${Math.round(p.kb / 1024)}`);
        }
        peakOne = Math.max(peakOne, ...tree.map((p) => p.kb));
        for (const p of tree) peakByType[p.type] = Math.max(peakByType[p.type] ?? 0, p.kb);
      }, 250);
      await p3.evaluate(() => (window.__longtasks = []));
      // BENCH_TRACE=<file>: the page's main-thread CPU profile (.cpuprofile) and every worker request's send and
      // answer (ms after load start), to find what a long task or a late row waits for
      let traceStart = 0;
      const trace = process.env.BENCH_TRACE ? await p3.context().newCDPSession(p3) : null;
      if (trace) {
        await trace.send('Profiler.enable');
        await trace.send('Profiler.setSamplingInterval', { interval: 500 });
        await trace.send('Profiler.start');
        traceStart = await p3.evaluate(() => performance.now());
        await p3.evaluate(() => {
          const c = window.__heaplens.client;
          const start = c.start.bind(c);
          window.__requests = [];
          c.start = (req, onProgress) => {
            const r = { type: req.type, sent: performance.now(), answered: null };
            window.__requests.push(r);
            const out = start(req, onProgress);
            out.done.then(
              () => (r.answered = performance.now()),
              () => (r.answered = -1),
            );
            return out;
          };
        });
      }
      t3 = performance.now();
      // each waited for from the drop on, side by side (the first suspect row may come before the timeline's
      // preview is gone, or the whole job before a suspect row is drawn)
      const at = (p) => p.then(() => performance.now());
      const previewAt = at(p3.getByTestId('preview-process').first().waitFor({ timeout: 600_000 }));
      const suspectAt = at(p3.getByTestId('suspect-row').first().waitFor({ timeout: 1_800_000 }));
      const fullAt = at(
        p3.waitForFunction(() => performance.getEntriesByName('heaplens:load-done').length > 0, null, {
          timeout: 1_800_000,
          polling: 50,
        }),
      );
      // BENCH_CHROME_TRACE=<file>: a Chrome trace of the load with every thread's sampled CPU profile (the page,
      // the analysis worker, the dump readers); bench/trace-self.mjs reads it
      if (process.env.BENCH_CHROME_TRACE)
        await browser.startTracing(p3, {
          path: process.env.BENCH_CHROME_TRACE,
          categories: (
            process.env.BENCH_CHROME_TRACE_CATEGORIES ??
            'disabled-by-default-v8.cpu_profiler,v8,devtools.timeline,__metadata'
          ).split(','),
        });
      const cpuAtDrop = treeCpu(browserPid);
      await p3.locator('[data-testid=file-input]').setInputFiles(scaleFiles);
      const tPreview = await previewAt;
      const tSuspect = await suspectAt;
      const tFull = await fullAt;
      const loadCpu = cpuSpent(cpuAtDrop, treeCpu(browserPid));
      // the views of the full job (its ranking, growth table) render after it is in: their tasks and memory count
      // too, until the page is quiet
      await p3.waitForFunction(
        () =>
          window.__heaplens?.client.inFlight === 0 &&
          window.__heaplens.job.suspects &&
          document.querySelector('[data-testid=suspect-row]'),
        null,
        { timeout: 600_000, polling: 50 },
      );
      const tSettled = performance.now();
      if (process.env.BENCH_CHROME_TRACE) await browser.stopTracing();
      await p3.waitForTimeout(3000);
      clearInterval(rssTimer);
      const info = await p3.evaluate(() => ({
        timeOrigin: performance.timeOrigin,
        start: performance.getEntriesByName('heaplens:load-start')[0]?.startTime ?? 0,
        readers: window.__heaplens?.job.summary?.readers ?? 0,
        procs: window.__heaplens?.job.summary?.processes.length ?? 0,
        decodeMs: window.__heaplens?.client.decodeMs ?? {},
        longTasks: window.__longtasks.map((e) => ({ start: e.start, ms: e.ms })),
        marks: Object.fromEntries(
          [
            'heaplens:load-posted',
            'heaplens:preview',
            'heaplens:partial',
            'heaplens:load-done',
            'heaplens:timeline',
          ].map((n) => [
            n.slice(9),
            Math.round(
              (performance.getEntriesByName(n)[0]?.startTime ?? NaN) -
                (performance.getEntriesByName('heaplens:load-start')[0]?.startTime ?? 0),
            ),
          ]),
        ),
      }));
      if (trace) {
        const { profile } = await trace.send('Profiler.stop');
        // the page's clock at the profile's start, and its load start: to place samples against the long tasks
        writeFileSync(
          process.env.BENCH_TRACE,
          JSON.stringify({ ...profile, pageMsAtStart: traceStart, loadStart: info.start }),
        );
        const t0 = info.start;
        const reqs = await p3.evaluate(() => window.__requests);
        console.log(
          'requests (ms after load start: sent → answered):',
          reqs
            .map(
              (r) => `${r.type} ${Math.round(r.sent - t0)}→${r.answered === null ? '…' : Math.round(r.answered - t0)}`,
            )
            .join(', '),
        );
      }
      const cliAfter = ARGS.deep ? cliSummary() : null;
      // the page's last use is above: it closes before the floor, so nothing shares the cores with it
      await p3.close();
      // the bytes alone, in this browser and in Node, after the app's run
      const floor = ARGS.deep ? await bytesFloor(browser, browserPid, scaleFiles) : null;
      // a page task's start on this process's clock (both clocks count from their time origins)
      const nodeMs = (pageMs) => info.timeOrigin + pageMs - performance.timeOrigin;
      const phaseOf = (pageMs) => {
        const x = nodeMs(pageMs);
        if (x < tPreview) return 'drop → first timeline (the dump heads)';
        if (x < tSuspect) return 'first timeline → first suspect row';
        if (x < tFull) return 'first suspect row → whole job';
        return 'whole job → its views drawn';
      };
      const tasksAfter = info.longTasks.filter((e) => e.start > info.start);
      const longest = tasksAfter.reduce((b, e) => (!b || e.ms > b.ms ? e : b), null);
      if (ARGS.deep) {
        const cliMs = (cliBefore + cliAfter) / 2;
        results.pace = {
          job: `${path.basename(scaleDir)}: ${DEEP_SIZE.replace(/x/g, ' × ')} deep stacks, ${scaleFiles.length} files, ${(textBytes / 1e9).toFixed(2)} GB of text`,
          dropToFirstTimelineMs: Math.round(tPreview - t3),
          dropToFirstSuspectRowMs: Math.round(tSuspect - t3),
          dropToWholeJobMs: Math.round(tFull - t3),
          cliSummaryMs: Math.round(cliMs),
          cliSummaryBeforeAfterMs: [Math.round(cliBefore), Math.round(cliAfter)],
          wholeJobOverCli: +((tFull - t3) / cliMs).toFixed(2),
          // CPU: the browser tree's from the drop to the whole job (by thread: the dump readers end before it) and
          // the CLI's (the mean of its two runs)
          browserCpuS: loadCpu.totalS,
          browserCpuByThread: loadCpu.byThread,
          cliCpuS: +((cliCpuS[0] + cliCpuS[1]) / 2).toFixed(2),
          // the browser's floor (bytesFloor): the CPU it spends on the job's bytes beyond what Node spends on them
          // is CPU the app spends and the CLI cannot; spread over every core at best, it puts the app's whole job at
          // no less than (CLI + extra / cores) / CLI
          bytesFloor: {
            browserMs: Math.round(floor.browserMs),
            browserCpuS: +floor.browserCpuS.toFixed(2),
            nodeCpuS: +floor.nodeCpuS.toFixed(2),
            readers: floor.readers,
            inflatedGB: +(floor.bytes / 1e9).toFixed(2),
          },
          floorOverCli: +(
            (cliMs / 1000 + Math.max(0, floor.browserCpuS - floor.nodeCpuS) / floor.readers) /
            (cliMs / 1000)
          ).toFixed(2),
          longestMainThreadTaskMs: Math.round(longest?.ms ?? 0),
          longestTaskPhase: longest ? phaseOf(longest.start) : null,
          browserPeakPssMB: Math.round(peakPss / 1024),
          loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        };
        console.log('app keeps pace (issue 25 item 4)');
        const goal = (ok) => (ok ? 'meets' : 'MISSES');
        const P = results.pace;
        for (const [what, v, g, ok] of [
          ['drop → first timeline', `${P.dropToFirstTimelineMs} ms`, '≤ 2000 ms', P.dropToFirstTimelineMs <= 2000],
          [
            'drop → first suspect row',
            `${P.dropToFirstSuspectRowMs} ms`,
            '≤ 4000 ms',
            P.dropToFirstSuspectRowMs <= 4000,
          ],
          ['drop → whole job', `${P.dropToWholeJobMs} ms`, '', true],
          [
            'CLI summary, same job',
            `${P.cliSummaryMs} ms (before ${cliBefore.toFixed(0)}, after ${cliAfter.toFixed(0)})`,
            '',
            true,
          ],
          ['whole job / CLI', `${P.wholeJobOverCli}×`, '≤ 1.2×', P.wholeJobOverCli <= 1.2],
          [
            "the browser's floor / CLI",
            `≥ ${P.floorOverCli}× (its bytes: ${P.bytesFloor.browserCpuS} s CPU here, ${P.bytesFloor.nodeCpuS} s in Node)`,
            '',
            true,
          ],
          [
            'CPU, browser tree / CLI',
            `${P.browserCpuS} s / ${P.cliCpuS} s = ${(P.browserCpuS / P.cliCpuS).toFixed(2)}×`,
            '',
            true,
          ],
          [
            'longest main-thread task',
            `${P.longestMainThreadTaskMs} ms in ${P.longestTaskPhase}`,
            '≤ 100 ms',
            P.longestMainThreadTaskMs <= 100,
          ],
          ['browser tree peak PSS', `${P.browserPeakPssMB} MB`, '≤ 1536 MB', P.browserPeakPssMB <= 1536],
        ])
          console.log(`  ${what.padEnd(26)} ${v.padEnd(48)} ${g.padEnd(10)} ${g ? goal(ok) : ''}`);
        console.log(`  browser CPU by thread (s): ${JSON.stringify(P.browserCpuByThread)}`);
        console.log(`  job: ${P.job}; load average ${P.loadAverage}`);
      }
      results.scale = {
        job: scaleDir,
        files: scaleFiles.length,
        textGB: +(textBytes / 1e9).toFixed(2),
        processes: info.procs,
        readers: info.readers,
        dropToFirstTimelineMs: Math.round(tPreview - t3),
        dropToFirstSuspectRowMs: Math.round(tSuspect - t3),
        dropToFullLoadMs: Math.round(tFull - t3),
        // …and until the full job's suspects and growth table are drawn
        dropToViewsDrawnMs: Math.round(tSettled - t3),
        longestMainThreadTaskAfterLoadStartMs: Math.round(
          Math.max(0, ...info.longTasks.filter((e) => e.start > info.start).map((e) => e.ms)),
        ),
        browserPeakRssMB: Math.round(peakRss / 1024),
        // the same tree with shared pages counted once (PSS)
        browserPeakPssMB: Math.round(peakPss / 1024),
        // the largest single process of the browser (the page's renderer, which holds the analysis worker and readers)
        largestProcessPeakRssMB: Math.round(peakOne / 1024),
        browserPeakAtMs: Math.round(peakAt),
        processesAtPeakMB: atPeak,
        peakRssMBByProcessType: Object.fromEntries(
          Object.entries(peakByType).map(([k, v]) => [k, Math.round(v / 1024)]),
        ),
        // ms after the app's load start; long tasks after it (ms at, duration)
        appMarks: info.marks,
        // the page's ms decoding the slowest message of each kind (worker-client.ts)
        decodeMs: Object.fromEntries(Object.entries(info.decodeMs).map(([k, v]) => [k, Math.round(v)])),
        longTasksAfterLoadStart: tasksAfter.map((e) => ({
          at: Math.round(e.start - info.start),
          ms: Math.round(e.ms),
          phase: phaseOf(e.start),
        })),
      };
      console.log('large job', results.scale);
    } else {
      console.log(
        `large job: skipped (generate it with: node bench/scale-bench.mjs --only 16x100x5000, or set BENCH_SCALE_JOB)`,
      );
    }
    await browser.close();
  } finally {
    server.kill();
  }
  // the memory target is judged on the tree's PSS: its RSS sum counts Chromium's shared pages once per process
  // (both are printed)
  const ok =
    (!results.load ||
      (results.load.dropToFirstTimelineMs < 20_000 &&
        results.flame.drawP95Ms < 16 &&
        results.load.longestMainThreadTaskMs <= 100)) &&
    (!results.pace ||
      (results.pace.dropToFirstTimelineMs <= 2000 &&
        results.pace.dropToFirstSuspectRowMs <= 4000 &&
        results.pace.wholeJobOverCli <= 1.2 &&
        results.pace.longestMainThreadTaskMs <= 100 &&
        results.pace.browserPeakPssMB <= 1536)) &&
    (!results.scale ||
      (results.scale.dropToFirstTimelineMs <= (results.pace ? 2000 : 3000) &&
        results.scale.longestMainThreadTaskAfterLoadStartMs <= 100 &&
        results.scale.browserPeakPssMB < 1536));
  console.log(
    JSON.stringify(
      {
        bench: 'ui',
        targets: { loadMs: 20000, frameMs: 16, longTaskMs: 100, scaleFirstTimelineMs: 3000, scalePssMB: 1536 },
        ...results,
        meetsTargets: ok,
      },
      null,
      2,
    ),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
