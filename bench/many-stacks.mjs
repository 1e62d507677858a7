// Issue 24 item 13: the two shapes of job that used to exhaust memory, made here and timed through the CLI.
//   --stacks N   one dump of N distinct stacks (10^7: 349 MB; `top` used to die of V8's heap after 240 s): the
//                memory budget (core/load/memory-budget.ts) must stop it first, with a message naming the dump
//   --dumps N    N tiny dumps of one process (200,000: `summary` took 158 s and 1.9 GB): time and peak RSS per
//                snapshot, against the 9 KB a snapshot the review measured
// Prints what each run took (wall time, peak RSS from /usr/bin/time) and its stderr's first line.
// Usage: npm run build && node bench/many-stacks.mjs [--stacks 10000000] [--dumps 200000] [--keep]
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFileSync, mkdirSync } from 'node:fs';

const root = resolve(import.meta.dirname, '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const STACKS = arg('stacks', 0);
const DUMPS = arg('dumps', 0);
const work = mkdtempSync(join(tmpdir(), 'heaplens-many-'));

/** One heap_v2 dump (period 1: every record exact) of n distinct stacks: a unique leaf over two shared callers. */
async function writeStacks(file, n) {
  const out = createWriteStream(file);
  const write = (s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)));
  await write(`heap_v2/1\n  t*: ${n}: ${16 * n} [0: 0]\n  t0: ${n}: ${16 * n} [0: 0]\n`);
  let chunk = '';
  for (let i = 0; i < n; i++) {
    chunk += `@ 0x${(0x400000 + i * 16).toString(16)} 0x7f0000001000 0x7f0000002000\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk + '\nMAPPED_LIBRARIES:\n00400000-7f0000003000 r-xp 00000000 08:01 7 /opt/app\n');
  await new Promise((r) => out.end(r));
}

function writeTiny(dir, n) {
  mkdirSync(dir);
  const body =
    '@ 0x401000 0x402000\n  t*: 1: 4096 [0: 0]\n  t0: 1: 4096 [0: 0]\n\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 08:01 7 /opt/app\n';
  for (let i = 0; i < n; i++)
    writeFileSync(
      join(dir, `jeprof.4242.${i}.i${i}.heap`),
      `heap_v2/1\n  t*: 1: 4096 [0: 0]\n  t0: 1: 4096 [0: 0]\n${body}`,
    );
}

function timed(args) {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, join(root, 'bin/heaplens.js'), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const s = (performance.now() - t0) / 1000;
  const lines = r.stderr.trim().split('\n');
  const kb = Number(lines.pop());
  return { s, mb: kb / 1024, status: r.status, signal: r.signal, stderr: lines.join('\n'), stdout: r.stdout };
}

try {
  execFileSync('/usr/bin/time', ['true']);
} catch {
  console.error('needs /usr/bin/time (Debian package "time")');
  process.exit(2);
}
try {
  if (STACKS > 0) {
    const f = join(work, 'jeprof.4242.0.f.heap');
    let t = performance.now();
    await writeStacks(f, STACKS);
    console.log(
      `one dump of ${STACKS.toLocaleString('en-US')} distinct stacks: ${(statSync(f).size / 1e6).toFixed(0)} MB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const r = timed(['top', f, '-n', '3']);
    console.log(`top: exit ${r.status ?? r.signal} after ${r.s.toFixed(1)} s, peak RSS ${r.mb.toFixed(0)} MB`);
    console.log(
      `  ${(r.stderr.split('\n').find((l) => l.startsWith('heaplens')) ?? r.stderr.split('\n').slice(-3).join(' | ')).slice(0, 400)}`,
    );
  }
  if (DUMPS > 0) {
    const dir = join(work, 'tiny');
    let t = performance.now();
    writeTiny(dir, DUMPS);
    console.log(
      `${DUMPS.toLocaleString('en-US')} tiny dumps written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const r = timed(['summary', dir]);
    console.log(
      `summary: exit ${r.status ?? r.signal} after ${r.s.toFixed(1)} s (${((r.s * 1e6) / DUMPS).toFixed(0)} µs a dump), peak RSS ${r.mb.toFixed(0)} MB (${((r.mb * 1024 * 1024) / DUMPS / 1024).toFixed(1)} KB a dump)`,
    );
    const first = r.stderr.split('\n').find((l) => l.startsWith('heaplens'));
    if (first) console.log(`  ${first.slice(0, 400)}`);
  }
} finally {
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
