// What the capture library recorded with each dump, as the CLI's summary text shows it: snapshot times, process
// identity and tree, allocator / RSS / cgroup counters and the RSS − allocated gap. The figures are the engine's
// (core/query/summary-listing.ts, the same as `summary --json` lists); this is their text.

import { formatCmdline } from '../../core/formats/dump-context.js';
import type { SummaryProcess } from '../../core/query/summary-listing.js';
import { formatBytes } from './format.js';

/** Text lines under a process's title: who it was, its parent, its limit. */
export function processContextText(f: SummaryProcess, processes: readonly SummaryProcess[]): string[] {
  const out: string[] = [];
  // an identity is read from the capture context of a dump
  if (f.snapshots.some((s) => s.context !== null)) {
    const parent = f.parentKey ? processes.find((q) => q.key === f.parentKey) : undefined;
    out.push(
      `${f.name ?? f.key}${f.hostname ? ` on ${f.hostname}` : ''}${f.startMs !== null ? `, started ${new Date(f.startMs).toISOString()}` : ''}` +
        // a capture without a process (a PyTorch snapshot) has no parent to name
        (f.ppid !== null || parent || f.pid !== null
          ? `, parent ${f.ppid ?? '?'}${parent ? ` (${parent.name ?? parent.key} in this job)` : ''}`
          : ''),
    );
    if (f.cmdline) out.push(`cmdline: ${formatCmdline(f.cmdline)}`);
    if (f.nsPids && f.nsPids.length > 1)
      out.push(`pid in each pid namespace, outermost first: ${f.nsPids.join(', ')} (host pid ${f.hostPid})`);
    else if (f.pidNamespace !== null && f.hostPid === null)
      out.push(`in pid namespace ${f.pidNamespace} with a /proc of its own: its host pid was not visible to it`);
  }
  if (f.limitBytes !== null) out.push(`cgroup memory.max: ${formatBytes(f.limitBytes)}`);
  const last = f.snapshots[f.snapshots.length - 1];
  if (f.rssLog) out.push(`RSS log: ${f.rssLog.file} (${f.rssLog.samples} samples)`);
  if (last?.memory.gap) out.push(`last dump: ${last.memory.gap.message}`);
  return out;
}

/** Extra summary-table columns: time, allocated, resident, RSS (blank where unknown). */
export function snapshotContextCells(f: SummaryProcess): { header: string[]; rows: string[][] } {
  const rows = f.snapshots.map(({ timeMs, memory: m }) => {
    const b = (v: number | null): string => (v === null ? '' : formatBytes(v));
    return [
      timeMs === null ? '' : new Date(timeMs).toISOString().replace('T', ' ').replace('Z', ''),
      b(m.allocated),
      b(m.resident),
      b(m.rss),
    ];
  });
  return {
    header: [f.timeSource === 'capture' ? 'time (UTC)' : `time (${f.timeSource}, UTC)`, 'allocated', 'resident', 'RSS'],
    rows,
  };
}
