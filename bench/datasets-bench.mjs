#!/usr/bin/env node
// npm run bench:datasets: a job on many nodes as one dataset per node (issue 49 item 5). Ingests each host folder
// of a job (`<job>/node-00`, `<job>/node-01`, …) into its own dataset, as each node would, then times the job-wide
// ranking over all of them (node/dataset/series-rank.sql, from the stored series statistics) against a reference in
// the same run: the same first/last/Σ figures computed from every cell of every dataset (what the ranking would read
// without the stored statistics). Then `heaplens growth --json` on all the datasets at once.
//   node bench/datasets-bench.mjs --job /tmp/heaplens-hosts-1000x10x1000 [--out /tmp/heaplens-datasets-bench]
//        [--skip-ingest] [--skip-growth] [--runs 5]
// The job: `node bench/generate-series.mjs` with hosts (bench/README.md). Every heaplens run is `nice`d.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { timedHeaplens } from './gnu-time.mjs';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    job: { type: 'string', default: '/tmp/heaplens-hosts-1000x10x1000' },
    out: { type: 'string', default: '/tmp/heaplens-datasets-bench' },
    'skip-ingest': { type: 'boolean', default: false },
    'skip-growth': { type: 'boolean', default: false },
    runs: { type: 'string', default: '5' },
  },
});
const bin = join(root, 'bin', 'heaplens.js');
if (!existsSync(join(root, 'dist', 'node', 'dataset', 'series-rank.js'))) {
  console.log('dist/ is not built: run `npm run build` (npm run bench:datasets does)');
  process.exit(1);
}
const heaplens = (args) => timedHeaplens(bin, args);

const hosts = readdirSync(values.job, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const dirs = hosts.map((h) => join(values.out, `${h}.dataset`));
if (!values['skip-ingest']) {
  rmSync(values.out, { recursive: true, force: true });
  mkdirSync(values.out, { recursive: true });
  let total = 0;
  let cpu = 0;
  let rss = 0;
  for (const [i, h] of hosts.entries()) {
    const r = heaplens(['ingest', join(values.job, h), '-o', dirs[i], '--no-symbols']);
    total += r.seconds;
    cpu += r.cpu ?? 0;
    rss = Math.max(rss, r.rssMb ?? 0);
    console.log(
      `ingest ${h}: ${r.seconds.toFixed(1)} s (cpu ${r.cpu?.toFixed(1)} s), peak RSS ${r.rssMb?.toFixed(0)} MB`,
    );
  }
  console.log(
    `ingest, ${hosts.length} hosts one after another: ${total.toFixed(1)} s wall, ${cpu.toFixed(1)} s CPU, ${(total / hosts.length).toFixed(1)} s per host (in parallel on the nodes: the slowest one), peak RSS ${rss.toFixed(0)} MB`,
  );
}

const { openEngine } = await import(join(root, 'dist/node/dataset/duckdb.js'));
const { datasetsRanking } = await import(join(root, 'dist/node/dataset/series-rank.js'));
const { createDatasetsViews } = await import(join(root, 'dist/node/dataset/rank-dataset.js'));
const runs = Number(values.runs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Wall and CPU seconds of `run` (which gives its row count), each run on a fresh engine: nothing cached between runs. */
async function timed(run) {
  const wall = [];
  const cpu = [];
  let rows = 0;
  for (let k = 0; k < runs; k++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    rows = await run();
    wall.push((performance.now() - t0) / 1000);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e6);
  }
  return { wall: median(wall), best: Math.min(...wall), cpu: median(cpu), rows };
}

/** `sql` on a fresh engine over the datasets, its views made by `make`. */
async function onEngine(make, sql) {
  const e = await openEngine(dirs);
  try {
    await make(e);
    return (await e.con.runAndReadAll(sql)).currentRowCount;
  } finally {
    e.close();
  }
}

// the ranking as the CLI and the tests run it: engine opened (its settings), views made, query run, rows read
const rank = await timed(async () => (await datasetsRanking(dirs, 'job')).length);
// the reference: every series' first and last point and its sums, from every cell (the stored statistics' source)
const reference = await timed(() =>
  onEngine(
    (e) => createDatasetsViews(e, dirs),
    `SELECT ds, process, stack_id, count(*), sum(bytes), sum(bytes * bytes), max(bytes), min(snapshot), max(snapshot)
       FROM cells GROUP BY ds, process, stack_id`,
  ),
);
console.log(
  `series-rank.sql over ${dirs.length} datasets: ${rank.wall.toFixed(3)} s wall (best ${rank.best.toFixed(3)} s), ${rank.cpu.toFixed(3)} s CPU, ${rank.rows} rows`,
);
console.log(
  `reference, the same sums from every cell: ${reference.wall.toFixed(3)} s wall (best ${reference.best.toFixed(3)} s), ${reference.cpu.toFixed(3)} s CPU, ${reference.rows} series`,
);
console.log(`ratio: the stored statistics rank ${(reference.wall / rank.wall).toFixed(1)}x faster than the cells`);

const g = values['skip-growth'] ? null : heaplens(['growth', '--json', ...dirs]);
if (g)
  console.log(
    `heaplens growth --json on ${dirs.length} datasets: ${g.seconds.toFixed(1)} s wall, ${g.cpu?.toFixed(1)} s CPU, peak RSS ${g.rssMb?.toFixed(0)} MB`,
  );
