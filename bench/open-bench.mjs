// The app through `heaplens open` (issue 43): the Node engine reads the job with the CLI's readers and the page gets
// answers. On a generated job (the deep-stack job of generate-series.mjs, `--size PxDxS`, default 16x100x5000; or
// `--job DIR`, e.g. the 1,000-process job), it times from the command's start: the URL printed, the first timeline
// (every process from the dump heads), the first suspect row, and the whole job in the page; against `heaplens
// summary` of the same job timed in the same run (the ratio is the goal: ≤ 1.2× the CLI), and the CPU seconds each
// used to the whole job (the engine's, the CLI's: a paired figure that holds on a shared machine; the browser's, by
// process kind). It also records the
// browser tree's peak PSS (≤ 300 MB: the page holds answers only), the engine's peak RSS, the longest main-thread
// task while loading (≤ 100 ms), and that the first suspect row names the call site `growth --json` ranks first.
// Usage: npm run bench:open -- [--size 16x100x5000 | --job DIR] [--runs N]
// Env: CHROMIUM_PATH, BENCH_DATA (where generated jobs live, default /tmp/heaplens-bench), BENCH_ENGINE_NODE_ARGS
// (node flags for the engine's process), HEAPLENS_ENGINE_TRACE=1 (the engine's answers and phases on stderr),
// BENCH_CHROME_TRACE=<file> (a trace of the page).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureJob } from './generate-series.mjs';
import { childPids, childTree } from './proc-tree.mjs';
import { needGnuTime, timed } from './gnu-time.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'bin/heaplens.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DATA = process.env.BENCH_DATA ?? '/tmp/heaplens-bench';
const { values } = parseArgs({
  options: { size: { type: 'string' }, job: { type: 'string' }, runs: { type: 'string', default: '1' } },
});

