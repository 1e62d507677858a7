// Issue 25's table, on generated jobs of short stacks (26 frames, Python frames appended to the dump) and of
// deep ones (20–60 frames with a deeper tail, Python frames merged as the capture library writes them,
// ~125 KB .pyframes sidecars), half the dumps gzipped (generate-series.mjs). Each figure is a ratio to a
// reference measured in the same run, paired (A B A B …, the median of the pairs' ratios):
//   - `summary` of the whole job and of one process against the floor: `gzip -dc` of the .gz files plus
//     `cat` of the others, the same files (one core, as a serial reader would; and all cores);
//   - `top -n 20` of one generated dump against `jeprof --text` of it;
//   - `top -n 20` of real ~1 MB and ~9 MB dumps (python3.11, every allocation sampled) with symbols cold against
//     jeprof (the small one also with the symbol cache warm and without symbols).
// Then byte for byte: `summary`, `top` and `growth --json` of one process through the worker pool equal the
// in-thread (serial) reader's; any difference fails the bench.
//
// The jobs are generated once into $HEAPLENS_SCALE_DATA (default /tmp/heaplens-scale-data) and reused.
// The issue's job is 16 × 100 × 5,000 (4.8 GB of deep text); the default here is 4 × 50 × 5,000 (the
// ratios are per byte, so they hold: a process's dumps are read the same way at any job size).
//   node bench/stacks-bench.mjs [--size 16x100x5000] [--runs 3] [--only short|deep|real] [--no-real]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureJob } from './generate-series.mjs';
import { needGnuTime, timed } from './gnu-time.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'bin/heaplens.js');
const data = process.env.HEAPLENS_SCALE_DATA ?? '/tmp/heaplens-scale-data';
const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '4x50x5000' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    'no-real': { type: 'boolean' },
  },
});
const [P, D, S] = values.size.split('x').map(Number);
if (![P, D, S].every((n) => Number.isInteger(n) && n > 0)) throw new Error(`--size PxDxS, not ${values.size}`);
const RUNS = Math.max(1, Number(values.runs));
const cores = availableParallelism();
let failed = false;

needGnuTime('stacks bench');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs) => `${Math.min(...xs).toFixed(2)}/${median(xs).toFixed(2)}/${Math.max(...xs).toFixed(2)}`;

/** A and B in turn, RUNS pairs: medians, and the median of the pairs' A/B ratios. */
function paired(a, b) {
  const ra = [];
  const rb = [];
  for (let k = 0; k < RUNS; k++) {
    ra.push(a());
    rb.push(b());
  }
  const ratio = median(ra.map((x, k) => x.s / rb[k].s));
  const cpuRatio = median(ra.map((x, k) => x.cpuS / Math.max(0.01, rb[k].cpuS)));
  return { a: ra, b: rb, ratio, cpuRatio };
}

const sh = (script) => () => timed('sh', ['-c', script]);
/** The floor over a list of files: gzip -dc of the .gz ones, cat of the others (`-P` for all cores). */
function floorOf(files, parallel) {
  const list = join(tmp, `list-${Math.random().toString(36).slice(2)}`);
  spawnSync('sh', ['-c', `cat > ${list}`], { input: files.join('\0') });
  const p = parallel ? `-P ${cores} -n 16` : '';
  return sh(
    `grep -z '\\.gz$' ${list} | xargs -0 ${p} gzip -dc > /dev/null; grep -zv '\\.gz$' ${list} | xargs -0 ${p} cat > /dev/null`,
  );
}
const heaplens =
  (args, env = {}) =>
  () =>
    timed(process.execPath, [cli, ...args], env);

function row(what, r, ref, goal) {
  const rss = Math.max(...r.a.map((x) => x.rssMB));
  const cpu = median(r.a.map((x) => x.cpuS));
  const refCpu = median(r.b.map((x) => x.cpuS));
  console.log(
    `  ${what}: ${spread(r.a.map((x) => x.s))} s (min/median/max), CPU ${cpu.toFixed(2)} s, peak RSS ${rss.toFixed(0)} MB; ` +
      `${ref} ${spread(r.b.map((x) => x.s))} s, CPU ${refCpu.toFixed(2)} s → ${r.ratio.toFixed(2)}× wall, ${r.cpuRatio.toFixed(2)}× CPU (goal ${goal} wall)`,
  );
}

