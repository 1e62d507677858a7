// The heap estimate beside what the allocator, the kernel and the cgroup saw (the capture library's
// context, Snapshot.context), and what the gap between RSS and jemalloc's `allocated` likely means:
//
//   active − allocated   fragmentation inside jemalloc's slabs (active/allocated is jemalloc's own
//                        fragmentation estimate, jemalloc/jemalloc#1457)
//   resident − active    dirty/muzzy pages not yet purged back to the kernel (decay settings)
//   RSS − resident       memory jemalloc never saw: pymalloc arenas, mmap'd files, CUDA host buffers,
//                        other allocators, thread stacks, the binaries' own pages
//
// (docs next-features §6; Redis reports the same three ratios.) Pure: used by the CLI and the app.

import type { ProcessSeries, Snapshot } from './model.js';
import { INIT_PID_NAMESPACE, type DumpContext, type JemallocStats } from '../formats/dump-context.js';

export interface MemoryPoint extends JemallocStats {
  /** the dump's unbiased live bytes (what the heap profile explains) */
  heapEstimate: number;
  rss: number | null;
  rssAnon: number | null;
  cgroupCurrent: number | null;
  /** memory.max; null when unlimited or unknown */
  cgroupMax: number | null;
}

export type GapPart = 'fragmentation' | 'unpurged' | 'outside';

export interface MemoryGap {
  rss: number;
  allocated: number;
  /** RSS − allocated: memory the process holds beyond what the program has allocated */
  gap: number;
  /** the gap split; a part is null when its counters are missing (negative parts are clamped to 0) */
  parts: Record<GapPart, number | null>;
  /** the largest part, when it is at least GAP_DOMINANT_SHARE of the gap and the gap matters */
  dominant: GapPart | null;
  /** one sentence for the CLI and the app */
  message: string;
}

/** A gap below this share of RSS (or below GAP_MIN_BYTES) is not worth explaining. */
export const GAP_MIN_SHARE = 0.1;
export const GAP_MIN_BYTES = 16 * 1024 * 1024;
/** A part explains the gap when it is at least this share of it. */
export const GAP_DOMINANT_SHARE = 0.5;

export const GAP_MEANING: Record<GapPart, string> = {
  fragmentation: 'fragmentation inside jemalloc (active − allocated: partly used pages)',
  unpurged: 'unpurged pages (resident − active: freed but not yet returned to the kernel; see dirty_decay_ms)',
  outside:
    'memory outside jemalloc (RSS − resident: pymalloc arenas, mmap’d files, CUDA host buffers, other allocators)',
};

export function memoryPoint(s: Snapshot): MemoryPoint {
  const c: DumpContext | null | undefined = s.context;
  const je = c?.jemalloc ?? null;
  return {
    heapEstimate: s.live.bytes,
    allocated: je?.allocated ?? null,
    active: je?.active ?? null,
    resident: je?.resident ?? null,
    mapped: je?.mapped ?? null,
    retained: je?.retained ?? null,
    metadata: je?.metadata ?? null,
    rss: c?.rss ?? null,
    rssAnon: c?.rssAnon ?? null,
    cgroupCurrent: c?.cgroup?.current ?? null,
    cgroupMax: c?.cgroup?.max ?? null,
  };
}

const MIB = 1024 * 1024;
const mib = (n: number): string => `${(n / MIB).toFixed(n < 10 * MIB ? 1 : 0)} MiB`;

const gapMatters = (gap: number, rss: number): boolean => gap >= GAP_MIN_BYTES && gap >= GAP_MIN_SHARE * rss;

/** RSS − allocated and its likely meaning; null without both counters. */
export function memoryGap(m: MemoryPoint): MemoryGap | null {
  if (m.rss === null || m.allocated === null) return null;
  const gap = m.rss - m.allocated;
  const pos = (v: number): number => Math.max(0, v);
  const parts: Record<GapPart, number | null> = {
    fragmentation: m.active !== null ? pos(m.active - m.allocated) : null,
    unpurged: m.resident !== null && m.active !== null ? pos(m.resident - m.active) : null,
    outside: m.resident !== null ? pos(m.rss - m.resident) : null,
  };
  const matters = gapMatters(gap, m.rss);
  let dominant: GapPart | null = null;
  if (matters) {
    for (const k of ['fragmentation', 'unpurged', 'outside'] as const) {
      const v = parts[k];
      if (v !== null && v >= GAP_DOMINANT_SHARE * gap && (dominant === null || v > (parts[dominant] ?? 0)))
        dominant = k;
    }
  }
  const figures = { rss: m.rss, allocated: m.allocated, gap, parts, dominant };
  return { ...figures, message: gapMessage(figures) };
}

/**
 * The gap's sentence from its figures: the one place it is written, for the CLI (memoryGap) and the app (the job
 * summary sends the figures, ~40 % of its bytes were this sentence once per snapshot).
 */
export function gapMessage(g: Omit<MemoryGap, 'message'>): string {
  const { rss, allocated, gap, parts, dominant } = g;
  const split = (['fragmentation', 'unpurged', 'outside'] as const)
    .filter((k) => parts[k] !== null)
    .map((k) => `${k} ${mib(parts[k] as number)}`)
    .join(', ');
  // allocated but not resident: pages never written (calloc'd or large blocks fresh from mmap), or swapped out
  if (gap < 0)
    return `RSS ${mib(rss)} − allocated ${mib(allocated)} = −${mib(-gap)}: part of the allocated memory is not resident (pages never written, e.g. calloc'd blocks fresh from the kernel, or swapped out)`;
  return (
    `RSS ${mib(rss)} − allocated ${mib(allocated)} = ${mib(gap)}` +
    (split ? ` (${split})` : '') +
    (!gapMatters(gap, rss)
      ? ': small, the allocations explain the process’s memory'
      : dominant
        ? `: mostly ${GAP_MEANING[dominant]}`
        : ': no single cause')
  );
}

