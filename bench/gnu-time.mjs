// One command's wall time, peak RSS and CPU under GNU time (/usr/bin/time -f): the one timer of the benchmarks
// that compare whole commands with a floor measured in the same run (scale-bench, stacks-bench); `timedHeaplens`, a
// heaplens command nice'd with its stdout (dataset-bench, datasets-bench).
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

/**
 * Runs bin/heaplens.js `nice`d (the machine is shared), under GNU time when it is there; returns wall seconds, peak
 * RSS (MB) and CPU seconds (user + system: on a shared machine the wall time depends on the other work; null
 * without GNU time) and stdout. Throws with the end of stderr when the command fails.
 */
export function timedHeaplens(bin, args) {
  const cmd = existsSync(GNU_TIME)
    ? [GNU_TIME, '-f', 'maxrss=%M cpu=%U+%S', 'nice', '-n', '10', process.execPath, bin, ...args]
    : ['nice', '-n', '10', process.execPath, bin, ...args];
  const t0 = performance.now();
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', maxBuffer: 1 << 30 });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`heaplens ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
  const m = /maxrss=(\d+)/.exec(r.stderr);
  const c = /cpu=([\d.]+)\+([\d.]+)/.exec(r.stderr);
  return {
    seconds,
    rssMb: m ? Number(m[1]) / 1024 : null,
    cpu: c ? Number(c[1]) + Number(c[2]) : null,
    stdout: r.stdout,
  };
}
