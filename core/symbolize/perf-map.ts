// perf-<pid>.map files: "<start hex> <size hex> <name>" per line, written by JITs and by Python 3.12's
// `-X perf` trampolines into /tmp. Users drop them next to the dumps; PCs in anonymous executable memory
// are looked up here. Lines are read by core/formats/perf-map.ts (bounded, names sanitized: the profiled
// process wrote them).

import { parsePerfMapLine } from '../formats/perf-map.js';

export interface PerfMapEntry {
  start: bigint;
  end: bigint;
  name: string;
}

export interface PerfMap {
  /** where it came from, for display */
  path: string;
  pid: number | null;
  /** sorted by start */
  entries: PerfMapEntry[];
}

export function parsePerfMap(text: string, path: string): PerfMap {
  const entries: PerfMapEntry[] = [];
  for (const raw of text.split('\n')) {
    const e = parsePerfMapLine(raw);
    if (e && e.name !== '') entries.push({ start: e.start, end: e.end, name: e.name });
  }
  // Later lines win for the same start (a JIT reusing memory appends the new code).
  entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const pidMatch = /perf-(\d+)\.map$/.exec(path);
  return { path, pid: pidMatch ? Number(pidMatch[1]) : null, entries };
}

/** The entry covering `pc`; when several overlap, the one starting last (the most recently written code). */
export function findPerfSymbol(map: PerfMap, pc: bigint): PerfMapEntry | null {
  const e = map.entries;
  let lo = 0;
  let hi = e.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (e[mid].start <= pc) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && i >= lo - 16; i--) {
    if (pc >= e[i].start && pc < e[i].end) return e[i];
  }
  return null;
}

/** True for perf map file names: perf-<pid>.map */
export function isPerfMapName(name: string): boolean {
  return /^perf-\d+\.map$/.test(name);
}