/** stdout of a heaplens command (for the byte-for-byte comparison). */
function output(args, env) {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`heaplens ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

function sameBytes(label, args) {
  const fast = output(args, {});
  const serial = output(args, { HEAPLENS_WORKERS: '0' });
  if (fast === serial) {
    console.log(`  byte for byte: ${label} --json, worker pool = in-thread reader (${fast.length} bytes)`);
    return;
  }
  let k = 0;
  while (k < fast.length && fast[k] === serial[k]) k++;
  failed = true;
  console.log(
    `  DIFFERENT: ${label} --json, worker pool vs in-thread reader, from character ${k}: ${JSON.stringify(fast.slice(k, k + 80))} vs ${JSON.stringify(serial.slice(k, k + 80))}`,
  );
}

/**
 * Frame text a second on one core (CPU time, so other work on the machine weighs less): the scanner alone over
 * the dump's '@' lines, the whole parser over the dump (reading every line, and with a backtrace cache that has
 * seen the process's stacks, as a reader thread has after its first dump of the process), and a loop that only
 * counts the blanks of the same lines.
 */
async function scanThroughput(dump) {
  const { scanFrameWords } = await import(join(root, 'dist/core/formats/frame-scan.js'));
  const { HeapDumpParser } = await import(join(root, 'dist/core/formats/heap-dump.js'));
  const cacheModule = join(root, 'dist/core/formats/backtrace-cache.js');
  const { BacktraceCache } = existsSync(cacheModule) ? await import(cacheModule) : {};
  const b = new Uint8Array(readFileSync(dump));
  const spans = [];
  for (let i = 0; i < b.length;) {
    let nl = b.indexOf(10, i);
    if (nl < 0) nl = b.length;
    if (b[i] === 64) spans.push(i + 1, nl);
    i = nl + 1;
  }
  let frameBytes = 0;
  for (let k = 0; k < spans.length; k += 2) frameBytes += spans[k + 1] - spans[k];
  const words = new Uint32Array(2048);
  const cpu = (f) => {
    for (let w = 0; w < 3; w++) f();
    const c0 = process.cpuUsage();
    const runs = 10;
    for (let w = 0; w < runs; w++) f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e6 / runs;
  };
  const scan = cpu(() => {
    for (let k = 0; k < spans.length; k += 2) scanFrameWords(b, spans[k], spans[k + 1], words, 1024);
  });
  let blanks = 0;
  const floor = cpu(() => {
    for (let k = 0; k < spans.length; k += 2) for (let i = spans[k]; i < spans[k + 1]; i++) if (b[i] === 32) blanks++;
  });
  const parseWith = (backtraces) => () => {
    const p = new HeapDumpParser({ onRecord: () => undefined, ...(backtraces ? { backtraces } : {}) });
    for (let s = 0; s < b.length; s += 1 << 18) p.push(b.subarray(s, s + (1 << 18)));
    p.finish();
  };
  const parse = cpu(parseWith(null));
  // (cpu() runs it 3 times before timing: the cache has the dump's lines from the first)
  const warm = BacktraceCache ? cpu(parseWith(new BacktraceCache())) : null;
  if (blanks === 0) throw new Error('no frame text in ' + dump);
  const mbs = (s) => (frameBytes / 1e6 / s).toFixed(0);
  console.log(
    `  frame scanner: ${mbs(scan)} MB/s of frame text a core (goal ≥ 400); a loop that only counts its blanks: ${mbs(floor)} MB/s; ` +
      `whole parser ${(b.length / 1e6 / parse).toFixed(0)} MB/s of dump text${warm ? `, ${(b.length / 1e6 / warm).toFixed(0)} MB/s with the process's stacks in its backtrace cache` : ''} (one ${(b.length / 1e6).toFixed(1)} MB dump, CPU time)`,
  );
}

function jeprofAvailable() {
  return existsSync('/usr/bin/jeprof');
}

const tmp = mkdtempSync(join(tmpdir(), 'heaplens-stacks-'));
try {
  console.log(
    `job size ${P} processes × ${D} dumps × ${S} stacks; ${RUNS} paired runs a figure; ${cores} cores; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const shapes = [
    { name: 'short', spec: { depth: 26, python: true, gzipHalf: true } },
    { name: 'deep', spec: { depth: 0, python: true, gzipHalf: true, deep: true } },
  ].filter((s) => !values.only || values.only === s.name);
  for (const shape of shapes) {
    const t0 = performance.now();
    const { dir, textBytes } = await ensureJob(join(data, `stacks-${shape.name}-${values.size}`), {
      processes: P,
      dumps: D,
      stacks: S,
      ...shape.spec,
    });
    const genS = (performance.now() - t0) / 1000;
    const files = readdirSync(dir)
      .filter((f) => f.startsWith('jeprof.'))
      .sort()
      .map((f) => join(dir, f));
    const one = files.filter((f) => f.includes('/jeprof.1000.'));
    const oneBytes = one.reduce((s, f) => s + (f.endsWith('.gz') ? 0 : statSync(f).size), 0);
    console.log(
      `\n${shape.name} stacks: ${(textBytes / 1e9).toFixed(2)} GB of text in ${files.length} files${genS > 1 ? ` (generated in ${genS.toFixed(0)} s)` : ''}; load average ${loadavg()[0].toFixed(1)}`,
    );
    await scanThroughput(one.find((f) => f.endsWith('.heap')));
    const whole = paired(heaplens(['summary', dir]), floorOf(files, false));
    row('summary, whole job', whole, 'floor (gzip -dc + cat, one core)', '≤ 1.5×');
    const wholeAll = paired(heaplens(['summary', dir]), floorOf(files, true));
    row('summary, whole job', wholeAll, `floor on ${cores} cores`, '—');
    const proc = paired(heaplens(['summary', ...one]), floorOf(one, false));
    row(`summary, one process (${D} dumps, ≥ ${(oneBytes / 1e6).toFixed(0)} MB plain text)`, proc, 'floor', '≤ 1.5×');
    const dump = one.find((f) => f.endsWith('.heap'));
    if (dump && jeprofAvailable()) {
      const jeprof = () => timed('jeprof', ['--text', '--show_bytes', '/bin/true', dump]);
      const top = paired(heaplens(['top', dump, '-n', '20']), jeprof);
      row(`top -n 20 of one ${(statSync(dump).size / 1e6).toFixed(1)} MB dump`, top, 'jeprof --text', '≤ 1/15');
    }
    sameBytes('summary, one process', ['summary', '--json', ...one]);
    sameBytes('top -n 50, one process', ['top', '--json', '-n', '50', ...one]);
    sameBytes('growth -n 50, one process', ['growth', '--json', '-n', '50', ...one]);
  }

  // Real dumps: every allocation of a Python process sampled, symbols from its binaries, nothing cached. The
  // issue's case is ~1 MB (python3.11 -S, importing ctypes only); the second, ~9 MB, imports a dozen modules.
  const je = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
  if (values['no-real']) {
    // asked for
  } else if (existsSync(je) && jeprofAvailable() && existsSync('/usr/bin/python3.11')) {
    const dumpOf = (name, pythonArgs, imports) => {
      const prefix = join(tmp, name);
      spawnSync(
        '/usr/bin/python3.11',
        [...pythonArgs, '-c', `import ${imports}\nctypes.CDLL(None).mallctl(b"prof.dump", None, None, None, 0)`],
        {
          env: {
            ...process.env,
            LD_PRELOAD: je,
            PYTHONMALLOC: 'malloc',
            MALLOC_CONF: `prof:true,lg_prof_sample:0,prof_prefix:${prefix}`,
          },
        },
      );
      const dump = readdirSync(tmp)
        .filter((f) => f.startsWith(`${name}.`) && f.endsWith('.heap'))
        .map((f) => join(tmp, f))[0];
      if (!dump) throw new Error('python3.11 under jemalloc wrote no dump');
      return dump;
    };
    const dumps = [
      { dump: dumpOf('small', ['-S'], 'ctypes'), all: true },
      {
        dump: dumpOf(
          'real',
          [],
          'json, email.parser, http.client, xml.dom.minidom, unittest, argparse, decimal, sqlite3, asyncio, ctypes',
        ),
        all: false,
      },
    ];
    for (const { dump, all } of dumps) {
      const size = (statSync(dump).size / 1e6).toFixed(1);
      console.log(
        `\nreal dump (python3.11, every allocation sampled): ${size} MB; load average ${loadavg()[0].toFixed(1)}`,
      );
      const jeprof = () => timed('jeprof', ['--text', '--show_bytes', '/usr/bin/python3.11', dump]);
      const cold = paired(heaplens(['top', dump, '-n', '20'], { HEAPLENS_SYMBOL_CACHE: '0' }), jeprof);
      row('top -n 20, symbols cold', cold, 'jeprof --text', '≤ 1/15, ≤ 0.3 s');
      if (!all) continue;
      const warm = paired(heaplens(['top', dump, '-n', '20']), jeprof);
      row('top -n 20, symbol cache warm', warm, 'jeprof --text', '—');
      const nosym = paired(heaplens(['top', dump, '-n', '20', '--no-symbols']), jeprof);
      row('top -n 20 --no-symbols', nosym, 'jeprof --text', '—');
      const start = paired(() => timed(process.execPath, ['-e', '0']), jeprof);
      row("node's own start", start, 'jeprof --text', '—');
    }
  } else {
    console.log(
      '\nreal dump top vs jeprof: skipped (needs libjemalloc2, jeprof and /usr/bin/python3.11: apt-get install libjemalloc2 libjemalloc-dev python3.11)',
    );
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
