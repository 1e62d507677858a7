// A process tree's memory from /proc, for the benches that measure a browser or an engine (ui-bench, open-bench).
import { readdirSync, readFileSync } from 'node:fs';

/** Direct children of a process, from /proc. */
export function childPids(pid) {
  const out = [];
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
    if (kids) out.push(...kids.split(/\s+/).map(Number));
  }
  return out;
}

/** A process and all its descendants. */
export function childTree(pid) {
  if (!pid) return [];
  const out = [];
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop();
    out.push(p);
    try {
      stack.push(...childPids(p));
    } catch {
      /* exited */
    }
  }
  return out;
}

/** Resident memory (KiB) of one process. */
export function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Proportional set size (KiB) of one process: its private pages plus its share of the pages it shares. The tree's
 * RSS sum counts every shared page (the Chromium library, fonts, shared-memory buffers) once per process; the PSS
 * sum counts each page once, which is the memory the tree actually takes from the machine.
 */
export function pssOf(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
