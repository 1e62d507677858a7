// The ranking's share of a progressive load's merging thread (issue 43): on a job read once (the CLI's worker
// pool), the ranking work the Node engine does while it loads, replayed in one thread as core/engine/
// progressive-load.ts does it: each process's part of the ranking as it is read whole (QuerySession.rankAhead), the
// page's `suspects` answers on the job so far at the points of a 1,000-process load (limit 16), the load's end
// (finishLoad: the summary, whose post-mortem ranks the job) and the full job's `suspects` answer (limit 200). Prints
// CPU and GC time per phase and a digest of every answer and of the full ranking (each stack and group, key for key):
// equal digests from two checkouts mean the same ranking.
//
//   node bench/rank-bench.mjs <job dir> [--before <built checkout>] [--runs N]
//
// With --before, each run is a pair in fresh processes, this checkout and the other in alternating order; the
// after/before CPU ratio per phase is the median of the pairs'.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';

const here = resolve(import.meta.dirname, '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    before: { type: 'string' },
    runs: { type: 'string', default: '1' },
    // internal: one measurement of the checkout at --root, printed as JSON
    child: { type: 'boolean', default: false },
    root: { type: 'string' },
  },
});
const jobDir = positionals[0];
if (!jobDir) {
  console.error('usage: node bench/rank-bench.mjs <job dir> [--before <built checkout>] [--runs N]');
  process.exit(2);
}

// the page's partial `suspects` answers of the 1,000-process load (bench:open's engine trace): after about these
// fractions of the processes were read
const PARTIAL_AT = [0.01, 0.05, 0.1, 0.17, 0.27, 0.44, 0.63];
const VIEW = { mode: 'python-first', hideAllocator: true, filters: [] };

async function measure(root) {
  const imp = (p) => import(join(root, 'dist', p));
  const { withDumpLoader } = await imp('node/cli/load-dumps.js');
  const { collectInputFiles } = await imp('node/io/node-files.js');
  const { QuerySession } = await imp('core/query/session.js');
  const { suspectsResult } = await imp('core/query/suspects.js');

  let t = performance.now();
  const job = await withDumpLoader(async (load) => load(await collectInputFiles([jobDir])));
  const loadMs = performance.now() - t;

  let gcMs = 0;
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  const flushGc = () => new Promise((r) => setTimeout(r, 0));
  const phases = {};
  const answers = createHash('sha256');
  const timed = async (name, fn) => {
    await flushGc();
    const g0 = gcMs;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    const out = fn();
    const c = process.cpuUsage(c0);
    const wall = performance.now() - w0;
    await flushGc();
    const p = (phases[name] ??= { cpuMs: 0, wallMs: 0, gcMs: 0, calls: 0 });
    p.cpuMs += (c.user + c.system) / 1000;
    p.wallMs += wall;
    p.gcMs += gcMs - g0;
    p.calls++;
    return out;
  };

  const session = new QuerySession();
  const n = job.processes.length;
  const stops = new Set(PARTIAL_AT.map((f) => Math.max(1, Math.round(f * n))));
  for (let i = 0; i < n; i++) {
    await timed('rankAhead', () => session.rankAhead(job.processes[i]));
    if (!stops.has(i + 1)) continue;
    await timed('showPartial', () => session.showPartial(job.processes.slice(0, i + 1), [], null, 0));
    const s = await timed('partial suspects', () => suspectsResult(session, 16, VIEW));
    answers.update(JSON.stringify(s));
  }
  const summary = await timed('finishLoad', () => session.finishLoad(job, { loadMs: 0, bytesTotal: 0, waitMs: 0 }));
  answers.update(JSON.stringify(summary.verdict ?? null));
  const final = await timed('final suspects', () => suspectsResult(session, 200, VIEW));
  answers.update(JSON.stringify(final));
  // the whole ranking, key for key (streamed: 10^6 stacks do not fit one string)
  const r = session.ranking();
  const ranking = createHash('sha256');
  for (const s of r.stacks) ranking.update(JSON.stringify(s));
  for (const g of r.groups) ranking.update(JSON.stringify(g));
  for (const p of r.processes) ranking.update(JSON.stringify(p));
  ranking.update(String(r.groupCount));
  return {
    processes: n,
    stacks: r.stacks.length,
    groups: r.groupCount,
    loadMs,
    phases,
    answers: answers.digest('hex').slice(0, 16),
    ranking: ranking.digest('hex').slice(0, 16),
  };
}

if (values.child) {
  process.stdout.write(JSON.stringify(await measure(resolve(values.root ?? here))));
  process.exit(0);
}

const runOne = (root) =>
  JSON.parse(
    execFileSync(process.execPath, [import.meta.filename, jobDir, '--child', '--root', root], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
const fmt = (ms) => (ms / 1000).toFixed(2).padStart(7);
const show = (label, m) => {
  console.log(
    `${label}: ${m.processes} processes, ${m.stacks} ranked stacks, ${m.groups} groups; read in ${fmt(m.loadMs)} s; digests answers ${m.answers} ranking ${m.ranking}`,
  );
  let cpu = 0;
  let gc = 0;
  for (const [k, p] of Object.entries(m.phases)) {
    cpu += p.cpuMs;
    gc += p.gcMs;
    console.log(
      `  ${k.padEnd(17)} ×${String(p.calls).padStart(5)}  CPU ${fmt(p.cpuMs)} s  wall ${fmt(p.wallMs)} s  GC ${fmt(p.gcMs)} s`,
    );
  }
  console.log(`  ${'all'.padEnd(24)}CPU ${fmt(cpu)} s${' '.repeat(18)}GC ${fmt(gc)} s`);
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const runs = Number(values.runs);
const ratios = {};
for (let k = 0; k < runs; k++) {
  const order = values.before ? (k % 2 ? ['before', 'after'] : ['after', 'before']) : ['after'];
  const got = {};
  for (const side of order) {
    got[side] = runOne(side === 'after' ? here : resolve(values.before));
    show(`run ${k + 1} ${side === 'after' ? 'this checkout' : values.before}`, got[side]);
  }
  if (!values.before) continue;
  const { after, before } = got;
  const total = (m, f) => Object.values(m.phases).reduce((s, p) => s + f(p), 0);
  for (const name of Object.keys(after.phases))
    (ratios[name] ??= []).push(after.phases[name].cpuMs / before.phases[name].cpuMs);
  (ratios.all ??= []).push(total(after, (p) => p.cpuMs) / total(before, (p) => p.cpuMs));
  (ratios['all GC'] ??= []).push(total(after, (p) => p.gcMs) / total(before, (p) => p.gcMs));
  const same = after.answers === before.answers && after.ranking === before.ranking;
  console.log(`  same answers and ranking as ${values.before}: ${same}`);
  if (!same) process.exitCode = 1;
}
if (values.before) {
  console.log(`after/before CPU, median of ${runs} pair(s) (load average ${loadavg()[0].toFixed(2)}):`);
  for (const [k, rs] of Object.entries(ratios))
    console.log(`  ${k.padEnd(17)} ${median(rs).toFixed(3)}  (${rs.map((r) => r.toFixed(3)).join(', ')})`);
}
