// Parse throughput on generated series, a 1 GB single dump, and `heaplens top` vs `jeprof --text`
// on the same real dump, measured in the same run. Prints ratios.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeDump, writeSeries } from './generate-series.mjs';

const root = resolve(import.meta.dirname, '..');
const { loadJob } = await import(join(root, 'dist/core/load/load-job.js'));
const { collectInputFiles } = await import(join(root, 'dist/node/io/node-files.js'));
const work = mkdtempSync(join(tmpdir(), 'heaplens-bench-'));
const big = process.argv.includes('--no-1gb') ? false : true;

async function timeLoad(paths) {
  const files = await collectInputFiles(paths);
  const bytes = files.reduce((s, f) => s + f.size, 0);
  const t0 = performance.now();
  const job = await loadJob(files);
  const ms = performance.now() - t0;
  return { ms, bytes, job };
}

try {
  // 1. A series: 4 processes × 50 snapshots × 20k stacks × ~24 frames (≈ 1.4 GB? no: sized below)
  const seriesDir = join(work, 'series');
  const seriesBytes = writeSeries(seriesDir, { processes: 4, snapshots: 25, stacks: 5000, depth: 24 });
  const s = await timeLoad([seriesDir]);
  const stacks = s.job.processes.reduce((n, p) => n + p.stacks.count, 0);
  // Model memory per (snapshot, stack) cell: what decides whether hundreds of snapshots × 100k stacks fit.
  let cells = 0;
  let columnBytes = 0;
  for (const p of s.job.processes) {
    for (const snap of p.snapshots) {
      cells += snap.stackIds.length;
      for (const a of [snap.stackIds, snap.liveBytes, snap.liveObjects, snap.accumBytes, snap.accumObjects])
        columnBytes += a ? a.byteLength : 0;
    }
  }
  const perCell = columnBytes / cells;
  console.log(
    `model columns: ${perCell.toFixed(0)} B per (snapshot, stack) → 200 snapshots × 100k stacks ≈ ${((200 * 100_000 * perCell) / 1e9).toFixed(2)} GB`,
  );
  console.log(
    `parse series: ${(seriesBytes / 1e6).toFixed(0)} MB in ${s.ms.toFixed(0)} ms = ${(seriesBytes / 1e6 / (s.ms / 1000)).toFixed(0)} MB/s (100 dumps, ${stacks} interned stacks; target ≥150 MB/s)`,
  );
  rmSync(seriesDir, { recursive: true });

  // 2. One dump over 1 GB: parsed in chunks, never one string.
  if (big) {
    const bigFile = join(work, 'jeprof.77.0.i0.heap');
    const size = writeDump(bigFile, { stacks: 2_000_000, depth: 30, step: 1, seed: 7 });
    const b = await timeLoad([bigFile]);
    const snap = b.job.processes[0]?.snapshots[0];
    console.log(
      `parse 1 dump of ${(size / 1e9).toFixed(2)} GB: ${(b.ms / 1000).toFixed(1)} s = ${(size / 1e6 / (b.ms / 1000)).toFixed(0)} MB/s, ${snap?.stackIds.length ?? 0} stacks, rss ${(process.memoryUsage().rss / 1e9).toFixed(2)} GB`,
    );
    rmSync(bigFile);
  }

  // 3. heaplens top vs jeprof --text on the same real dump (every allocation of a Python process sampled).
  const je = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
  if (existsSync(je) && existsSync('/usr/bin/jeprof') && existsSync('/usr/bin/python3.11')) {
    const prefix = join(work, 'real');
    spawnSync(
      '/usr/bin/python3.11',
      [
        '-c',
        `import json, email.parser, http.client, xml.dom.minidom, unittest, argparse, decimal, sqlite3, asyncio, ctypes\nctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)`,
      ],
      {
        env: {
          ...process.env,
          LD_PRELOAD: je,
          PYTHONMALLOC: 'malloc',
          MALLOC_CONF: `prof:true,lg_prof_sample:0,prof_prefix:${prefix}`,
        },
      },
    );
    const dump = execFileSync('sh', ['-c', `ls ${prefix}.*.heap | head -1`], { encoding: 'utf8' }).trim();
    const size = statSync(dump).size;
    const t = (cmd, args) => {
      const t0 = performance.now();
      const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
      if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
      return performance.now() - t0;
    };
    const runs = 3;
    const best = (f) => Math.min(...Array.from({ length: runs }, f));
    const jeprofMs = best(() => t('jeprof', ['--text', '--show_bytes', '/usr/bin/python3.11', dump]));
    const heaplens = (env) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [join(root, 'bin/heaplens.js'), 'top', dump, '-n', '20'], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      if (r.status !== 0) throw new Error(`heaplens failed: ${r.stderr}`);
      return performance.now() - t0;
    };
    // Cold: no symbol cache (every run symbolizes python3.11 and its libraries from scratch).
    const coldMs = best(() => heaplens({ HEAPLENS_SYMBOL_CACHE: '0' }));
    const warmMs = best(() => heaplens({}));
    const noSymMs = best(() =>
      t(process.execPath, [join(root, 'bin/heaplens.js'), 'top', dump, '-n', '20', '--no-symbols']),
    );
    console.log(
      `top on a real ${(size / 1e6).toFixed(1)} MB dump, jeprof --text ${jeprofMs.toFixed(0)} ms (best of ${runs}, node start-up included; target ≥30×):`,
    );
    console.log(`  heaplens, symbols cold ${coldMs.toFixed(0)} ms: ${(jeprofMs / coldMs).toFixed(1)}× faster`);
    console.log(`  heaplens, symbol cache warm ${warmMs.toFixed(0)} ms: ${(jeprofMs / warmMs).toFixed(1)}× faster`);
    console.log(`  heaplens --no-symbols ${noSymMs.toFixed(0)} ms: ${(jeprofMs / noSymMs).toFixed(1)}× faster`);
    writeFileSync(join(work, 'done'), '');
  } else {
    console.log(
      'top vs jeprof: skipped (needs libjemalloc2, jeprof and /usr/bin/python3.11: apt-get install libjemalloc2 libjemalloc-dev python3.11)',
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
