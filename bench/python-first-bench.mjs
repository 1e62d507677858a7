#!/usr/bin/env node
// The Python-first view's cost: describing every stack of the real Python fixtures (fixtures/python/py3XX) in the
// python-first view (interpreter frames folded, core/frames/stack-labels.ts), with a focus filter on top
// (core/frames/stack-filter.ts), against the merged view (every frame, no folding) and against loading the same
// dumps, all measured in this run. Prints FOLDED / MERGED (target < 1.5: folding and labels add little to
// describing the frames) and VIEW / LOAD for scale (describing every stack, maps lookups included, is the CLI's own
// cost; it only describes the rows it prints).
// Needs the build (npm run build).
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dist = (p) => import(resolve(root, 'dist', p));
const { loadJob } = await dist('core/load/load-job.js');
const { collectInputFiles } = await dist('node/io/node-files.js');
const { processViewer } = await dist('core/frames/view.js');

const REPS = Number(process.env.BENCH_REPS ?? 40);
const dirs = ['py311', 'py312', 'py313'].map((v) => resolve(root, 'fixtures', 'python', v));
const files = await collectInputFiles(dirs);

function time(fn) {
  fn(); // warm-up
  const t0 = performance.now();
  for (let r = 0; r < REPS; r++) fn();
  return (performance.now() - t0) / REPS;
}

let job = null;
const LOADS = Math.max(3, REPS / 4);
const t0 = performance.now();
for (let r = 0; r < LOADS; r++) job = await loadJob(files);
const loadEach = (performance.now() - t0) / LOADS;

let stacks = 0;
for (const p of job.processes) stacks += p.stacks.count;

function viewAll(mode, filters) {
  let n = 0;
  for (const p of job.processes) {
    // fresh describers: their per-address caches are part of the cost
    const view = processViewer(p, { mode, hideAllocator: true, foldImports: false, filters });
    for (let id = 0; id < p.stacks.count; id++) n += view(id)?.frames.length ?? 0;
  }
  return n;
}

const merged = time(() => viewAll('merged', []));
const folded = time(() => viewAll('python-first', []));
const focused = time(() => viewAll('python-first', [{ kind: 'focus', re: 'make_record|libc\\.so' }]));
const fmt = (ms) => `${ms.toFixed(2)} ms`;
console.log(`${job.processes.length} processes, ${stacks} stacks, ${files.length} files; ${REPS} repetitions`);
console.log(`load (loadJob)            ${fmt(loadEach)}`);
console.log(`view merged               ${fmt(merged)}`);
console.log(`view python-first         ${fmt(folded)}`);
console.log(`view python-first + focus ${fmt(focused)}`);
console.log(`FOLDED / MERGED  ${(folded / merged).toFixed(2)}   (target < 1.5)`);
console.log(`FOCUSED / MERGED ${(focused / merged).toFixed(2)}`);
console.log(
  `VIEW / LOAD      ${(folded / loadEach).toFixed(2)}   (every stack described; the commands describe only the rows they print)`,
);
