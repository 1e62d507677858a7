// The capture context for the app's summaries: snapshot times and memory figures, process identity and
// the fork/spawn tree (from core/, shared with the CLI).
import type { Job } from '../../../core/model/model.ts';
import { seriesTimes } from '../../../core/model/snapshot-time.ts';
import { memoryGap, processIdentity, processLimit, processTreeOrder } from '../../../core/model/memory-context.ts';
import { seriesMemory } from '../../../core/load/series-memory.ts';
import { formatCmdline } from '../../../core/formats/dump-context.ts';
import { processName } from '../../../core/model/process-name.ts';
import type { ProcessIdentitySummary, SnapshotMemory } from '../lib/protocol.ts';

export interface ProcessContextParts {
  identity: ProcessIdentitySummary | null;
  treeOrder: number;
  limitBytes: number | null;
  time: { axis: 'wall' | 'seq'; source: 'capture' | 'mtime' | 'seq'; mtimeProblem: string | null };
  snapshots: { timeMs: number | null; timeSource: 'capture' | 'mtime' | 'seq'; memory: SnapshotMemory | null }[];
}

export function contextParts(j: Job): ProcessContextParts[] {
  const order = processTreeOrder(j.processes);
  const indexOf = new Map(j.processes.map((p, i) => [p.key, i] as const));
  const pos = new Map(order.map((o, k) => [o.process.key, { k, depth: o.depth, parent: o.parent }] as const));
  return j.processes.map((p) => {
    const id = processIdentity(p);
    const where = pos.get(p.key);
    const t = seriesTimes(p);
    const mem = seriesMemory(p);
    return {
      identity: id
        ? {
            name: processName(p),
            comm: id.comm,
            cmdline: id.cmdline ? formatCmdline(id.cmdline) : null,
            ppid: id.ppid,
            hostname: id.hostname,
            startMs: id.startMs,
            parentIndex: where?.parent ? (indexOf.get(where.parent) ?? null) : null,
            depth: where?.depth ?? 0,
          }
        : null,
      treeOrder: where?.k ?? 0,
      limitBytes: processLimit(p),
      time: { axis: t.axis, source: t.source, mtimeProblem: t.mtimeProblem },
      snapshots: p.snapshots.map((_, i) => {
        const m = mem[i];
        const has = m.allocated !== null || m.rss !== null || m.cgroupCurrent !== null;
        const gap = memoryGap(m);
        return {
          timeMs: t.snapshots[i].timeMs,
          timeSource: t.snapshots[i].source,
          memory: has
            ? {
                allocated: m.allocated,
                active: m.active,
                resident: m.resident,
                rss: m.rss,
                rssSource: m.rssSource,
                cgroupCurrent: m.cgroupCurrent,
                cgroupMax: m.cgroupMax,
                gap: gap ? { gap: gap.gap, dominant: gap.dominant, message: gap.message, parts: gap.parts } : null,
              }
            : null,
        };
      }),
    };
  });
}
