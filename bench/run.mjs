#!/usr/bin/env node
// npm run bench: every benchmark, each printing its figures and ratios against the reference tools
// measured in the same run. A benchmark whose tools are missing says so and is skipped.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const benches = [
  [
    'issue 25: short and deep stacks — summary and top vs the gzip -dc + cat floor and jeprof, byte for byte',
    'node',
    ['bench/stacks-bench.mjs'],
  ],
  [
    "the app's first views of a deep process (stack series, growth, flame) vs one pass over its frames",
    'node',
    ['bench/views-bench.mjs'],
  ],
  ['parse, load and top vs jeprof', 'node', ['bench/parse-bench.mjs', ...process.argv.slice(2)]],
  ['large jobs: summary vs the gzip -dc + cat floor, peak RSS', 'nice', ['node', 'bench/scale-bench.mjs']],
  ['symbolization: WASM vs addr2line vs llvm-symbolizer', 'node', ['bench/symbolize-bench.mjs']],
  ['Python frame capture overhead', 'bash', ['bench/python-capture-bench.sh']],
  ['UI: drop to timeline, flame graph frame time', 'node', ['bench/ui-bench.mjs']],
  ['HTML report size for a 64-process × 200-snapshot job', 'node', ['bench/report-bench.mjs']],
  [
    'Python-first view (folding, labels, focus) vs the merged view and loading',
    'node',
    ['bench/python-first-bench.mjs'],
  ],
  [
    'job-wide ranking (patterns, σ, groups) vs load time, 64 processes × 200 dumps',
    'node',
    ['bench/verdict-bench.mjs'],
  ],
  ['dataset: ingest time and size, growth on the dataset vs on the dumps', 'node', ['bench/dataset-bench.mjs']],
];
let failed = 0;
for (const [title, cmd, args] of benches) {
  if (
    !existsSync(
      resolve(
        root,
        args.find((a) => a.startsWith('bench/')),
      ),
    )
  )
    continue;
  console.log(`\n== ${title} ==`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`(${args[0]} exited ${r.status})`);
  }
}
process.exitCode = failed ? 1 : 0;
