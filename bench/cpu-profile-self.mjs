// Self time per function of V8 CPU profiles (node --cpu-prof, which writes one file per thread, the dump
// pool's workers included), for finding where a command's time goes:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bin/heaplens.js summary <dumps…>
//   node bench/cpu-profile-self.mjs /tmp/prof/*.cpuprofile [--top 25]
// Times are sampled wall time on the thread: on a loaded machine they include time the thread waited for a
// core, so read the shares, and take CPU totals from /usr/bin/time or perf stat.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});
for (const f of positionals) {
  const p = JSON.parse(readFileSync(f, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const t = p.timeDeltas[i] ?? 0;
    const cf = byId.get(p.samples[i]).callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + t);
    total += t;
  }
  console.log(`${f}: ${(total / 1e6).toFixed(2)} s sampled`);
  for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${(t / 1e6).toFixed(3).padStart(8)} s ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
}
