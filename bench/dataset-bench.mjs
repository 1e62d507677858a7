#!/usr/bin/env node
// npm run bench:dataset: `heaplens ingest` time, peak RSS and dataset size, and `growth` on the dataset
// against `growth` on the dumps (the ratio is the figure: goal ≥ 10×), on generated jobs kept in /tmp.
//   node bench/dataset-bench.mjs [--jobs 16x100x5000,64x200x2000] [--dir /tmp/heaplens-dataset-bench]
// Every heaplens run is `nice`d (the machine is shared). Jobs are generated once and reused (marker file).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { timedHeaplens } from './gnu-time.mjs';
import * as gen from './generate-series.mjs';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '16x100x5000,64x200x2000' },
    dir: { type: 'string', default: '/tmp/heaplens-dataset-bench' },
  },
});
const bin = join(root, 'bin', 'heaplens.js');
if (!existsSync(join(root, 'dist', 'node', 'cli', 'bundle', 'heaplens.cjs'))) {
  console.log('dist/ is not built: run `npm run build` (npm run bench:dataset does)');
  process.exit(1);
}
const heaplens = (args) => timedHeaplens(bin, args);

/** A generated job, reused while its marker says the same spec. */
async function job(spec) {
  const dir = join(values.dir, `${spec.processes}x${spec.dumps}x${spec.stacks}`);
  if (typeof gen.ensureJob === 'function') {
    // the generator with Python frames and half gzipped dumps (cached, parallel)
    const r = await gen.ensureJob(dir, { ...spec, depth: 26, python: true, gzipHalf: true });
    return { dir, textBytes: r.textBytes, kind: 'Python frames, half gzipped' };
  }
  const marker = join(dir, '.complete-dataset-bench');
  if (existsSync(marker)) return { dir, ...JSON.parse(readFileSync(marker, 'utf8')) };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.log(`generating ${dir} …`);
  const textBytes = gen.writeSeries(dir, {
    processes: spec.processes,
    snapshots: spec.dumps,
    stacks: spec.stacks,
    depth: 26,
  });
  const info = { textBytes, kind: 'native frames, plain text' };
  writeFileSync(marker, JSON.stringify(info));
  return { dir, ...info };
}

const fmtMb = (b) => `${(b / 1e6).toFixed(1)} MB`;
for (const s of values.jobs.split(',')) {
  const [processes, dumps, stacks] = s.split('x').map(Number);
  const j = await job({ processes, dumps, stacks });
  const ds = `${j.dir}.dataset`;
  rmSync(ds, { recursive: true, force: true });
  console.log(
    `\n${processes} processes × ${dumps} dumps × ${stacks} stacks (${j.kind}): ${(j.textBytes / 1e9).toFixed(2)} GB of dump text`,
  );

  const ing = heaplens(['ingest', j.dir, '-o', ds, '--no-symbols', '--json']);
  const ingDoc = JSON.parse(ing.stdout);
  console.log(
    `  ingest:             ${ing.seconds.toFixed(1)} s${ing.rssMb ? `, peak RSS ${ing.rssMb.toFixed(0)} MB` : ''}, ${(j.textBytes / 1e6 / ing.seconds).toFixed(0)} MB/s of dump text`,
  );
  console.log(
    `  dataset:            ${fmtMb(ingDoc.bytes)} (${((ingDoc.bytes / j.textBytes) * 100).toFixed(2)} % of the dump text)`,
  );
  const again = heaplens(['ingest', j.dir, '-o', ds, '--no-symbols', '--json']);
  console.log(
    `  ingest again:       ${again.seconds.toFixed(1)} s (${JSON.parse(again.stdout).dumpsRead} dumps read: nothing new)`,
  );

  const onDumps = heaplens(['growth', j.dir, '--json', '--no-symbols', '-n', '20']);
  const onDataset = heaplens(['growth', ds, '--json', '--no-symbols', '-n', '20']);
  // the whole JSON document (processes, ranked stacks with every figure, groups, warnings) must be the same
  const same = onDumps.stdout === onDataset.stdout;
  const cpu = (r) => (r.cpu !== null ? `, ${r.cpu.toFixed(1)} s CPU` : '');
  console.log(
    `  growth on dumps:    ${onDumps.seconds.toFixed(2)} s${cpu(onDumps)}${onDumps.rssMb ? `, peak RSS ${onDumps.rssMb.toFixed(0)} MB` : ''}`,
  );
  console.log(
    `  growth on dataset:  ${onDataset.seconds.toFixed(2)} s${cpu(onDataset)}${onDataset.rssMb ? `, peak RSS ${onDataset.rssMb.toFixed(0)} MB` : ''}`,
  );
  console.log(
    `  ratio:              ${(onDumps.seconds / onDataset.seconds).toFixed(1)}× faster on the dataset (goal ≥ 10×); identical JSON: ${same ? 'yes' : 'NO'}`,
  );
  const top = heaplens(['top', ds, '--json', '--no-symbols', '-n', '5']);
  console.log(
    `  top on dataset:     ${top.seconds.toFixed(2)} s (only the shown snapshot's cells read)${top.rssMb ? `, peak RSS ${top.rssMb.toFixed(0)} MB` : ''}`,
  );
  if (!same) process.exitCode = 1;
}
