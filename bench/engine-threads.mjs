// The Node engine's load without a page, thread by thread: `heaplens open <job> --no-browser` with one WebSocket
// client that asks 'open' alone and waits for the full job, or (--cli) `heaplens summary <job>`. Prints the wall
// time, the process's CPU and each thread's CPU (sampled from /proc every 200 ms, so threads that ended are counted:
// the dump readers close once every dump is read). Node names every thread "node": the first is the merging thread,
// the two busiest others the readers, four of ~1.5–2.5 s V8's GC helpers, four of ~0.5 s libuv's pool.
//
//   node bench/engine-threads.mjs --job DIR [--cli] [--bin path/to/heaplens.js] [-- node flags for the engine…]
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
  },
  allowPositionals: true,
});
if (!values.job)
  throw new Error('usage: node bench/engine-threads.mjs --job DIR [--cli] [--bin heaplens.js] [-- node flags]');

/** Each thread's last CPU seconds (user + system), by tid, until stop(). */
function threadSampler(pid) {
  const last = new Map();
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
  const timer = setInterval(take, 200);
  return {
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
