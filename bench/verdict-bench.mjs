// Job-wide ranking cost: on a generated job of P processes × S snapshots (default 64 × 200, the
// issue's target: the ranking adds < 10 % to load time), times loadJob and then rankJob (patterns of
// every (process, stack) series, stack keys, groups) with the built code (dist/), and prints the ratio.
// Options: --processes N --snapshots N --stacks N (per dump) --depth N --keep.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeSeries } from './generate-series.mjs';

const root = resolve(import.meta.dirname, '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const P = arg('processes', 64);
const S = arg('snapshots', 200);
const stacks = arg('stacks', 400);
const depth = arg('depth', 24);
const TARGET = 0.1;

const { loadJob } = await import(join(root, 'dist/core/load/load-job.js'));
const { rankJob } = await import(join(root, 'dist/core/stats/suspects.js'));
const { collectInputFiles } = await import(join(root, 'dist/node/io/node-files.js'));

const work = mkdtempSync(join(tmpdir(), 'heaplens-verdict-bench-'));
try {
  let t = performance.now();
  const bytes = writeSeries(join(work, 'series'), { processes: P, snapshots: S, stacks, depth });
  console.log(
    `generated ${P} processes × ${S} snapshots × ${stacks} stacks (depth ~${depth}): ${(bytes / 1e6).toFixed(0)} MB in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  t = performance.now();
  const job = await loadJob(await collectInputFiles([join(work, 'series')]));
  const loadMs = performance.now() - t;
  // best of 3: the ranking is short and the machine is shared
  let rankMs = Number.POSITIVE_INFINITY;
  let r;
  for (let k = 0; k < 3; k++) {
    t = performance.now();
    r = rankJob(job);
    rankMs = Math.min(rankMs, performance.now() - t);
  }
  const patterns = {};
  for (const s of r.stacks) patterns[s.pattern] = (patterns[s.pattern] ?? 0) + 1;
  console.log(
    `loaded in ${(loadMs / 1000).toFixed(1)} s; job-wide ranking of ${r.stacks.length} series (${r.groups.length} groups) in ${rankMs.toFixed(0)} ms`,
  );
  console.log(
    `patterns: ${Object.entries(patterns)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const ratio = rankMs / loadMs;
  console.log(`RANKING / LOAD: ${ratio.toFixed(3)} (target < ${TARGET})`);
  if (process.argv.includes('--keep')) console.log(`kept ${work}`);
  if (ratio >= TARGET) process.exitCode = 1;
} finally {
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
}
