// Memory outside the heap, per process and for the job: RSS = heap estimate + allocator retention (jemalloc's
// active − allocated and resident − active) + copy-on-write copies of pages inherited at fork (a forked
// child's private dirty pages that its own heap does not explain: every write to an inherited page, such as
// a Python reference count, copies it) + shared pages + the rest (not malloc's). Counts inherited allocations
// once for the job: a forked child's flat stacks shared with its parent are the parent's pages until written.

import type { Job, ProcessSeries, Snapshot } from '../model/model.js';
import type { SmapsSample } from '../formats/smaps-rollup.js';
import { processParents } from '../model/memory-context.js';
import type { JobSuspects } from './suspects.js';

export type MemoryExplanation =
  | 'copy-on-write'
  | 'likely-copy-on-write'
  | 'allocator-retained'
  | 'fragmentation'
  | 'shared-memory'
  | 'not-malloc'
  | 'unknown'
  | 'heap';

/** What a process's memory outside the heap cannot be split into without page counts, and how to get them. */
export const NO_PAGE_COUNTS = 'no page counts recorded (run the capture library, or copy smaps_rollup)';

/**
 * The explanation in words, one sentence for the CLI, the app and the report alike: without page counts a forked
 * child's is "likely copy-on-write" with the figure it inherited, anything else's "unknown", never a guess.
 */
export function explanationWords(
  m: Pick<ProcessMemory, 'explanation' | 'inheritedBytes'>,
  bytes: (n: number) => string,
): string | null {
  if (m.explanation === 'unknown') return `unknown: ${NO_PAGE_COUNTS}`;
  if (m.explanation === 'likely-copy-on-write')
    return `likely copy-on-write: ${bytes(m.inheritedBytes)} inherited at fork; ${NO_PAGE_COUNTS}`;
  return m.explanation;
}

/** Outside-the-heap memory is named only when it is at least this share of RSS and this many bytes. */
export const OUTSIDE_MIN_SHARE = 0.25;
export const OUTSIDE_MIN_BYTES = 16 * 1024 * 1024;

/** Pages as smaps_rollup splits them (a sample beside the dumps, or the capture context's). */
export interface Pages {
  rss: number;
  pss: number | null;
  privateDirty: number | null;
  privateClean: number | null;
  sharedDirty: number | null;
  sharedClean: number | null;
  /** the process's proportional share of shared memory (smaps_rollup Pss_Shmem: /dev/shm, memfd, SysV) */
  shmem: number | null;
  atMs: number | null;
  source: string;
}

export interface ProcessMemory {
  /** the heap estimate at the end (the last complete dump the post-mortem reads) */
  heapBytes: number;
  /** of it, allocations inherited at fork and never freed (the parent's pages until written) */
  inheritedBytes: number;
  rssBytes: number | null;
  privateBytes: number | null;
  sharedBytes: number | null;
  pssBytes: number | null;
  /** RSS beyond the process's own heap, not counting pages still shared (they are counted where they came from) */
  outsideHeapBytes: number | null;
  parts: {
    copyOnWrite: number | null;
    allocatorRetained: number | null;
    fragmentation: number | null;
    sharedMemory: number | null;
    notMalloc: number | null;
  };
  explanation: MemoryExplanation | null;
  /** where the page figures came from */
  source: string | null;
}

export interface JobMemory {
  /** the processes' own heaps, inherited allocations counted once */
  heapBytes: number;
  /** the sum of heap estimates as the dumps give them (double-counts inherited allocations) */
  heapSumBytes: number;
  copyOnWriteBytes: number;
  /** Σ Pss: the job's resident pages, each counted once; null unless every process has a sample */
  pssBytes: number | null;
  rssSumBytes: number | null;
  usageAtKillBytes: number | null;
  peakBytes: number | null;
  limitBytes: number | null;
}

