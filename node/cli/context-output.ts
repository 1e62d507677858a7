// What the capture library recorded with each dump, as the CLI's summary text shows it: snapshot times, process
// identity and tree, allocator / RSS / cgroup counters and the RSS − allocated gap (the JSON is
// core/query/summary-listing.ts's).

import type { Job, ProcessSeries } from '../../core/model/model.js';
import { seriesTimes } from '../../core/model/snapshot-time.js';
import { memoryGap, processIdentity, processLimit, processParents } from '../../core/model/memory-context.js';
import { formatCmdline } from '../../core/formats/dump-context.js';
import { processName } from '../../core/model/process-name.js';
import { seriesMemory } from '../../core/load/series-memory.js';
import { formatBytes } from './format.js';

export function jobParents(job: Job): Map<string, string | null> {
  return processParents(job.processes);
}

/** Text lines under a process's title: who it was, its parent, its limit. */
export function processContextText(p: ProcessSeries, parents: ReadonlyMap<string, string | null>, job: Job): string[] {
  const id = processIdentity(p);
  const out: string[] = [];
  if (id) {
    const parentKey = parents.get(p.key) ?? null;
    const parent = parentKey ? job.processes.find((q) => q.key === parentKey) : undefined;
    out.push(
      `${processName(p) ?? p.key}${id.hostname ? ` on ${id.hostname}` : ''}${id.startMs !== null ? `, started ${new Date(id.startMs).toISOString()}` : ''}` +
        // a capture without a process (a PyTorch snapshot) has no parent to name
        (id.ppid !== null || parent || p.pid !== null
          ? `, parent ${id.ppid ?? '?'}${parent ? ` (${processName(parent) ?? parent.key} in this job)` : ''}`
          : ''),
    );
    if (id.cmdline) out.push(`cmdline: ${formatCmdline(id.cmdline)}`);
    if (id.nsPids && id.nsPids.length > 1)
      out.push(`pid in each pid namespace, outermost first: ${id.nsPids.join(', ')} (host pid ${id.hostPid})`);
    else if (id.pidNamespace !== null && id.hostPid === null)
      out.push(`in pid namespace ${id.pidNamespace} with a /proc of its own: its host pid was not visible to it`);
  }
  const limit = processLimit(p);
  if (limit !== null) out.push(`cgroup memory.max: ${formatBytes(limit)}`);
  const mem = seriesMemory(p);
  const gap = mem.length ? memoryGap(mem[mem.length - 1]) : null;
  if (p.rssLog) out.push(`RSS log: ${p.rssLog.file} (${p.rssLog.timeMs.length} samples)`);
  if (gap) out.push(`last dump: ${gap.message}`);
  return out;
}

/** Extra summary-table columns: time, allocated, resident, RSS (blank where unknown). */
export function snapshotContextCells(p: ProcessSeries): { header: string[]; rows: string[][] } {
  const t = seriesTimes(p);
  const mem = seriesMemory(p);
  const rows = p.snapshots.map((_, i) => {
    const m = mem[i];
    const time = t.snapshots[i].timeMs;
    const b = (v: number | null): string => (v === null ? '' : formatBytes(v));
    return [
      time === null ? '' : new Date(time).toISOString().replace('T', ' ').replace('Z', ''),
      b(m.allocated),
      b(m.resident),
      b(m.rss),
    ];
  });
  return {
    header: [t.source === 'capture' ? 'time (UTC)' : `time (${t.source}, UTC)`, 'allocated', 'resident', 'RSS'],
    rows,
  };
}
