// Large jobs (issue 12): `heaplens summary` on generated 16 × 100 × 5,000 and 64 × 200 × 2,000 jobs
// (Python frames, half the dumps gzipped) against the physical floor measured on the same files in
// the same run: `gzip -dc` of the .gz dumps plus `cat` of the plain ones (on one core, and on all cores
// with xargs -P). Prints wall time, ratios and peak RSS (GNU time's maximum resident set).
//
// The jobs are generated once into $HEAPLENS_SCALE_DATA (default /tmp/heaplens-scale-data) and reused.
// Options: --only 16x100x5000 (or 64x200x2000), --serial (also time the in-thread reader, HEAPLENS_WORKERS=0).
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureJob } from './generate-series.mjs';
import { needGnuTime, timed } from './gnu-time.mjs';

const root = resolve(import.meta.dirname, '..');
const data = process.env.HEAPLENS_SCALE_DATA ?? '/tmp/heaplens-scale-data';
const { values } = parseArgs({ options: { only: { type: 'string' }, serial: { type: 'boolean' } } });
const JOBS = [
  { name: '16x100x5000', processes: 16, dumps: 100, stacks: 5000 },
  { name: '64x200x2000', processes: 64, dumps: 200, stacks: 2000 },
].filter((j) => !values.only || values.only === j.name);

needGnuTime('scale bench');

const cores = availableParallelism();
for (const spec of JOBS) {
  const t0 = performance.now();
  const { dir, textBytes } = await ensureJob(join(data, spec.name), {
    processes: spec.processes,
    dumps: spec.dumps,
    stacks: spec.stacks,
    depth: 26,
    python: true,
    gzipHalf: true,
  });
  const genS = (performance.now() - t0) / 1000;
  const du = spawnSync('du', ['-sb', dir], { encoding: 'utf8' }).stdout.split('\t')[0];
  console.log(
    `job ${spec.name} (Python frames, half gzipped): ${(textBytes / 1e9).toFixed(2)} GB of dump text, ${(Number(du) / 1e9).toFixed(2)} GB on disk${genS > 1 ? ` (generated in ${genS.toFixed(0)} s)` : ''}`,
  );
  // Floors: the same bytes, only inflated and read.
  const serialFloor = timed('sh', [
    '-c',
    `find "${dir}" -name '*.gz' -print0 | xargs -0 gzip -dc > /dev/null && find "${dir}" -name '*.heap' -print0 | xargs -0 cat > /dev/null`,
  ]);
  const parallelFloor = timed('sh', [
    '-c',
    `find "${dir}" -name '*.gz' -print0 | xargs -0 -P ${cores} -n 32 gzip -dc > /dev/null && find "${dir}" -name '*.heap' -print0 | xargs -0 -P ${cores} -n 32 cat > /dev/null`,
  ]);
  console.log(
    `  floor: gzip -dc + cat ${serialFloor.s.toFixed(1)} s on one core, ${parallelFloor.s.toFixed(1)} s on ${cores} cores (load average now ${loadavg()[0].toFixed(1)}: other work shares the machine)`,
  );
  const cli = join(root, 'bin/heaplens.js');
  const runs = [['summary, worker pool', {}]];
  if (values.serial) runs.push(['summary, in-thread (HEAPLENS_WORKERS=0)', { HEAPLENS_WORKERS: '0' }]);
  for (const [label, env] of runs) {
    const r = timed(process.execPath, [cli, 'summary', dir], env);
    console.log(
      `  ${label}: ${r.s.toFixed(1)} s = ${(r.s / serialFloor.s).toFixed(2)}× the one-core floor (goal ≤ 2×), ${(r.s / parallelFloor.s).toFixed(2)}× the ${cores}-core floor; ` +
        `${(textBytes / 1e6 / r.s).toFixed(0)} MB/s of text; CPU ${r.cpuS.toFixed(1)} s = ${(r.cpuS / r.s).toFixed(2)} cores busy on average; peak RSS ${r.rssMB.toFixed(0)} MB (goal < 1,536 MB)`,
    );
  }
}