/** The newest smaps sample of `pid` at or before `atMs` (all samples when atMs is null). */
export function pagesAt(
  samples: readonly { file: string; sample: SmapsSample }[],
  pid: number | null,
  atMs: number | null,
): Pages | null {
  let best: { file: string; sample: SmapsSample } | null = null;
  for (const s of samples) {
    if (s.sample.pid !== pid || pid === null) continue;
    const t = s.sample.atMs;
    if (atMs !== null && t !== null && t > atMs) continue;
    if (!best || (t ?? -Infinity) >= (best.sample.atMs ?? -Infinity)) best = s;
  }
  if (!best) return null;
  const x = best.sample;
  return {
    rss: x.rss,
    pss: x.pss,
    privateDirty: x.privateDirty,
    privateClean: x.privateClean,
    sharedDirty: x.sharedDirty,
    sharedClean: x.sharedClean,
    shmem: null,
    atMs: x.atMs,
    source: `smaps_rollup ${best.file}${x.atMs !== null ? ` at ${new Date(x.atMs).toISOString()}` : ''}`,
  };
}

/**
 * The pages the capture library recorded with the dump the end figures come from (its smaps_rollup `sr_*`
 * keys): the same moment as the heap estimate, so preferred to a copied smaps_rollup file sampled apart.
 */
export function contextPagesAt(p: ProcessSeries, cutoffMs: number | null): Pages | null {
  const snap = endSnapshot(p, cutoffMs);
  const c = snap?.context ?? null;
  const pg = c?.pages ?? null;
  if (!snap || !c || !pg || pg.rss === null) return null;
  return {
    rss: pg.rss,
    pss: pg.pss,
    privateDirty: pg.privateDirty,
    privateClean: pg.privateClean,
    sharedDirty: pg.sharedDirty,
    sharedClean: pg.sharedClean,
    shmem: pg.pssShmem,
    atMs: c.timeRealMs,
    source: `the dump's context (${snap.file})`,
  };
}

const sum = (...v: (number | null)[]): number | null =>
  v.every((x) => x !== null) ? v.reduce<number>((a, b) => a + (b as number), 0) : null;
const pos = (v: number): number => Math.max(0, v);

/** The snapshot the end figures come from: the last complete one at or before `cutoffMs`. */
export function endSnapshot(p: ProcessSeries, cutoffMs: number | null): Snapshot | null {
  let pick: Snapshot | null = null;
  for (const s of p.snapshots) {
    if (!s.complete) continue;
    const t = s.context?.timeRealMs ?? null;
    if (cutoffMs !== null && t !== null && t > cutoffMs && pick) break;
    pick = s;
  }
  return pick;
}