/** KiB of a /proc field (Pss from smaps_rollup, VmRSS/VmHWM from status). */
function field(pid, file, name) {
  try {
    return Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** A browser process's kind from its command line: browser, renderer(:browser-ui), gpu-process, utility:<sub-type>, zygote… */
function kindOf(pid) {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const type = /--type=(\S+)/.exec(cmd)?.[1] ?? 'browser';
    // the browser's own UI (new headless Chromium is the whole browser): a renderer, but no page's
    if (type === 'renderer' && cmd.includes('--top-chrome-webui')) return 'renderer:browser-ui';
    return type === 'utility' ? `utility:${/--utility-sub-type=(\S+)/.exec(cmd)?.[1] ?? '?'}` : type;
  } catch {
    return 'exited';
  }
}

/** The browser tree's renderer processes now. */
const renderers = (browserPid) => childTree(browserPid).filter((p) => kindOf(p) === 'renderer');

// the browser's trace recorder: there only while the bench traces the page (below), so left out of the tree's sums
const TRACING = 'utility:tracing.mojom.TracingService';

/** PSS (MB) of the browser tree by process kind, the page's renderer apart. */
function pssByKind(browserPid, pagePid) {
  const out = {};
  for (const p of childTree(browserPid)) {
    const k = p === pagePid ? 'the page' : kindOf(p);
    out[k] = (out[k] ?? 0) + field(p, 'smaps_rollup', 'Pss') / 1024;
  }
  return out;
}
const byKindText = (o) =>
  Object.entries(o)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(', ');

/**
 * What the page itself holds once the job is in (CDP Performance.getMetrics and the document), after a full GC: its
 * JS heap (used, and what V8 has reserved for it), DOM nodes (and before the GC: live and garbage) and layout
 * objects, and the pixels of its canvases (4 bytes a device pixel, the backing store each canvas keeps, on the CPU
 * here as the bench's browser has no GPU).
 */
async function pageParts(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () =>
    Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
  const before = await metrics();
  await cdp.send('HeapProfiler.collectGarbage');
  const m = await metrics();
  await cdp.detach();
  const canvas = await page.evaluate(() =>
    [...document.querySelectorAll('canvas')].map((c) => ({
      w: c.width,
      h: c.height,
      id: c.closest('[data-testid]')?.getAttribute('data-testid') ?? c.className,
    })),
  );
  return {
    jsUsedMB: m.JSHeapUsedSize / 2 ** 20,
    jsTotalMB: m.JSHeapTotalSize / 2 ** 20,
    nodes: m.Nodes,
    nodesBeforeGc: before.Nodes,
    jsBeforeGcMB: before.JSHeapTotalSize / 2 ** 20,
    layoutObjects: m.LayoutObjects,
    canvasMB: canvas.reduce((a, c) => a + c.w * c.h * 4, 0) / 2 ** 20,
    canvases: canvas.map((c) => `${c.id} ${c.w}×${c.h}`),
  };
}

/**
 * The page's main-thread tasks in a Chrome trace (the renderer's CrRendererMain with the most tasks): the five
 * longest by wall time and by the thread's CPU time, each as [wall ms, CPU ms, s from the first task].
 */
function traceTasks(file) {
  const raw = JSON.parse(readFileSync(file, 'utf8'));
  const events = Array.isArray(raw) ? raw : raw.traceEvents;
  const mains = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  );
  const byThread = new Map();
  for (const e of events)
    if (e.ph === 'X' && /RunTask$/.test(e.name) && mains.has(`${e.pid}:${e.tid}`)) {
      const k = `${e.pid}:${e.tid}`;
      if (!byThread.has(k)) byThread.set(k, []);
      byThread.get(k).push(e);
    }
  const tasks = [...byThread.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const t0 = Math.min(...tasks.map((e) => e.ts));
  const row = (e) => [e.dur / 1000, (e.tdur ?? e.dur) / 1000, (e.ts - t0) / 1e6];
  return {
    byWall: [...tasks]
      .sort((a, b) => b.dur - a.dur)
      .slice(0, 5)
      .map(row),
    byCpu: [...tasks]
      .sort((a, b) => (b.tdur ?? b.dur) - (a.tdur ?? a.dur))
      .slice(0, 5)
      .map(row),
  };
}

/** `heaplens summary` of the job: wall seconds and CPU seconds (user + system, all threads; GNU time) */
function cliSummary(dir) {
  const r = timed(process.execPath, [CLI, 'summary', dir]);
  return { s: r.s, cpu: r.cpuS };
}

/** CPU seconds (user + system, all its threads) a live process has used so far, from /proc/<pid>/stat. */
function cpuOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function firstGroupCallSite(dir) {
  const r = spawnSync(process.execPath, [CLI, 'growth', dir, '--json', '-n', '1'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  // the frame that names the group as the app's rows name it (core/frames/stack-labels.ts leadFrame: in the default
  // python-first view the first Python frame, else the first frame)
  const frames = JSON.parse(r.stdout).groups?.[0]?.frames ?? [];
  const f = frames.find((x) => x.kind === 'python') ?? frames[0];
  return f ? (f.function ?? (f.module ? `${f.module}+${f.moduleOffset}` : f.address)) : null;
}

/**
 * One load of the job in a new page. With `probe`, the bench watches it too: the browser tree's PSS every 100 ms, the
 * page's JS heap every 0.5 s and a Chrome trace of its tasks. That watching costs the bench ~2.8 s of CPU on the
 * 16-process job (smaps_rollup of ~9 processes, the trace's events over CDP) on the same two cores, so the times
 * and CPU figures are taken from a load without it.
 */
async function openRun(browser, browserPid, dir, probe) {
  const before = new Set(renderers(browserPid));
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.addInitScript(() => {
    window.__longtasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  const t0 = performance.now();
  const benchCpu0 = process.cpuUsage();
  let benchCpu = 0;
  // BENCH_ENGINE_NODE_ARGS: node flags for the engine alone (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, which
  // NODE_OPTIONS refuses)
  const nodeArgs = (process.env.BENCH_ENGINE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'open', dir, '--no-browser', '--port', '0'], {
    stdio: ['ignore', 'pipe', process.env.HEAPLENS_ENGINE_TRACE ? 'inherit' : 'pipe'],
  });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const line = buf.split('\n')[0];
      if (buf.includes('\n')) resolve(line.trim());
    });
    child.on('exit', (code) => reject(new Error(`heaplens open exited ${code}`)));
  });
  const tUrl = performance.now();
  let peakPss = 0;
  let peakEngine = 0;
  // the page's own renderer: of the renderers started since this page was opened (Chromium also keeps a spare one
  // ready for the next navigation), the one that has used the most CPU
  let pagePss = 0;
  let pagePid = 0;
  let atPeak = {};
  let peakAt = 0;
  // without the probe there is no sampler: the engine's peak RSS is its VmHWM at the end
  const sample = () => {
    const mine = renderers(browserPid).filter((p) => !before.has(p));
    const pss = new Map(
      childTree(browserPid)
        .filter((p) => kindOf(p) !== TRACING)
        .map((p) => [p, field(p, 'smaps_rollup', 'Pss')]),
    );
    for (const p of mine) if (cpuOf(p) > cpuOf(pagePid)) pagePid = p;
    pagePss = Math.max(pagePss, pss.get(pagePid) ?? 0);
    const tree = [...pss.values()].reduce((a, b) => a + b, 0);
    if (tree > peakPss) {
      peakPss = tree;
      peakAt = (performance.now() - t0) / 1000;
      atPeak = pssByKind(browserPid, pagePid);
    }
    peakEngine = Math.max(peakEngine, field(child.pid, 'status', 'VmRSS'));
  };
  const timer = probe ? setInterval(sample, 100) : undefined;
  // the page's JS heap while it loads (V8's used and reserved bytes; CDP Performance.getMetrics, every 0.5 s)
  const cdp = probe ? await page.context().newCDPSession(page) : null;
  let jsPeak = { used: 0, total: 0 };
  let jsTimer;
  if (cdp) {
    await cdp.send('Performance.enable');
    jsTimer = setInterval(() => {
      cdp
        .send('Performance.getMetrics')
        .then(({ metrics }) => {
          const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
          jsPeak = { used: Math.max(jsPeak.used, m.JSHeapUsedSize), total: Math.max(jsPeak.total, m.JSHeapTotalSize) };
        })
        .catch(() => {});
    }, 500);
  }
  const at = (p) => p.then(() => performance.now());
  // BENCH_CHROME_TRACE=<file>: a Chrome trace of the page while the job loads, with its sampled CPU profile
  // (bench/trace-self.mjs reads it; --longest N: what the page ran in its longest tasks). Without it, a trace of the
  // tasks alone ('toplevel'): each task's CPU time on the thread beside its wall time. On a shared machine a task's
  // wall time is mostly the thread waiting for a core (a 379 ms task of 1 ms CPU at load 7 on 2 cores).
  const tracePath = process.env.BENCH_CHROME_TRACE ?? path.join(os.tmpdir(), `open-bench-tasks-${process.pid}.json`);
  if (probe)
    await browser.startTracing(page, {
      path: tracePath,
      categories: process.env.BENCH_CHROME_TRACE
        ? ['disabled-by-default-v8.cpu_profiler', 'v8', 'devtools.timeline', 'toplevel', '__metadata']
        : ['toplevel', '__metadata'],
    });
  await page.goto(url);
  const pageCpu = () => childTree(browserPid).reduce((a, p) => a + cpuOf(p), 0);
  const pageCpu0 = pageCpu();
  // each browser process's CPU at the start, for the use by kind (the page's renderer, the GPU process…)
  const cpuAt0 = new Map(childTree(browserPid).map((p) => [p, cpuOf(p)]));
  let cpuByKind = {};
  let engineCpu = 0;
  let pageCpuUsed = 0;
  const [tTimeline, tSuspect, tFull] = await Promise.all([
    at(
      page
        .locator('[data-testid=preview-process], [data-testid=timeline-points] .snap')
        .first()
        .waitFor({ timeout: 1_800_000 }),
    ),
    at(page.getByTestId('suspect-row').first().waitFor({ timeout: 1_800_000 })),
    at(
      page
        .waitForFunction(() => performance.getEntriesByName('heaplens:load-done').length > 0, null, {
          timeout: 1_800_000,
          polling: 50,
        })
        .then(() => {
          // CPU to the whole job in the page: on a shared machine the ratio of CPU seconds holds where wall time
          // does not
          engineCpu = cpuOf(child.pid);
          pageCpuUsed = pageCpu() - pageCpu0;
          cpuByKind = {};
          for (const p of childTree(browserPid)) {
            const k = kindOf(p);
            cpuByKind[k] = (cpuByKind[k] ?? 0) + cpuOf(p) - (cpuAt0.get(p) ?? 0);
          }
          const c = process.cpuUsage(benchCpu0);
          benchCpu = (c.user + c.system) / 1e6;
        }),
    ),
  ]);
  await page.waitForFunction(() => window.__heaplens?.client.inFlight === 0 && window.__heaplens.job.suspects, null, {
    timeout: 600_000,
    polling: 50,
  });
  await page.waitForTimeout(1000);
  clearInterval(timer);
  clearInterval(jsTimer);
  let tasks = null;
  let settled = null;
  let parts = null;
  let collected = null;
  if (probe) {
    await browser.stopTracing();
    await cdp.detach().catch(() => {});
    tasks = traceTasks(tracePath);
    if (!process.env.BENCH_CHROME_TRACE) rmSync(tracePath, { force: true });
    settled = pssByKind(browserPid, pagePid);
    // what the page holds once its garbage is collected (pageParts collects it): after a load the renderer holds
    // garbage V8 and Blink collect when they choose (on 120 processes, 17,000 DOM nodes of which 6,700 live)
    parts = await pageParts(page);
    await page.waitForTimeout(2000);
    collected = pssByKind(browserPid, pagePid);
  }
  const info = await page.evaluate(() => ({
    longest: Math.max(0, ...window.__longtasks.map((e) => e.ms)),
    // the five longest with their start, and the load's end, in the page's time: during the load or at its end
    top: [...window.__longtasks].sort((a, b) => b.ms - a.ms).slice(0, 5),
    loadDone: performance.getEntriesByName('heaplens:load-done')[0]?.startTime ?? null,
    engine: window.__heaplens?.engineLabel,
    firstRow: document.querySelector('[data-testid=suspect-row]')?.textContent ?? '',
  }));
  peakEngine = Math.max(peakEngine, field(child.pid, 'status', 'VmHWM'));
  child.kill('SIGINT');
  await new Promise((r) => child.on('exit', r));
  await page.close();
  const s = (t) => (t - t0) / 1000;
  return {
    url: s(tUrl),
    timeline: s(tTimeline),
    suspect: s(tSuspect),
    full: s(tFull),
    engineCpu,
    pageCpu: pageCpuUsed,
    cpuByKind,
    benchCpu,
    longest: info.longest,
    top: info.top,
    loadDone: info.loadDone,
    engineLabel: info.engine,
    firstRow: info.firstRow,
    browserPssMB: peakPss / 1024,
    pagePssMB: pagePss / 1024,
    jsPeakMB: { used: jsPeak.used / 2 ** 20, total: jsPeak.total / 2 ** 20 },
    tasks,
    atPeak,
    peakAt,
    settled,
    collected,
    parts,
    engineRssMB: peakEngine / 1024,
  };
}

