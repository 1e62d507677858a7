// Writes a synthetic but realistic heap_v2 series for benchmarks: P processes × S snapshots, each
// with `stacks` stacks of ~`depth` frames (a shared base plus distinct leaves), a few per-thread
// lines, sampled at 2^19, and a maps section. Leaking stacks grow linearly. With `python`, each stack
// also carries PYFRAMES/1 Python frames (docs/pyframes-format.md) and each dump ends with their table;
// with `gzip`, a dump is written gzipped (.heap.gz).
//
// With `deep` (issue 25: the stacks of real Python jobs), each stack has 20–60 frames (one in 12 deeper, up
// to 110), merged as the capture library writes them (native-tools/capture; docs python-frames §3.3): each
// group of Python frames innermost first, right leafward of its _PyEval_EvalFrameDefault frame, with the
// interpreter's call plumbing between groups — about a third of the frames Python. The frame table goes in
// a `<dump>.pyframes` sidecar of ~125 KB (the context records the library writes, then the cumulative
// F table), as the library's default sidecar mode does.
//
// With `hosts` (issue 49: a job of many processes on many nodes), the processes are spread over that many hosts,
// each a `node-XX/` folder whose pids start again at 1000 (pids repeat across the nodes of a job, as they do across
// containers), with the host's name in each deep sidecar's context (`C hostname node-XX`). `gzip` writes every dump
// gzipped; `growing` makes that many stacks of each deep process grow (evenly spaced; else one in 50); `outliers`
// makes that many deep processes (evenly spaced: process 0, P/outliers, …) grow those stacks ten times as fast.
//
// As a command (large jobs, cached: a folder with a complete marker is reused, never rewritten):
//   node bench/generate-series.mjs <dir> --processes 16 --dumps 100 --stacks 5000 [--python] [--gzip-half] [--deep]
//   node bench/generate-series.mjs <dir> --processes 1000 --dumps 10 --stacks 1000 --deep --gzip --hosts 25 --growing 2
//   [--outliers 4]
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

// Deep Python stacks (issue 25). Addresses lie in the mapped text of the modules of DEEP_MAPS.
const DEEP_MAPS = `
MAPPED_LIBRARIES:
5581c0a00000-5581c0a01000 r--p 00000000 fe:00 1311001                    /usr/bin/python3.12
5581c0a01000-5581c0a02000 r-xp 00001000 fe:00 1311001                    /usr/bin/python3.12
7f2a10000000-7f2a10400000 r-xp 00000000 fe:00 1311002                    /opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so
7f2a20000000-7f2a20100000 r-xp 00000000 fe:00 1311003                    /opt/venv/lib/python3.12/site-packages/numpy/core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so
7f7766845000-7f77669a0000 r-xp 00028000 fe:00 338950                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f7766a00000-7f7766a22000 r--p 00000000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7766a22000-7f7766ab0000 r-xp 00022000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7767000000-7f7767400000 r-xp 00100000 fe:00 1311004                    /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0
7ffe1d6d7000-7ffe1d6f8000 rw-p 00000000 00:00 0                          [stack]
`;
const LIBPY = 0x7f7767000000;
const EVAL = '0x' + (LIBPY + 0x2b4f1).toString(16); // _PyEval_EvalFrameDefault's call site
// the interpreter's plumbing between two eval frames (vectorcall, call_function…): a few fixed sites
const PLUMBING = [0x1f806, 0x81cd7, 0x7dd90, 0xc60ed, 0x70787, 0x709b4, 0xb7eeb].map(
  (o) => '0x' + (LIBPY + o).toString(16),
);
const ROOT = ['0x7f77668ab24a', '0x7f77668ab305', '0x5581c0a01081']; // __libc_start_call_main, __libc_start_main, _start
const DEEP_PY_POOL = 900; // F lines in each sidecar: ~125 KB with the context records
const deepPyAddr = (id) => '0x70791' + id.toString(16).padStart(10, '0') + '0';

