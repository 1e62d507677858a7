// One command's wall time, peak RSS and CPU under GNU time (/usr/bin/time -f): the one timer of the benchmarks
// that compare whole commands with a floor measured in the same run (scale-bench, stacks-bench).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const GNU_TIME = '/usr/bin/time';

/** Exits with a line saying why when GNU time is missing (peak RSS needs it). */
export function needGnuTime(bench) {
  if (existsSync(GNU_TIME)) return;
  console.log(`${bench}: skipped (needs GNU time at ${GNU_TIME} for peak RSS: apt-get install time)`);
  process.exit(0);
}

/** Runs a command under GNU time; returns { s, rssMB, cpuS } (cpuS: user + system, all threads). */
export function timed(cmd, args, env = {}) {
  const r = spawnSync(GNU_TIME, ['-f', '%e %M %U %S', cmd, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 1 << 26,
  });
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const m = /^([\d.]+) (\d+) ([\d.]+) ([\d.]+)$/.exec(last);
  if (r.status !== 0 || !m) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { s: Number(m[1]), rssMB: Number(m[2]) / 1024, cpuS: Number(m[3]) + Number(m[4]) };
}
