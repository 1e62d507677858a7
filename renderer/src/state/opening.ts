// Which process a job opens on, and why (pure; the window says the reason beside the process's name). The
// process that holds suspect #1 (the job-wide ranking's top stack that scores beyond noise), else the one that was
// killed (its last dump cut, or no final dump while the others wrote theirs), else the one that grew the most. The
// largest process is often the learner or the parameter server, which neither leaks nor dies.

import type { ProcessSummary, SuspectsResult } from '../lib/protocol.ts';

export interface Opening {
  proc: number;
  reason: string;
}

export function openingProcess(procs: readonly ProcessSummary[], suspects: SuspectsResult | null): Opening | null {
  const live = procs.filter((p) => !p.pending);
  if (live.length === 0) return null;
  const top = suspects?.rows.find((r) => !r.withinNoise && r.score > 0);
  const holder = top?.members.find((m) => live.some((p) => p.index === m.proc));
  if (top && holder) {
    const others = top.processCount > 1 ? ` (the first of its ${top.processCount} holders by score)` : '';
    return { proc: holder.proc, reason: `holds suspect #1, ${top.label}${others}` };
  }
  const killed =
    suspects?.processes.find((v) => v.killed && live.some((p) => p.index === v.proc))?.proc ??
    live.find((p) => p.endedWithoutFinalDump)?.index;
  if (killed !== undefined) return { proc: killed, reason: 'was killed (no stack scores beyond sampling noise)' };
  let best = live[0];
  for (const p of live) if (p.lastLiveBytes - p.firstLiveBytes > best.lastLiveBytes - best.firstLiveBytes) best = p;
  return { proc: best.index, reason: 'grew the most (no stack scores and none was killed)' };
}

/**
 * The stack the stack panel shows while nothing is selected: the focused process's highest row of the job-wide
 * ranking (suspect #1's stack in the process the job opens on), its stack id there; null when it holds none.
 */
export function defaultStack(suspects: Pick<SuspectsResult, 'rows'>, proc: number): number | null {
  for (const r of suspects.rows) {
    const m = r.members.find((x) => x.proc === proc);
    if (m) return m.stackId;
  }
  return null;
}