/** The frames of stack i of a deep process (the same for every dump of the process): leaf first. */
export function deepFrames(i, pid) {
  const r = rng(pid * 7919 + i * 104729 + 1);
  const out = ['0x7f7766aa2630', '0x7f7766aa2d21', '0x7f7766a95f24', '0x7f7766a22045'];
  // 20–60 frames; one stack in 12 deeper, up to 110 (recursion, nested frameworks)
  const depth = r() < 1 / 12 ? 61 + Math.floor(r() * 50) : 20 + Math.floor(r() * 41);
  // native leaf frames: an extension module's allocation path, varied by stack
  const leaves = 1 + Math.floor(r() * 4);
  const ext = r() < 0.6 ? 0x7f2a10000000 : 0x7f2a20000000;
  for (let k = 0; k < leaves; k++) out.push('0x' + (ext + ((i * 40503 + k * 2654435761) % 0x3ffff0)).toString(16));
  // groups, leaf to root: Python frames (innermost first), their eval frame, then plumbing
  let g = 0;
  while (out.length < depth - ROOT.length) {
    const size = 1 + Math.floor(r() * 4);
    for (let k = 0; k < size; k++) {
      // leaf groups vary most; root groups come from a small shared set (the program's main loop)
      const span = g < 2 ? DEEP_PY_POOL : 64;
      out.push(deepPyAddr(1 + Math.floor(r() * span)));
    }
    out.push(EVAL);
    const plumbing = 2 + Math.floor(r() * 5);
    for (let k = 0; k < plumbing; k++) out.push(PLUMBING[(g + k) % PLUMBING.length]);
    g++;
  }
  out.length = Math.min(out.length, depth - ROOT.length);
  out.push(...ROOT);
  return out.join(' ');
}

/** The `<dump>.pyframes` sidecar the capture library writes beside a dump (cumulative table, context). */
function deepSidecar(pid, seq, host = 'node-7') {
  const t = 1796120432093968894n + BigInt(seq) * 30_000_000_000n;
  let out =
    `PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=${pid} python=3.12.3 granularity=line producer=heaplens-capture\n` +
    `# samples=5000 merged=4990 unmerged=0 nopython=10 truncated=0 unknown=0\n` +
    `C context 1\nC time_real_ns ${t}\nC time_mono_ns ${3504901873327 + seq * 30e9}\nC pid ${pid}\nC ppid 1\n` +
    `C comm python3.12\nC cmdline /usr/bin/python3.12%00train.py%00\nC hostname ${host}\n` +
    `C je_allocated ${64306856 + seq * 1048576}\nC je_active ${64512000 + seq * 1048576}\nC je_resident ${72249344 + seq * 1048576}\n` +
    `C rss ${98493440 + seq * 1048576}\nC cg_version 1\nC cg_current ${206671872 + seq * 1048576}\nC cg_max max\n` +
    `M 0x7079200000000000 entry\nM 0x7079300000000000 unmerged\nM 0x7079400000000000 truncated\nM 0x7079500000000000 unknown\n`;
  for (let id = 1; id <= DEEP_PY_POOL; id++)
    out +=
      `F ${deepPyAddr(id)} ${20 + (id % 400)} ${10 + (id % 400)} Trainer.step_${id % 97}.<locals>.forward_chunk_${id} ` +
      `/opt/venv/lib/python3.12/site-packages/trainer/models/layer_${id % 53}.py\n`;
  return out + `END ${DEEP_PY_POOL}\n`;
}

/** One deep dump and its sidecar; returns the bytes of text written (dump decompressed, plus the sidecar). */
export function writeDeepDump(
  path,
  { stacks, step, seed, pid, gzip = false, host = undefined, growing = 0, fast = false },
) {
  // `growing` stacks evenly spaced (stacks 0, stacks/growing, …), else one in 50
  const every = growing > 0 ? Math.max(1, Math.floor(stacks / growing)) : 50;
  const r = rng(seed);
  let buf = '';
  const counts = [];
  let totalObjs = 0;
  let totalBytes = 0;
  for (let i = 0; i < stacks; i++) {
    const objs =
      1 +
      Math.floor(r() * 20) +
      (i % every === 0 && (growing === 0 || i / every < growing) ? step * (fast ? 50 : 5) : 0);
    counts.push(objs);
    totalObjs += objs;
    totalBytes += objs * (64 + (i % 4096) * 16);
  }
  const t0Objs = Math.round(totalObjs / 2);
  const t0Bytes = Math.round(totalBytes / 2);
  const parts = [
    `heap_v2/524288\n  t*: ${totalObjs}: ${totalBytes} [0: 0]\n  t0: ${t0Objs}: ${t0Bytes} [0: 0] main\n  t1: ${totalObjs - t0Objs}: ${totalBytes - t0Bytes} [0: 0] pt_data_worker\n`,
  ];
  for (let i = 0; i < stacks; i++) {
    const objs = counts[i];
    const bytes = objs * (64 + (i % 4096) * 16);
    buf += `@ ${deepFrames(i, pid)}\n  t*: ${objs}: ${bytes} [0: 0]\n  t${i % 2}: ${objs}: ${bytes} [0: 0]\n`;
    if (buf.length > 1 << 20) {
      parts.push(buf);
      buf = '';
    }
  }
  parts.push(buf + DEEP_MAPS);
  const text = parts.join('');
  writeFileSync(path, gzip ? gzipSync(text, { level: 6 }) : text);
  const side = deepSidecar(pid, Number(/\.(\d+)\.i\d+\.heap/.exec(path)?.[1] ?? 0), host);
  writeFileSync(path.replace(/\.gz$/, '') + '.pyframes', side);
  return Buffer.byteLength(text) + side.length;
}