export function processMemory(
  job: Pick<Job, 'processes'>,
  suspects: JobSuspects,
  pagesOf: (processIndex: number) => Pages | null,
  cutoffMs: (processIndex: number) => number | null,
): ProcessMemory[] {
  const parents = processParents(job.processes);
  const index = new Map(job.processes.map((p, i) => [p.key, i]));
  return job.processes.map((p, i) => {
    const snap = endSnapshot(p, cutoffMs(i));
    const heap = snap?.live.bytes ?? 0;
    const parentKey = parents.get(p.key) ?? null;
    const parent = parentKey !== null ? index.get(parentKey)! : null;
    // inherited: the child's flat stacks that its parent holds too
    let inherited = 0;
    if (parent !== null) {
      const shared = new Set(
        suspects.groups
          .filter((g) => g.processIndexes.includes(parent) && g.processIndexes.includes(i))
          .map((g) => g.group),
      );
      for (const s of suspects.stacks)
        if (s.processIndex === i && s.pattern === 'flat' && shared.has(s.group)) inherited += s.lastBytes;
      inherited = Math.min(inherited, heap);
    }
    const own = heap - inherited;
    const pg = pagesOf(i);
    const c = snap?.context ?? null;
    const je = c?.jemalloc ?? null;
    const rss = pg?.rss ?? c?.rss ?? null;
    const priv = pg ? sum(pg.privateDirty, pg.privateClean) : null;
    const shared = pg ? sum(pg.sharedDirty, pg.sharedClean) : null;
    const frag = je && je.active !== null && je.allocated !== null ? pos(je.active - je.allocated) : null;
    const retained = je && je.resident !== null && je.active !== null ? pos(je.resident - je.active) : null;
    const cow =
      parent !== null && pg?.privateDirty !== null && pg?.privateDirty !== undefined
        ? pos(pg.privateDirty - own)
        : parent === null
          ? 0
          : null;
    const outside = rss !== null ? pos(rss - own - (parent !== null ? (shared ?? 0) : 0)) : null;
    // a child's jemalloc counters include what it inherited: its retention is the parent's
    const fragOwn = parent !== null ? null : frag;
    const retOwn = parent !== null ? null : retained;
    // shared memory (/dev/shm, memfd) is resident but no allocation: the process's proportional share of it
    const shm = pg?.shmem ?? null;
    const notMalloc = outside !== null ? pos(outside - (cow ?? 0) - (fragOwn ?? 0) - (retOwn ?? 0) - (shm ?? 0)) : null;
    const parts = {
      copyOnWrite: cow,
      allocatorRetained: retOwn,
      fragmentation: fragOwn,
      sharedMemory: shm,
      notMalloc,
    };
    let explanation: MemoryExplanation | null = null;
    if (outside !== null && rss !== null) {
      if (outside < Math.max(OUTSIDE_MIN_BYTES, OUTSIDE_MIN_SHARE * rss)) explanation = 'heap';
      else if (!pg && parent !== null && inherited > 0)
        // no page counts: a forked child's outside is most likely its parent's pages it wrote (or still shares)
        explanation = 'likely-copy-on-write';
      else if (!pg && Math.max(retOwn ?? 0, fragOwn ?? 0) < outside / 2)
        // jemalloc's own counters do not explain it, and without page counts nothing else can be told apart
        explanation = 'unknown';
      else {
        const ranked: [MemoryExplanation, number | null][] = [
          ['copy-on-write', cow],
          ['allocator-retained', retOwn],
          ['fragmentation', fragOwn],
          ['shared-memory', shm],
          ['not-malloc', notMalloc],
        ];
        explanation = ranked
          .filter((x): x is [MemoryExplanation, number] => x[1] !== null)
          .sort((a, b) => b[1] - a[1])[0][0];
      }
    }
    return {
      heapBytes: heap,
      inheritedBytes: inherited,
      rssBytes: rss,
      privateBytes: priv,
      sharedBytes: shared,
      pssBytes: pg?.pss ?? null,
      outsideHeapBytes: outside,
      parts,
      explanation,
      source: pg?.source ?? (c?.rss !== null && c?.rss !== undefined ? `the dump's context (${snap!.file})` : null),
    };
  });
}

export function jobMemory(
  mem: readonly ProcessMemory[],
  cgroup: { usageAtKillBytes: number | null; peakBytes: number | null; limitBytes: number | null },
): JobMemory {
  const pss =
    mem.every((m) => m.pssBytes !== null) && mem.length > 0
      ? mem.reduce((a, m) => a + (m.pssBytes as number), 0)
      : null;
  const rss =
    mem.every((m) => m.rssBytes !== null) && mem.length > 0
      ? mem.reduce((a, m) => a + (m.rssBytes as number), 0)
      : null;
  return {
    heapBytes: mem.reduce((a, m) => a + m.heapBytes - m.inheritedBytes, 0),
    heapSumBytes: mem.reduce((a, m) => a + m.heapBytes, 0),
    copyOnWriteBytes: mem.reduce((a, m) => a + (m.parts.copyOnWrite ?? 0), 0),
    pssBytes: pss,
    rssSumBytes: rss,
    ...cgroup,
  };
}
