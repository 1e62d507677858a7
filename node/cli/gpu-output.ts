// The lines `summary` adds for a series read from a PyTorch memory snapshot (ProcessSeries.gpu): what the heap
// model has no column for — the caching allocator's reserved, pending-free and inactive bytes, the trace's peaks,
// the cached bytes over time, the out-of-memory events and the annotation spans — on the same wall clock as the
// snapshots. The figures are the engine's (core/query/summary-listing.ts, `summary --json`'s `gpu`).

import type { SummaryProcess } from '../../core/query/summary-listing.js';
import { formatBytes } from '../../core/model/units.js';
import { revealControls } from '../../core/model/display-text.js';

/** The last spans listed one per line (a training run annotates every step). */
const SPANS_SHOWN = 10;

const iso = (ms: number | null): string =>
  ms === null ? 'time unknown' : new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

export function gpuText(p: SummaryProcess): string[] {
  const g = p.gpu;
  if (!g) return [];
  const tl = g.timeline;
  const peakOf = (xs: number[]): { v: number; i: number } =>
    xs.reduce((m, v, i) => (v > m.v ? { v, i } : m), { v: 0, i: -1 });
  const out = [
    `cuda:${g.device}: reserved ${formatBytes(g.reservedBytes)} in ${g.segments} segments; allocated ${formatBytes(g.allocatedBytes)}, pending free ${formatBytes(g.pendingFreeBytes)}, inactive (cached) ${formatBytes(g.inactiveBytes)}`,
  ];
  if (g.source === 'segments') out.push('the recorded state only (torch.cuda.memory_snapshot(): no trace over time)');
  if (tl.allocated.length > 0) {
    const a = peakOf(tl.allocated);
    const timed = tl.timeMs.length > 0 && tl.timeMs[0] > 1e9;
    const span = timed ? ` over ${((tl.timeMs[tl.timeMs.length - 1] - tl.timeMs[0]) / 1000).toFixed(3)} s` : '';
    out.push(
      `trace: ${tl.allocated.length} events${span}; peak allocated ${formatBytes(a.v)}${timed ? ` at ${iso(tl.timeMs[a.i])} UTC` : ''}, peak reserved ${formatBytes(peakOf(tl.reserved).v)}, cached at most ${formatBytes(peakOf(tl.cached).v)}`,
    );
    const peak = g.peakSnapshot !== undefined ? p.snapshots[g.peakSnapshot] : undefined;
    if (peak?.seq != null) out.push(`the peak is snapshot ${peak.seq} (--snapshot ${peak.seq})`);
  }
  for (const o of g.ooms)
    out.push(
      `OUT OF MEMORY at ${iso(o.timeMs)}${o.timeMs === null ? '' : ' UTC'}: ${formatBytes(o.size)} asked, ${formatBytes(o.deviceFree)} free on the device`,
    );
  if (g.spans.length > 0) {
    const open = g.spans.filter((s) => s.endMs === null).map((s) => s.name);
    out.push(
      `${g.spans.length} annotated spans (record_function)${open.length > 0 ? `; open when the snapshot was taken: ${open.slice(0, 5).join(', ')}` : ''}`,
    );
    const shown = g.spans.slice(-SPANS_SHOWN);
    if (shown.length < g.spans.length) out.push(`  … ${g.spans.length - shown.length} earlier spans`);
    for (const s of shown)
      out.push(
        `  ${iso(s.startMs)}  ${s.endMs === null ? 'open' : `${(s.endMs - s.startMs).toFixed(3)} ms`}  ${revealControls(s.name)}`,
      );
  }
  return out;
}