/** P processes × S snapshots under dir; returns total bytes (decompressed). */
export function writeSeries(
  dir,
  {
    processes,
    snapshots,
    stacks,
    depth,
    python = false,
    gzipHalf = false,
    gzipAll = false,
    firstProcess = 0,
    deep = false,
    hosts = 0,
    totalProcesses = processes,
    growing = 0,
    outliers = 0,
  },
) {
  mkdirSync(dir, { recursive: true });
  let total = 0;
  // processes per host: contiguous blocks, so each host's pids run 1000, 1001, …
  const perHost = hosts > 0 ? Math.ceil(totalProcesses / hosts) : 0;
  const fastEvery = outliers > 0 ? Math.max(1, Math.floor(totalProcesses / outliers)) : 0;
  for (let p = firstProcess; p < firstProcess + processes; p++) {
    const h = hosts > 0 ? Math.floor(p / perHost) : -1;
    const host = h >= 0 ? `node-${String(h).padStart(2, '0')}` : undefined;
    const pid = 1000 + (h >= 0 ? p - h * perHost : p);
    const at = host ? join(dir, host) : dir;
    if (host) mkdirSync(at, { recursive: true });
    for (let s = 0; s < snapshots; s++) {
      const gzip = gzipAll || (gzipHalf && s % 2 === 1);
      const name = `jeprof.${pid}.${s}.i${s}.heap${gzip ? '.gz' : ''}`;
      total += deep
        ? writeDeepDump(join(at, name), {
            stacks,
            step: s,
            seed: p * 1000 + s,
            pid,
            gzip,
            host,
            growing,
            fast: fastEvery > 0 && p % fastEvery === 0 && p / fastEvery < outliers,
          })
        : writeDump(join(at, name), { stacks, depth, step: s, seed: p * 1000 + s, python, pid, gzip });
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
        const child = { dir, ...spec, firstProcess: first, processes: count, totalProcesses: spec.processes };
        const c = fork(self, ['--child', JSON.stringify(child)], {
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
      deep: o.deep,
      gzipAll: o.gzip,
      hosts: o.hosts,
      totalProcesses: o.totalProcesses,
      growing: o.growing,
      outliers: o.outliers,
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
        deep: { type: 'boolean' },
        gzip: { type: 'boolean' },
        hosts: { type: 'string' },
        growing: { type: 'string' },
        outliers: { type: 'string' },
      },
    });
    if (positionals.length !== 1)
      throw new Error(
        'usage: generate-series.mjs <dir> [--processes N --dumps N --stacks N --depth N --python --gzip-half --deep --gzip --hosts N --growing N --outliers N]',
      );
    const r = await ensureJob(positionals[0], {
      processes: Number(values.processes),
      dumps: Number(values.dumps),
      stacks: Number(values.stacks),
      depth: Number(values.depth),
      python: !!values.python,
      gzipHalf: !!values['gzip-half'],
      ...(values.deep ? { deep: true } : {}),
      // only when given, so the specs (and caches) of the jobs made before these options stay the same
      ...(values.gzip ? { gzip: true } : {}),
      ...(values.hosts ? { hosts: Number(values.hosts) } : {}),
      ...(values.growing ? { growing: Number(values.growing) } : {}),
      ...(values.outliers ? { outliers: Number(values.outliers) } : {}),
    });
    console.log(`${r.dir}: ${(r.textBytes / 1e9).toFixed(2)} GB of dump text`);
  }
}
