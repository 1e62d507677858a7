// What `heaplens capture` sets for the job (pure: no file system, no process): jemalloc's MALLOC_CONF, the capture
// library's memory-driven dumps and ring, LD_PRELOAD and PYTHONMALLOC, merged with what the user's environment
// already has. The defaults and why they are what they are live here, next to the sentence that states them.

import { parseLimit } from '../../core/stats/postmortem.js';
import { formatBytes } from '../../core/model/units.js';

export interface CaptureSettings {
  /** a dump per this many bytes allocated (jemalloc's lg_prof_interval: a power of two), null: none */
  every: number | null;
  /** a dump each time the process's RSS grew by this many bytes since its last dump, null: none */
  rssStep: number | null;
  /** a dump as the cgroup's usage passes each fraction of its limit; only set when the job has a limit */
  fractions: readonly number[];
  /** the process's first dump and its newest `keep` are kept (0: all) */
  keep: number;
  /** the dumps' name prefix inside the folder */
  prefix: string;
}

/**
 * The defaults, for a job of any size. Growth is what kills a job, so the series follows RSS: a dump per 64 MiB
 * of growth (the library waits at least 1 s between such dumps, so a fast climb writes at most one a second),
 * which gives a small script a handful of points and a large job one per 64 MiB. The ring (the first dump and
 * the newest 64 per process) bounds the disk for a job that runs for days: the last 4 GiB of a climb, or the
 * last minute of a fast one, plus the first dump as the baseline. Allocation-driven dumps (jemalloc's own
 * interval) every 1 GiB allocated add points to a job whose heap turns over without growing; a smaller interval
 * would fill the ring with a busy job's churn. The final dump (prof_final) is written at exit, after the program
 * freed what it frees at teardown; a kill leaves none, hence the others.
 */
export const DEFAULTS: CaptureSettings = {
  every: 2 ** 30,
  rssStep: 64 * 2 ** 20,
  fractions: [0.8, 0.9, 0.95],
  keep: 64,
  prefix: 'heap',
};

/** A size option (`--every 256M`, `--rss-step 1G`, `off`): bytes, or null for off; a message when it is not one. */
export function parseSizeOption(v: string): { ok: true; bytes: number | null } | { ok: false; message: string } {
  if (v === 'off' || v === '0') return { ok: true, bytes: null };
  const r = parseLimit(v);
  if (!r.ok || r.bytes === null) return { ok: false, message: 'takes a size such as 64M, 1G, 1.5GiB or bytes, or off' };
  return { ok: true, bytes: r.bytes };
}

/** jemalloc's interval is a power of two: the nearest one to the size asked for (at least 1 MiB). */
export function lgInterval(bytes: number): number {
  return Math.max(20, Math.round(Math.log2(bytes)));
}

export interface CaptureEnvInputs {
  settings: CaptureSettings;
  /** the dumps' folder (absolute) */
  dir: string;
  jemalloc: string;
  library: string;
  /** whether the job runs under a cgroup memory limit (the fractions mean nothing without one) */
  cgroupLimit: number | null;
  /** the environment the job would otherwise get */
  env: NodeJS.ProcessEnv;
}

/**
 * The job's environment. The user's own MALLOC_CONF pairs come after ours (jemalloc reads them in order, the last
 * of a key wins), and their own LD_PRELOAD libraries after jemalloc and the capture library (jemalloc must be the
 * first malloc the dynamic linker sees). HEAPLENS_* variables the user set are kept as they are.
 */
export function captureEnv(i: CaptureEnvInputs): NodeJS.ProcessEnv {
  const s = i.settings;
  const conf = [
    'prof:true',
    `prof_prefix:${i.dir}/${s.prefix}`,
    `lg_prof_interval:${s.every === null ? -1 : lgInterval(s.every)}`,
    'prof_final:true',
  ];
  if (i.env.MALLOC_CONF) conf.push(i.env.MALLOC_CONF);
  const preload = [i.jemalloc, i.library, ...(i.env.LD_PRELOAD ?? '').split(/[:\s]+/).filter((p) => p !== '')];
  const env: NodeJS.ProcessEnv = {
    ...i.env,
    LD_PRELOAD: preload.join(':'),
    MALLOC_CONF: conf.join(','),
    // Python's small objects through jemalloc too, not only blocks above 512 bytes and pymalloc's arenas
    PYTHONMALLOC: 'malloc',
  };
  const ours: Record<string, string | null> = {
    HEAPLENS_DUMP_RSS_STEP: s.rssStep === null ? null : String(s.rssStep),
    HEAPLENS_DUMP_CGROUP_FRACTIONS: i.cgroupLimit !== null && s.fractions.length > 0 ? s.fractions.join(',') : null,
    HEAPLENS_DUMP_KEEP: String(s.keep),
  };
  for (const [k, v] of Object.entries(ours)) if (v !== null && i.env[k] === undefined) env[k] = v;
  return env;
}

/** "64 MiB", "1 GiB": a whole number of binary units when the size is one, else formatBytes's figure. */
export function sizeText(n: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const)
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  return formatBytes(n);
}

/** The sentence that says what will be dumped when (printed before the job starts). */
export function planText(s: CaptureSettings, cgroupLimit: number | null): string {
  const when: string[] = [];
  if (s.rssStep !== null) when.push(`every ${sizeText(s.rssStep)} of RSS growth (at most one a second)`);
  if (s.every !== null) when.push(`every ${sizeText(2 ** lgInterval(s.every))} allocated`);
  if (cgroupLimit !== null && s.fractions.length > 0)
    when.push(
      `at ${s.fractions.map((f) => `${Math.round(f * 100)}%`).join(', ')} of the cgroup's ${sizeText(cgroupLimit)}`,
    );
  when.push('at exit');
  const ring = s.keep > 0 ? `; each process keeps its first dump and its newest ${s.keep}` : '';
  return `a dump ${when.join(', ')}${ring}`;
}
