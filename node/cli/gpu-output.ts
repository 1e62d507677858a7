// The lines `summary` adds for a series read from a PyTorch memory snapshot (ProcessSeries.gpu): what the heap
// model has no column for — the caching allocator's reserved, pending-free and inactive bytes, the trace's peaks,
// the out-of-memory events and the annotation spans — on the same wall clock as the snapshots.

import type { GpuSeriesInfo, ProcessSeries } from '../../core/model/model.js';
import { formatBytes } from '../../core/model/units.js';

const iso = (ms: number | null): string =>
  ms === null ? 'time unknown' : new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

export function gpuText(p: ProcessSeries): string[] {
  const g = p.gpu;
  if (!g) return [];
  const peak = (xs: number[]) => (xs.length > 0 ? Math.max(...xs) : 0);
  const out = [
    `cuda:${g.device}: reserved ${formatBytes(g.reservedBytes)} in ${g.segments} segments; allocated ${formatBytes(g.allocatedBytes)}, pending free ${formatBytes(g.pendingFreeBytes)}, inactive (cached) ${formatBytes(g.inactiveBytes)}`,
    `trace: ${g.timeline.allocated.length} events; peak allocated ${formatBytes(peak(g.timeline.allocated))}, peak reserved ${formatBytes(peak(g.timeline.reserved))}`,
  ];
  for (const o of g.ooms)
    out.push(
      `OUT OF MEMORY at ${iso(o.timeMs)} UTC: ${formatBytes(o.size)} asked, ${formatBytes(o.deviceFree)} free on the device`,
    );
  if (g.spans.length > 0) {
    const open = g.spans.filter((s) => s.endMs === null).map((s) => s.name);
    out.push(
      `${g.spans.length} annotated spans (record_function)${open.length > 0 ? `; open when the snapshot was taken: ${open.slice(0, 5).join(', ')}` : ''}`,
    );
  }
  return out;
}

export function gpuJson(p: ProcessSeries): { gpu?: GpuSeriesInfo } {
  return p.gpu ? { gpu: p.gpu } : {};
}