/** The cgroup memory limit (memory.max) the process ran under, from its newest dump that recorded one. */
export function processLimit(p: Pick<ProcessSeries, 'snapshots'>): number | null {
  for (let i = p.snapshots.length - 1; i >= 0; i--) {
    const max = p.snapshots[i].context?.cgroup?.max;
    if (max !== null && max !== undefined) return max;
  }
  return null;
}

export interface ProcessIdentity {
  pid: number;
  ppid: number | null;
  comm: string | null;
  cmdline: string[] | null;
  hostname: string | null;
  /** the pid in each pid namespace /proc showed, outermost first (the context's `nspid`); null when not recorded */
  nsPids: number[] | null;
  /**
   * The pid the host's kernel knows the process by (what its OOM report and dmesg name): its own pid in the initial
   * pid namespace; the outermost of several NSpid entries (the host's when the process saw the host's /proc, as
   * with `unshare --pid` or a runtime sharing /proc); null inside a container that mounted its own /proc (one
   * entry, another namespace) or when nothing was recorded.
   */
  hostPid: number | null;
  /** the pid namespace's inode (INIT_PID_NAMESPACE on the host) */
  pidNamespace: number | null;
  /** the machine's boot id: processes with the same one ran on the same machine in the same boot */
  bootId: string | null;
  /** process start, wall clock, ms since the epoch */
  startMs: number | null;
}

/** Who the process was, from its newest dump with a context; null for dumps from jemalloc alone. */
export function processIdentity(p: Pick<ProcessSeries, 'snapshots'>): ProcessIdentity | null {
  for (let i = p.snapshots.length - 1; i >= 0; i--) {
    const c = p.snapshots[i].context;
    if (c)
      return {
        pid: c.pid,
        ppid: c.ppid,
        comm: c.comm,
        cmdline: c.cmdline,
        hostname: c.hostname,
        nsPids: c.nsPids,
        hostPid: c.pidNamespace === INIT_PID_NAMESPACE ? c.pid : c.nsPids && c.nsPids.length > 1 ? c.nsPids[0] : null,
        pidNamespace: c.pidNamespace,
        bootId: c.bootId,
        startMs: c.startRealMs,
      };
  }
  return null;
}

/** Slack on start times (clock ticks are 10 ms; two boots' clocks may be skewed slightly). */
const START_SLACK_MS = 50;

/**
 * The fork/spawn tree: each process's parent among the job's processes (ppid = the parent's pid on
 * the same host, and the parent started no later than the child, which rules out a reused pid).
 * Returns parent key by process key (null for roots and for processes without a context).
 */
export function processParents(processes: readonly ProcessSeries[]): Map<string, string | null> {
  const ids = processes.map((p) => ({ key: p.key, id: processIdentity(p) }));
  const out = new Map<string, string | null>();
  for (const { key, id } of ids) {
    let parent: string | null = null;
    if (id && id.ppid !== null) {
      for (const o of ids) {
        if (o.key === key || !o.id || o.id.pid !== id.ppid) continue;
        if (id.hostname !== null && o.id.hostname !== null && id.hostname !== o.id.hostname) continue;
        if (id.startMs !== null && o.id.startMs !== null && o.id.startMs > id.startMs + START_SLACK_MS) continue;
        parent = o.key;
        break;
      }
    }
    out.set(key, parent);
  }
  return out;
}

/** Depth-first order of the tree (roots by start time, then key), with each process's depth. */
export function processTreeOrder(
  processes: readonly ProcessSeries[],
): { process: ProcessSeries; depth: number; parent: string | null }[] {
  const parents = processParents(processes);
  const children = new Map<string | null, ProcessSeries[]>();
  for (const p of processes) {
    const k = parents.get(p.key) ?? null;
    const list = children.get(k) ?? [];
    list.push(p);
    children.set(k, list);
  }
  const start = (p: ProcessSeries): number => processIdentity(p)?.startMs ?? Number.POSITIVE_INFINITY;
  for (const list of children.values())
    list.sort((a, b) => start(a) - start(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const out: { process: ProcessSeries; depth: number; parent: string | null }[] = [];
  const seen = new Set<string>();
  const visit = (p: ProcessSeries, depth: number): void => {
    if (seen.has(p.key)) return;
    seen.add(p.key);
    out.push({ process: p, depth, parent: parents.get(p.key) ?? null });
    for (const c of children.get(p.key) ?? []) visit(c, depth + 1);
  };
  for (const r of children.get(null) ?? []) visit(r, 0);
  for (const p of processes) visit(p, 0); // cycles (impossible with start times, but pids can lie): flat
  return out;
}

/**
 * The one cgroup memory limit the job's dumps recorded (memory.max), for the post-mortem's time to
 * the limit when the user gave none; null when no dump recorded one or the processes ran under
 * different limits (different cgroups or nodes: no single job-wide limit).
 */
export function recordedJobLimit(
  processes: readonly Pick<ProcessSeries, 'snapshots'>[],
): { bytes: number; processes: number } | null {
  const limits = processes.map(processLimit).filter((l): l is number => l !== null);
  if (limits.length === 0 || new Set(limits).size !== 1) return null;
  return { bytes: limits[0], processes: limits.length };
}
