// The host a process ran on (issue 49: a job of many processes on many nodes, where pids repeat): the capture
// context's hostname, else the top folder under the job root its dumps came from (`node-a/…`: how a user copies
// each node's dumps off a cluster), else none. And how a process's pid reads where pids repeat: `node-a:12`.

import { revealControls } from './display-text.js';
import { processIdentity } from './memory-context.js';
import type { ProcessSeries } from './model.js';

/** The host of a process: its context's hostname, else the folder the loader found (`ProcessSeries.host`), else null. */
export function processHost(p: Pick<ProcessSeries, 'snapshots' | 'host'>): string | null {
  // a name from the profiled process: marked as every shown name is
  const fromContext = processIdentity(p)?.hostname ?? null;
  const host = fromContext !== null && fromContext !== '' ? fromContext : (p.host ?? null);
  return host === null ? null : revealControls(host);
}

/**
 * Each folder's top folder under the folders' common root (`job/node-a/dumps` and `job/node-b/dumps` → `node-a`,
 * `node-b`), or null for a folder that is the root itself. When every folder is under one top folder, nothing
 * tells hosts apart: all null (a job's dumps in `job/dumps/` are not a host named "dumps").
 */
export function topFolders(dirs: readonly string[]): (string | null)[] {
  const parts = dirs.map((d) => d.split('/').filter((s) => s !== '' && s !== '.'));
  if (parts.length === 0) return [];
  let root = parts[0].length;
  for (const p of parts) {
    let k = 0;
    while (k < root && k < p.length && p[k] === parts[0][k]) k++;
    root = k;
  }
  const tops = parts.map((p) => (p.length > root ? p[root] : null));
  const distinct = new Set(tops.filter((t) => t !== null));
  return distinct.size >= 2 ? tops : tops.map(() => null);
}

/** Whether a pid names more than one process of the job (the labels then say the host); a process listed twice is one. */
export function pidsRepeat(processes: readonly Pick<ProcessSeries, 'pid'>[]): boolean {
  const seen = new Set<number>();
  for (const p of new Set(processes)) {
    if (p.pid === null) continue;
    if (seen.has(p.pid)) return true;
    seen.add(p.pid);
  }
  return false;
}

/** A pid as labels show it: `node-a:12` given a host, else `12`; `?` without a pid. */
export function pidText(pid: number | null, host: string | null = null): string {
  const n = pid === null ? '?' : String(pid);
  return host !== null ? `${host}:${n}` : n;
}

type Labelled = Pick<ProcessSeries, 'pid' | 'snapshots' | 'host'>;
// per job (its processes array): asked for per line of output, worked out once
const labelHosts = new WeakMap<readonly Labelled[], Map<Labelled, string | null>>();

/**
 * The host a label of p shows in its job: its host when pids repeat among `processes` (the job's), else null.
 * `processes` must be the job's array (it keys the cache), p one of them.
 */
export function labelHost(processes: readonly Labelled[], p: Labelled): string | null {
  let m = labelHosts.get(processes);
  if (!m) {
    const repeat = pidsRepeat(processes);
    m = new Map(processes.map((q) => [q, repeat ? processHost(q) : null] as const));
    labelHosts.set(processes, m);
  }
  return m.get(p) ?? null;
}

/** p's pid as labels show it in its job: `node-a:12` where pids repeat (see labelHost), else `12`. */
export function jobPidText(processes: readonly Labelled[], p: Labelled): string {
  return pidText(p.pid, labelHost(processes, p));
}

const dirOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/**
 * The processes each log speaks for: a log in a host's folder (`node-b/logs/launcher.log` beside `node-b/dumps/`)
 * names that host's processes, by the pids they have there; a log anywhere else (the job root, a `logs/` folder
 * of a job without host folders) may name any. The folders are cut at the same root as the processes' own
 * (topFolders over the dumps' and the logs' folders together). Per log path: the indexes of the processes of its
 * folder, or null for all.
 */
export function logScopes(
  processes: readonly Pick<ProcessSeries, 'snapshots' | 'key'>[],
  logs: readonly string[],
): Map<string, number[] | null> {
  const procDirs = processes.map((p) => dirOf(p.snapshots[0]?.file ?? p.key));
  const tops = topFolders([...procDirs, ...logs.map(dirOf)]);
  const byTop = new Map<string, number[]>();
  processes.forEach((_, i) => {
    const t = tops[i];
    if (t === null) return;
    const list = byTop.get(t);
    if (list) list.push(i);
    else byTop.set(t, [i]);
  });
  return new Map(
    logs.map((path, j) => {
      const t = tops[processes.length + j];
      return [path, t !== null ? (byTop.get(t) ?? null) : null] as const;
    }),
  );
}
