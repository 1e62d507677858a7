// Self time per function and thread of a Chrome trace with V8's sampled CPU profiles (what
// BENCH_CHROME_TRACE=<file> node bench/ui-bench.mjs --deep writes): one table per profiled thread (the page, the
// analysis worker, each dump reader), to find where the app spends CPU the CLI does not.
//   node bench/trace-self.mjs <trace.json> [--top 20] [--callers name] [--longest N [--by cpu]] [--dist dist]
// --callers name: also the time under each function named `name` (itself and what it calls), by its callers.
// Times are sampled wall time on the thread (as in bench/cpu-profile-self.mjs): read the shares; '(idle)' is
// the thread waiting.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    top: { type: 'string', default: '20' },
    callers: { type: 'string' },
    longest: { type: 'string' },
    dist: { type: 'string' },
    by: { type: 'string', default: 'wall' },
  },
  allowPositionals: true,
});
if (positionals.length !== 1)
  throw new Error(
    'usage: node bench/trace-self.mjs <trace.json> [--top N] [--callers name] [--longest N] [--by cpu] [--dist dir]',
  );
const raw = JSON.parse(readFileSync(positionals[0], 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;
const threadName = new Map();
for (const e of events)
  if (e.ph === 'M' && e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, e.args?.name ?? '?');

/** One sampled profile a thread: its nodes by id, and its samples' (node, µs) pairs. */
const profiles = new Map();
for (const e of events) {
  if (e.name !== 'Profile' && e.name !== 'ProfileChunk') continue;
  const key = `${e.pid}:${e.id}`;
  let p = profiles.get(key);
  if (!p)
    profiles.set(
      key,
      (p = { thread: `${e.pid}:${e.tid}`, nodes: new Map(), self: new Map(), under: new Map(), total: 0 }),
    );
  if (e.name === 'Profile') p.clock = e.args?.data?.startTime ?? 0;
  p.samples ??= [];
  const cpu = e.args?.data?.cpuProfile;
  if (!cpu) continue;
  for (const n of cpu.nodes ?? []) p.nodes.set(n.id, n);
  const deltas = e.args.data.timeDeltas ?? [];
  (cpu.samples ?? []).forEach((id, i) => {
    const n = p.nodes.get(id);
    const f = n?.callFrame ?? { functionName: '?', url: '' };
    const file = f.url ? ` ${String(f.url).split('/').slice(-1)[0]}` : '';
    const k = `${f.functionName || `(anonymous):${f.lineNumber + 1}:${f.columnNumber + 1}`}${file}`;
    const t = Math.max(0, deltas[i] ?? 0);
    p.clock = (p.clock ?? 0) + (deltas[i] ?? 0);
    p.samples.push({ ts: p.clock, k, t, node: n });
    p.self.set(k, (p.self.get(k) ?? 0) + t);
    p.total += t;
    if (values.callers) {
      // the innermost `name` on this sample's stack, and the chain of two callers above it
      for (let m = n; m; m = p.nodes.get(m.parent))
        if (m.callFrame.functionName === values.callers) {
          const up = [];
          for (let c = p.nodes.get(m.parent); c && up.length < 3; c = p.nodes.get(c.parent))
            up.push(c.callFrame.functionName || `(anonymous):${c.callFrame.lineNumber + 1}`);
          const ck = up.join(' ← ');
          p.under.set(ck, (p.under.get(ck) ?? 0) + t);
          break;
        }
    }
  });
}
for (const p of [...profiles.values()].sort((a, b) => b.total - a.total)) {
  const busy = p.total - (p.self.get('(idle)') ?? 0);
  console.log(
    `${threadName.get(p.thread) ?? p.thread}: ${(p.total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy`,
  );
  for (const [k, t] of [...p.self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${(t / 1e6).toFixed(3).padStart(8)} s ${((100 * t) / p.total).toFixed(1).padStart(5)}%  ${k}`);
  if (p.under.size > 0) console.log(`  under ${values.callers}, by its callers:`);
  for (const [k, t] of [...p.under].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`  ${(t / 1e6).toFixed(3).padStart(8)} s  ${k}`);
}

// --longest N: the page's N longest tasks (the `toplevel` task events on CrRendererMain: `RunTask`, which this
// Chromium names `ThreadControllerImpl::RunTask`), each with its wall and CPU time, the functions that ran in it by
// self time, and the outermost functions of ours under which they ran; functions named from the build's source maps
// (dist/…/*.map, `--dist dir`) where found, so a minified bundle's `Ke` reads `decodeMessage core/engine/wire.ts:98`.
// `--by cpu`: the tasks that took the most of the thread's CPU (on a loaded machine the longest by wall time are often
// the page waiting for a core).
if (values.longest) {
  const isTask = (e) => e.ph === 'X' && e.dur > 0 && /(^|::)RunTask$/.test(e.name);
  // the page's main thread: of the renderers' main threads (extensions, other frames), the one with most tasks
  const count = new Map();
  for (const e of events) if (isTask(e)) count.set(`${e.pid}:${e.tid}`, (count.get(`${e.pid}:${e.tid}`) ?? 0) + 1);
  const main = [...threadName]
    .filter(([, name]) => name === 'CrRendererMain')
    .map(([k]) => k)
    .sort((a, b) => (count.get(b) ?? 0) - (count.get(a) ?? 0))[0];
  // without task events, the outermost events of the thread's timeline
  const outermost = new Set(['FunctionCall', 'TimerFire', 'ParseHTML', 'EventDispatch', 'FireAnimationFrame']);
  const onMain = events.filter((e) => e.ph === 'X' && `${e.pid}:${e.tid}` === main && e.dur > 0);
  const runTasks = onMain.filter(isTask);
  const tasks = (runTasks.length > 0 ? runTasks : onMain.filter((e) => outermost.has(e.name)))
    .sort((a, b) => (values.by === 'cpu' ? (b.tdur ?? b.dur) - (a.tdur ?? a.dur) : b.dur - a.dur))
    .slice(0, Number(values.longest));
  // the page's isolate is sampled by a profiler thread of the same process: the profile of that process with most
  const prof = [...profiles.values()]
    .filter((p) => p.thread.split(':')[0] === main?.split(':')[0])
    .sort((a, b) => b.total - a.total)[0];
  const name = await sourceNamer(values.dist ?? fileURLToPath(new URL('../dist', import.meta.url)));
  const t0 = prof?.samples[0]?.ts ?? Math.min(...onMain.map((e) => e.ts));
  for (const task of tasks) {
    const self = new Map();
    const outer = new Map();
    for (const x of prof?.samples ?? []) {
      if (x.ts < task.ts || x.ts > task.ts + task.dur) continue;
      const k = x.node ? name(x.node.callFrame) : x.k;
      self.set(k, (self.get(k) ?? 0) + x.t);
      // the outermost frame with a source file of ours (the page's bundle), and the one below it
      const chain = [];
      for (let m = x.node; m; m = prof.nodes.get(m.parent)) if (/assets\/|\.js$/.test(m.callFrame.url)) chain.push(m);
      const o = chain
        .slice(-2)
        .reverse()
        .map((m) => name(m.callFrame))
        .join(' → ');
      outer.set(o, (outer.get(o) ?? 0) + x.t);
    }
    const cpu = task.tdur !== undefined ? `, ${(task.tdur / 1000).toFixed(0)} ms CPU` : '';
    console.log(`task of ${(task.dur / 1000).toFixed(0)} ms${cpu} at ${((task.ts - t0) / 1e6).toFixed(2)} s:`);
    for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
      console.log(`  ${(t / 1000).toFixed(1).padStart(7)} ms  ${k}`);
    console.log('  under:');
    for (const [k, t] of [...outer].sort((a, b) => b[1] - a[1]).slice(0, 6))
      console.log(`  ${(t / 1000).toFixed(1).padStart(7)} ms  ${k || '(no frame of ours)'}`);
  }
}

/**
 * A function's name for a sampled call frame: through the source map of its script (a `.map` beside a file of the
 * same name under `dist`), `name source:line`; else the profile's name and the script's file name.
 * @jridgewell/trace-mapping is the source-map reader Svelte's own tools install; without it, the profile's names.
 */
async function sourceNamer(dist) {
  let mapping = null;
  try {
    mapping = await import('@jridgewell/trace-mapping');
  } catch {
    console.error('trace-self: @jridgewell/trace-mapping not installed: functions by their bundled names');
  }
  const mapFiles = new Map();
  if (mapping && existsSync(dist))
    for (const f of readdirSync(dist, { recursive: true }))
      if (String(f).endsWith('.map')) mapFiles.set(basename(String(f), '.map'), join(dist, String(f)));
  const maps = new Map();
  const mapOf = (url) => {
    const file = basename(String(url).split(/[?#]/)[0]);
    if (!maps.has(file)) {
      const at = mapFiles.get(file);
      maps.set(file, at ? new mapping.TraceMap(readFileSync(at, 'utf8')) : null);
    }
    return maps.get(file);
  };
  const names = new Map();
  return (f) => {
    const key = `${f.functionName}|${f.url}|${f.lineNumber}|${f.columnNumber}`;
    let n = names.get(key);
    if (n !== undefined) return n;
    const m = f.url && mapping ? mapOf(f.url) : null;
    // profiles' lines and columns count from 0; source maps' lines from 1
    const p = m ? mapping.originalPositionFor(m, { line: f.lineNumber + 1, column: f.columnNumber }) : null;
    if (p?.source) n = `${p.name ?? (f.functionName || '(anonymous)')} ${p.source.replace(/^(\.\.\/)+/, '')}:${p.line}`;
    else {
      const file = f.url ? ` ${basename(String(f.url))}` : '';
      n = `${f.functionName || `(anonymous):${f.lineNumber + 1}:${f.columnNumber + 1}`}${file}`;
    }
    names.set(key, n);
    return n;
  };
}
