// Where one process's load goes, in this thread (CPU time, best of --runs): reading its dumps and sidecars
// (runDumpTask: inflate, parse, sidecar parse; what the pool's workers do) and merging them into one process
// (mergeDumpTask: what the main thread does), each as a ratio to reading the same bytes (readFileSync, and
// gunzipSync for the .gz ones) measured in the same run. Needs `npm run build`.
//   node bench/parse-phases.mjs <job dir> [--pid 1000] [--runs 3]
// e.g. on the stacks bench's deep job: /tmp/heaplens-scale-data/stacks-deep-4x50x5000
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const { values, positionals } = parseArgs({
  options: { pid: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' } },
  allowPositionals: true,
});
const dir = positionals[0];
if (!dir) throw new Error('usage: node bench/parse-phases.mjs <job dir> [--pid N] [--runs N]');
const { runDumpTask, mergeDumpTask } = await import(join(root, 'dist/core/load/dump-task.js'));
const { ProcessBuilder } = await import(join(root, 'dist/core/model/process-builder.js'));
const { nodeInputFile } = await import(join(root, 'dist/node/io/node-files.js'));
const { nodeInflater } = await import(join(root, 'dist/node/io/gunzip.js'));

const dumps = readdirSync(dir)
  .filter((f) => f.startsWith(`jeprof.${values.pid}.`) && /\.heap(\.gz)?$/.test(f))
  .sort()
  .map((f) => join(dir, f));
if (dumps.length === 0) throw new Error(`no jeprof.${values.pid}.*.heap[.gz] in ${dir}`);
const sidecarOf = (p) => {
  const s = p.replace(/\.gz$/, '') + '.pyframes';
  try {
    statSync(s);
    return s;
  } catch {
    return null;
  }
};
const input = (p) => {
  const s = statSync(p);
  return nodeInputFile(p, p, s.size, s.mtimeMs);
};
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
const meta = (p) => ({ file: p, seq: null, trigger: 'unknown', triggerSeq: null, mtimeMs: null });

const best = { floor: Infinity, parse: Infinity, merge: Infinity };
let shape = '';
for (let run = 0; run < Math.max(1, Number(values.runs)); run++) {
  let t = cpu();
  let bytes = 0;
  for (const p of dumps) {
    const b = readFileSync(p);
    bytes += (p.endsWith('.gz') ? gunzipSync(b) : b).length;
    const s = sidecarOf(p);
    if (s) bytes += readFileSync(s).length;
  }
  best.floor = Math.min(best.floor, cpu() - t);
  t = cpu();
  const results = [];
  for (const p of dumps) {
    const s = sidecarOf(p);
    const task = { file: input(p), meta: meta(p), ...(s ? { sidecar: input(s) } : {}) };
    results.push(await runDumpTask(task, { inflate: nodeInflater }));
  }
  best.parse = Math.min(best.parse, cpu() - t);
  t = cpu();
  const b = new ProcessBuilder();
  for (const r of results) if (r.parsed) mergeDumpTask(b, r.parsed);
  best.merge = Math.min(best.merge, cpu() - t);
  const records = results.reduce((n, r) => n + (r.parsed?.snapshot.stackIds.length ?? 0), 0);
  shape = `${dumps.length} dumps, ${(bytes / 1e6).toFixed(0)} MB of text and sidecars, ${records} records, ${b.stacks.count} distinct stacks, ${b.addresses.hex.length} addresses`;
}
console.log(`pid ${values.pid}: ${shape}`);
console.log(`  reading the bytes (readFileSync + gunzipSync): ${best.floor.toFixed(2)} s CPU`);
console.log(
  `  parse (runDumpTask, the workers' part): ${best.parse.toFixed(2)} s CPU → ${(best.parse / best.floor).toFixed(2)}×`,
);
console.log(
  `  merge (mergeDumpTask, the main thread's part): ${best.merge.toFixed(2)} s CPU → ${(best.merge / best.floor).toFixed(2)}×`,
);
