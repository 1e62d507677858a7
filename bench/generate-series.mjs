// Writes a synthetic but realistic heap_v2 series for benchmarks: P processes × S snapshots, each
// with `stacks` stacks of ~`depth` frames (a shared base plus distinct leaves), a few per-thread
// lines, sampled at 2^19, and a maps section. Leaking stacks grow linearly. With `python`, each stack
// also carries PYFRAMES/1 Python frames (docs/pyframes-format.md) and each dump ends with their table;
// with `gzip`, a dump is written gzipped (.heap.gz).
//
// As a command (large jobs, cached: a folder with a complete marker is reused, never rewritten):
//   node bench/generate-series.mjs <dir> --processes 16 --dumps 100 --stacks 5000 [--python] [--gzip-half]
import { mkdirSync, openSync, writeSync, closeSync, existsSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const MAPS = `
MAPPED_LIBRARIES:
55a99b5ea000-55a99b5eb000 r--p 00000000 fe:00 2187282                    /opt/job/bin/trainer
55a99b5eb000-55a9a15eb000 r-xp 00001000 fe:00 2187282                    /opt/job/bin/trainer
7f7766a00000-7f7766a22000 r--p 00000000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7766a22000-7f7766ab0000 r-xp 00022000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7766845000-7f77669a0000 r-xp 00028000 fe:00 338950                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ffe1d6d7000-7ffe1d6f8000 rw-p 00000000 00:00 0                          [stack]
`;

// Python frames: ids from a per-process pool, four per stack, placed leafward of an eval frame.
const PY_POOL = 2000;
const PY_PER_STACK = 4;
const pyAddr = (id) => '0x70791' + id.toString(16).padStart(10, '0') + '0';

/** Writes one dump; returns its size in bytes (decompressed). */
export function writeDump(path, { stacks, depth, step, seed, python = false, pid = 0, gzip = false }) {
  const r = rng(seed);
  const parts = [];
  let size = 0;
  let buf = '';
  const fd = gzip ? -1 : openSync(path, 'w');
  const flush = (force) => {
    if (buf.length > (force ? 0 : 1 << 20)) {
      size += Buffer.byteLength(buf);
      if (gzip) parts.push(buf);
      else writeSync(fd, buf);
      buf = '';
    }
  };
  // Counts first, so the header's t* line is their sum, as jemalloc writes it.
  const objsOf = new Float64Array(stacks);
  let totalObjs = 0;
  let totalBytes = 0;
  for (let i = 0; i < stacks; i++) {
    const leak = i % 50 === 0;
    objsOf[i] = 1 + Math.floor(r() * 20) + (leak ? step * 5 : 0);
    totalObjs += objsOf[i];
    totalBytes += objsOf[i] * (64 + (i % 4096) * 16);
  }
  const t0Objs = Math.round(totalObjs / 2);
  const t0Bytes = Math.round(totalBytes / 2);
  buf += `heap_v2/524288\n  t*: ${totalObjs}: ${totalBytes} [0: 0]\n  t0: ${t0Objs}: ${t0Bytes} [0: 0] main\n  t1: ${totalObjs - t0Objs}: ${totalBytes - t0Bytes} [0: 0] data loader 1\n`;
  const alloc = '0x7f7766aa2630 0x7f7766aa2d21 0x7f7766a95f24 0x7f7766a22045';
  const used = python ? new Set() : null;
  for (let i = 0; i < stacks; i++) {
    let frames = alloc;
    // Call sites come from a pool, as in a real program: leaves vary most, roots are shared.
    for (let d = 0; d < depth; d++) {
      if (python && d === depth >> 1) {
        for (let k = 0; k < PY_PER_STACK; k++) {
          const id = 1 + ((i * 7 + k * 131 + (i >> 6)) % PY_POOL);
          used.add(id);
          frames += ' ' + pyAddr(id);
        }
      }
      const pool = d < depth / 2 ? 16384 : 256;
      const site = ((i >> (d < depth / 2 ? d % 8 : 10)) * 2654435761 + d * 40503) % pool;
      frames += ' 0x' + (0x55a99b5eb000 + site * 53 + d * 0x100000).toString(16);
    }
    const objs = objsOf[i];
    const bytes = objs * (64 + (i % 4096) * 16);
    buf += `@ ${frames}\n  t*: ${objs}: ${bytes} [0: 0]\n  t${i % 2}: ${objs}: ${bytes} [0: 0]\n`;
    flush(false);
  }
  buf += MAPS;
  if (python) {
    buf += `PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=${pid} python=3.12.3 producer=generate-series\n`;
    const ids = [...used].sort((a, b) => a - b);
    for (const id of ids)
      buf += `F ${pyAddr(id)} ${10 + (id % 90)} ${id % 90} handler_${id} /srv/app/module_${id % 40}.py\n`;
    buf += `END ${ids.length}\n`;
  }
  flush(true);
  if (gzip) writeFileSync(path, gzipSync(parts.join(''), { level: 6 }));
  else closeSync(fd);
  return size;
}

/** P processes × S snapshots under dir; returns total bytes (decompressed). */
export function writeSeries(
  dir,
  { processes, snapshots, stacks, depth, python = false, gzipHalf = false, firstProcess = 0 },
) {
  mkdirSync(dir, { recursive: true });
  let total = 0;
  for (let p = firstProcess; p < firstProcess + processes; p++) {
    const pid = 1000 + p;
    for (let s = 0; s < snapshots; s++) {
      const gzip = gzipHalf && s % 2 === 1;
      const name = `jeprof.${pid}.${s}.i${s}.heap${gzip ? '.gz' : ''}`;
      total += writeDump(join(dir, name), { stacks, depth, step: s, seed: p * 1000 + s, python, pid, gzip });
    }
  }
  return total;
}

const COMPLETE = '.complete';

/**
 * A cached generated job: written once (in parallel, one child per core) and reused while its
 * marker exists. Returns { dir, textBytes }.
 */
export async function ensureJob(dir, spec) {
  const marker = join(dir, COMPLETE);
  if (existsSync(marker)) {
    const done = JSON.parse(readFileSync(marker, 'utf8'));
    if (JSON.stringify(done.spec) === JSON.stringify(spec)) return { dir, textBytes: done.textBytes };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const n = Math.min(availableParallelism(), spec.processes);
  const per = Math.ceil(spec.processes / n);
  const self = fileURLToPath(import.meta.url);
  const sizes = await Promise.all(
    Array.from({ length: n }, (_, k) => {
      const first = k * per;
      const count = Math.max(0, Math.min(per, spec.processes - first));
      return new Promise((resolve, reject) => {
        const c = fork(self, ['--child', JSON.stringify({ dir, ...spec, firstProcess: first, processes: count })], {
          stdio: 'inherit',
        });
        c.on('message', resolve);
        c.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`generator child exited ${code}`))));
      });
    }),
  );
  const textBytes = sizes.reduce((a, b) => a + b, 0);
  writeFileSync(marker, JSON.stringify({ textBytes, spec }));
  return { dir, textBytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--child') {
    const o = JSON.parse(process.argv[3]);
    const bytes = writeSeries(o.dir, {
      processes: o.processes,
      snapshots: o.dumps,
      stacks: o.stacks,
      depth: o.depth,
      python: o.python,
      gzipHalf: o.gzipHalf,
      firstProcess: o.firstProcess,
    });
    process.send(bytes, () => process.exit(0));
  } else {
    const { values, positionals } = parseArgs({
      allowPositionals: true,
      options: {
        processes: { type: 'string', default: '16' },
        dumps: { type: 'string', default: '100' },
        stacks: { type: 'string', default: '5000' },
        depth: { type: 'string', default: '26' },
        python: { type: 'boolean' },
        'gzip-half': { type: 'boolean' },
      },
    });
    if (positionals.length !== 1)
      throw new Error(
        'usage: generate-series.mjs <dir> [--processes N --dumps N --stacks N --depth N --python --gzip-half]',
      );
    const r = await ensureJob(positionals[0], {
      processes: Number(values.processes),
      dumps: Number(values.dumps),
      stacks: Number(values.stacks),
      depth: Number(values.depth),
      python: !!values.python,
      gzipHalf: !!values['gzip-half'],
    });
    console.log(`${r.dir}: ${(r.textBytes / 1e9).toFixed(2)} GB of dump text`);
  }
}