/** The browser tree's PSS with one blank page open (MB), after it settles: what no page of ours can go below. */
async function blankPss(browser, browserPid) {
  const before = new Set(renderers(browserPid));
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.setContent('<!doctype html><title>blank</title><p>blank');
  let peak = 0;
  let byKind = {};
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const tree = childTree(browserPid).reduce((a, p) => a + field(p, 'smaps_rollup', 'Pss'), 0);
    if (tree > peak) {
      peak = tree;
      const mine = renderers(browserPid).filter((p) => !before.has(p));
      byKind = pssByKind(browserPid, mine.sort((a, b) => cpuOf(b) - cpuOf(a))[0] ?? 0);
    }
  }
  await page.close();
  return { mb: peak / 1024, byKind };
}

async function main() {
  needGnuTime('bench:open');
  let dir = values.job;
  let what = dir;
  if (!dir) {
    const size = values.size ?? '16x100x5000';
    const [processes, dumps, stacks] = size.split('x').map(Number);
    const job = await ensureJob(path.join(DATA, `stacks-deep-${size}`), {
      processes,
      dumps,
      stacks,
      depth: 26,
      python: true,
      gzipHalf: false,
      deep: true,
    });
    dir = job.dir;
    what = `${size.replace(/x/g, ' × ')} deep stacks, ${(job.textBytes / 1e9).toFixed(2)} GB of text`;
  }
  const site = firstGroupCallSite(dir);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const browserPid = childPids(process.pid).find((p) => /chrom/i.test(readFileSync(`/proc/${p}/comm`, 'utf8')));
  const rows = [];
  // the floor of the browser's memory in the same run: the same browser with one blank page of the same size
  const floor = await blankPss(browser, browserPid);
  const floorMB = floor.mb;
  try {
    for (let r = 0; r < Number(values.runs); r++) {
      const cli = cliSummary(dir);
      const open = await openRun(browser, browserPid, dir, false);
      const probed = await openRun(browser, browserPid, dir, true);
      rows.push({ cli, ...open, probed });
    }
  } finally {
    await browser.close();
  }
  console.log(`heaplens open on ${what} (${dir})`);
  console.log(`growth --json's first call site: ${site ?? '?'}`);
  for (const r of rows) {
    console.log(
      [
        `CLI summary ${r.cli.s.toFixed(2)} s, CPU ${r.cli.cpu.toFixed(2)} s`,
        `URL ${r.url.toFixed(2)} s`,
        `first timeline ${r.timeline.toFixed(2)} s`,
        `first suspect ${r.suspect.toFixed(2)} s`,
        `whole job ${r.full.toFixed(2)} s = ${(r.full / r.cli.s).toFixed(2)}× the CLI`,
        `CPU to the whole job: engine ${r.engineCpu.toFixed(2)} s = ${(r.engineCpu / r.cli.cpu).toFixed(2)}× the CLI's, the browser's ${r.pageCpu.toFixed(2)} s (${Object.entries(
          r.cpuByKind,
        )
          .filter(([, c]) => c >= 0.01)
          .sort((a, b) => b[1] - a[1])
          .map(([k, c]) => `${k} ${c.toFixed(2)}`)
          .join(', ')}), this bench's own (its sampling) ${r.benchCpu.toFixed(2)} s`,
        `longest main-thread task ${Math.round(r.longest)} ms`,
        `the same load watched by this bench (PSS every 0.1 s, JS heap every 0.5 s, a trace; the figures below): whole job ${r.probed.full.toFixed(2)} s = ${(r.probed.full / r.cli.s).toFixed(2)}× the CLI, this bench's own CPU ${r.probed.benchCpu.toFixed(2)} s, longest main-thread task ${Math.round(r.probed.longest)} ms`,
        `longest tasks in the trace, wall / CPU ms at s: ${r.probed.tasks.byWall.map(([w, c, at]) => `${Math.round(w)} / ${Math.round(c)} at ${at.toFixed(1)}`).join(', ')}`,
        `most CPU in one task, wall / CPU ms at s: ${r.probed.tasks.byCpu.map(([w, c, at]) => `${Math.round(w)} / ${Math.round(c)} at ${at.toFixed(1)}`).join(', ')}`,
        `longest tasks: ${r.top.map((e) => `${Math.round(e.ms)} ms at ${(e.start / 1000).toFixed(1)} s`).join(', ')} (page time; the load done at ${r.loadDone === null ? '?' : (r.loadDone / 1000).toFixed(1)} s)`,
        `browser peak PSS ${Math.round(r.probed.browserPssMB)} MB (a blank page in the same browser: ${Math.round(floorMB)} MB; above it: ${Math.round(r.probed.browserPssMB - floorMB)} MB)`,
        `the page's renderer: peak PSS ${Math.round(r.probed.pagePssMB)} MB (a blank page's: ${Math.round(floor.byKind['the page'] ?? 0)} MB)`,
        `PSS by process at the tree's peak (${r.probed.peakAt.toFixed(1)} s): ${byKindText(r.probed.atPeak)}; settled after the load: ${byKindText(r.probed.settled)}; after a full GC: ${byKindText(r.probed.collected)}; blank page: ${byKindText(floor.byKind)}`,
        `the page's JS heap while loading: peak ${r.probed.jsPeakMB.used.toFixed(1)} MB used, ${r.probed.jsPeakMB.total.toFixed(1)} MB reserved`,
        `the page after the load and a full GC: JS heap ${r.probed.parts.jsUsedMB.toFixed(1)} MB used of ${r.probed.parts.jsTotalMB.toFixed(1)} MB (${r.probed.parts.jsBeforeGcMB.toFixed(1)} MB before), ${r.probed.parts.nodes} DOM nodes (${r.probed.parts.nodesBeforeGc} before), ${r.probed.parts.layoutObjects} layout objects, canvases ${r.probed.parts.canvasMB.toFixed(1)} MB (${r.probed.parts.canvases.join(', ')})`,
        `engine peak RSS ${Math.round(r.engineRssMB)} MB (watched: ${Math.round(r.probed.engineRssMB)} MB)`,
        `engine: ${r.engineLabel}`,
        `first suspect row: ${r.firstRow.replace(/\s+/g, ' ').trim().slice(0, 160)}`,
        `first row names the same call site: ${site !== null && r.firstRow.includes(String(site))}`,
      ].join('\n  '),
    );
  }
}

await main();
