// The Node engine's load without a page, thread by thread: `heaplens open <job> --no-browser` with one WebSocket
// client that asks 'open' alone and waits for the full job, or (--cli) `heaplens summary <job>`. Prints the wall
// time, the process's CPU and each thread's CPU (sampled from /proc every 200 ms, so threads that ended are counted:
// the dump readers close once every dump is read). Node names every thread "node": the first is the merging thread,
// the two busiest others the readers, four of ~1.5–2.5 s V8's GC helpers, four of ~0.5 s libuv's pool.
//
//   node bench/engine-threads.mjs --job DIR [--cli] [--bin path/to/heaplens.js] [--timeline] [-- node flags…]
//
// --timeline: each second's CPU by thread (the merging thread, the two readers, the rest): how many of the machine's
// cores the load keeps busy, and who waits.
//
// Paired runs of two builds (--bin of the other one) on the same job are how the fifth session's engine figures
// in bench/README.md were taken.

import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { decodeMessage, encodeMessage } from '../dist/core/engine/wire.js';

const { values, positionals } = parseArgs({
  options: {
    job: { type: 'string' },
    cli: { type: 'boolean', default: false },
    bin: { type: 'string', default: new URL('../bin/heaplens.js', import.meta.url).pathname },
    timeline: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
if (!values.job)
  throw new Error('usage: node bench/engine-threads.mjs --job DIR [--cli] [--bin heaplens.js] [-- node flags]');

/** Each thread's last CPU seconds (user + system), by tid, until stop(); and, each second, a copy of them. */
function threadSampler(pid) {
  const last = new Map();
  const seconds = [];
  const take = () => {
    let tids;
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    for (const t of tids) {
      try {
        const st = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
        last.set(Number(t), (Number(st[11]) + Number(st[12])) / 100);
      } catch {
        // the thread ended between the listing and the read: its last sample stands
      }
    }
  };
  let ticks = 0;
  const timer = setInterval(() => {
    take();
    if (++ticks % 5 === 0) seconds.push(new Map(last));
  }, 200);
  return {
    seconds,
    stop() {
      take();
      clearInterval(timer);
      return [...last].sort((a, b) => a[0] - b[0]).map(([tid, cpu]) => ({ tid, cpu }));
    },
  };
}

const t0 = performance.now();
const args = values.cli
  ? [...positionals, values.bin, 'summary', values.job]
  : [...positionals, values.bin, 'open', values.job, '--no-browser', '--port', '0'];
const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
const threads = threadSampler(child.pid);
let partials = 0;
if (values.cli) {
  child.stdout.resume();
  await new Promise((r) => child.on('exit', r));
} else {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^http:\S+/m.exec(out);
      if (m) resolve(m[0]);
    });
    child.on('exit', (code) => reject(new Error(`heaplens open exited (${code}) before serving`)));
  });
  const u = new URL(url);
  const ws = new WebSocket(`ws://${u.host}${u.pathname}engine`, { origin: u.origin });
  await new Promise((r) => ws.on('open', r));
  const end = new Promise((resolve) =>
    ws.on('message', (d) => {
      const m = decodeMessage(new Uint8Array(d));
      if (m.progress?.partialDelta) partials++;
      if (m.id === 1 && !m.progress) resolve(m);
    }),
  );
  ws.send(encodeMessage({ id: 1, req: { type: 'open' } }));
  const m = await end;
  if (!m.ok) throw new Error(`the engine's load failed: ${m.error}`);
  ws.close();
}
const wall = (performance.now() - t0) / 1000;
const rows = threads.stop();
if (!values.cli) child.kill('SIGINT');
const total = rows.reduce((a, r) => a + r.cpu, 0);
console.log(
  `${values.cli ? 'heaplens summary' : 'heaplens open'} ${values.job}: wall ${wall.toFixed(2)} s, CPU ${total.toFixed(2)} s` +
    (values.cli ? '' : `, ${partials} job-so-far updates`),
);
console.log(
  `merging thread ${rows[0]?.cpu.toFixed(2)} s; others: ${rows
    .slice(1)
    .filter((r) => r.cpu >= 0.1)
    .map((r) => r.cpu.toFixed(2))
    .join(', ')} s`,
);
if (values.timeline) {
  // the readers: the two busiest threads besides the first (the merging thread)
  const readers = rows
    .slice(1)
    .sort((a, b) => b.cpu - a.cpu)
    .slice(0, 2)
    .map((r) => r.tid);
  let before = new Map();
  threads.seconds.forEach((now, i) => {
    const used = (tid) => (now.get(tid) ?? 0) - (before.get(tid) ?? 0);
    const main = used(rows[0].tid);
    const rd = readers.map(used);
    const rest = rows.slice(1).reduce((a, r) => a + (readers.includes(r.tid) ? 0 : used(r.tid)), 0);
    const f = (x) => x.toFixed(2);
    console.log(
      `${String(i + 1).padStart(3)} s: merging ${f(main)}, readers ${rd.map(f).join(' + ')}, rest ${f(rest)}; cores busy ${f(main + rd[0] + (rd[1] ?? 0) + rest)}`,
    );
    before = now;
  });
}
