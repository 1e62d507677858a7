// The app's first views of one process, as its analysis worker answers them (core/query over a fresh
// QuerySession each round, in Node over dist/): the timeline's stack series, the growth table, the flame graph of
// the last dump, in the python-first view, on the deep-stack job's first process (bench/generate-series.mjs
// --deep shape; the stacks of a real Python job: 20–60 frames with Python frames and sidecars). The floor,
// measured in the same run, is one pass over every frame slot of the process's stacks reading each frame's
// address string (what any per-stack view must at least touch). With BEFORE=<built checkout>, the same rounds of
// that checkout run in pairs with this one, alternating, and the median ratio after/before is printed.
//
// Usage: npm run bench:views   Env: RUNS (rounds, default 9), BEFORE, HEAPLENS_SCALE_DATA (default
// /tmp/heaplens-scale-data; the 4 × 50 × 5,000 deep job is generated there once, as stacks-bench does).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureJob } from './generate-series.mjs';

const RUNS = Number(process.env.RUNS ?? 9);
const HERE = resolve(import.meta.dirname, '..');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === '--child') {
  // one checkout's rounds: its own dist/, the job's first process
  const [, , , root, dir, runs] = process.argv;
  const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
  const { collectInputFiles } = await dist('node/io/node-files.js');
  const { loadDumps } = await dist('node/cli/load-dumps.js');
  const { QuerySession } = await dist('core/query/session.js');
  const { stackSeries } = await dist('core/query/series.js');
  const { growthTable } = await dist('core/query/growth-table.js');
  const { flameTree } = await dist('core/query/flame.js');
  const files = (await collectInputFiles([dir])).filter((f) => /\.1000\./.test(f.path));
  const job = await loadDumps(files);
  const p = job.processes[0];
  const last = p.snapshots.length - 1;
  const view = { mode: 'python-first', hideAllocator: true, sample: 'inuse_space', filters: [], unfold: false };
  const out = { series: [], growth: [], flame: [], floor: [] };
  let sink = 0;
  for (let r = 0; r < Number(runs); r++) {
    let t = performance.now();
    for (let f = 0; f < p.stacks.frames.length; f++) sink += p.addresses.hex[p.stacks.frames[f]].length;
    out.floor.push(performance.now() - t);
    const s = new QuerySession();
    s.finishLoad(job, { readers: 0 });
    t = performance.now();
    stackSeries(s, 0, 8, view);
    out.series.push(performance.now() - t);
    t = performance.now();
    growthTable(s, { proc: 0, base: 0, target: last, view, limit: 20000, functionLimit: 5000 });
    out.growth.push(performance.now() - t);
    t = performance.now();
    flameTree(s, { proc: 0, snapshot: last, base: null, view });
    out.flame.push(performance.now() - t);
  }
  out.stacks = p.stacks.count;
  out.frames = p.stacks.frames.length;
  out.sink = sink;
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const { dir } = await ensureJob(
  join(process.env.HEAPLENS_SCALE_DATA ?? '/tmp/heaplens-scale-data', 'stacks-deep-4x50x5000'),
  {
    processes: 4,
    dumps: 50,
    stacks: 5000,
    depth: 0,
    python: true,
    gzipHalf: true,
    deep: true,
  },
);
const BEFORE = process.env.BEFORE ? resolve(process.env.BEFORE) : null;
const sides = BEFORE ? [HERE, BEFORE] : [HERE];
const results = new Map(sides.map((s) => [s, []]));
// each child one round at a time, alternating sides, so a drifting load hits both alike
for (let r = 0; r < RUNS; r++)
  for (const side of r % 2 ? [...sides].reverse() : sides) {
    const c = spawnSync(process.execPath, [import.meta.filename, '--child', side, dir, '1'], { encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`views bench (${side}) failed: ${c.stderr}`);
    results.get(side).push(JSON.parse(c.stdout));
  }
const mine = results.get(HERE);
console.log(
  `views bench: ${dir}, process 1000: ${mine[0].stacks} stacks, ${mine[0].frames} frame slots, ${RUNS} rounds`,
);
const floor = median(mine.map((x) => x.floor[0]));
console.log(`  floor (every frame slot read once): ${floor.toFixed(1)} ms`);
for (const k of ['series', 'growth', 'flame']) {
  const a = mine.map((x) => x[k][0]);
  let line = `  ${k.padEnd(6)} ${median(a).toFixed(0).padStart(5)} ms (${Math.min(...a).toFixed(0)}–${Math.max(...a).toFixed(0)}), ${(median(a) / floor).toFixed(0)}× the floor`;
  if (BEFORE) {
    const b = results.get(BEFORE).map((x) => x[k][0]);
    const ratios = a.map((v, i) => v / b[i]);
    line += `; before ${median(b).toFixed(0)} ms: after/before ${median(ratios).toFixed(2)}× (median of the pairs)`;
  }
  console.log(line);
}
