// The kill and the limit as every chart draws them (timeline, memory chart): one label for who killed the
// process and when, one place on the time axis for it, and one rule for whether the limit line is on the chart's
// scale — so both charts say the same thing at the same x.

import type { KillMark } from '../../../core/query/postmortem-view.ts';
import type { KillBy } from '../../../core/stats/kill-evidence.ts';
import { formatUtc, type TimeAxis } from './time-axis.ts';

/** who killed it, as the marker names it */
export const KILLED_BY: Record<KillBy, string> = {
  kernel: 'the kernel (OOM killer)',
  cgroup: 'the cgroup (memory.max)',
  ray: 'Ray (memory monitor)',
  kubernetes: 'Kubernetes (OOMKilled)',
  slurm: 'SLURM (oom_kill event)',
  inferred: 'inferred (no final dump)',
};

/** short form beside the marker */
const SHORT: Record<KillBy, string> = {
  kernel: 'kernel',
  cgroup: 'cgroup',
  ray: 'Ray',
  kubernetes: 'Kubernetes',
  slurm: 'SLURM',
  inferred: 'inferred',
};

/** The marker's own text ("killed: kernel 14:03:11"), and its tooltip (who, when, how the time was placed). */
export function killLabel(k: KillMark): { text: string; title: string } {
  const time = k.atMs !== null ? formatUtc(k.atMs) : null;
  return {
    text: `killed: ${SHORT[k.by]}${time ? ` ${time.slice(11, 19)}` : ''}`,
    title: [
      `pid ${k.pid ?? '?'} killed by ${KILLED_BY[k.by]}${time ? ` at ${time}` : ' (no time given)'}`,
      k.timeFrom ? `time: ${k.timeFrom}` : '',
      k.evidence
        ? `${k.evidence.file}${k.evidence.line !== null ? `:${k.evidence.line}` : ''}: ${k.evidence.text}`
        : '',
    ]
      .filter((t) => t !== '')
      .join('\n'),
  };
}

/** wall-clock moments the axes must reach: the kill */
export function killMoments(k: KillMark | null | undefined): number[] {
  return k && k.atMs !== null ? [k.atMs] : [];
}

/**
 * The kill's x: its time on a wall-clock axis; else (sequence axis, or no time) just after the killed process's
 * last dump, where its series stops. Null when neither is known.
 */
export function killX(
  axis: TimeAxis,
  k: KillMark,
  lastDump: { index: number; seq: number | null; timeMs: number | null } | null,
): number | null {
  if (axis.kind === 'wall' && k.atMs !== null) return axis.at(k.atMs);
  return lastDump ? axis.x(lastDump) : null;
}

/**
 * A limit far above what the chart shows would flatten every line to the floor: it is on the scale only when it
 * is at most this many times the chart's largest value; above that the chart says where it is instead.
 */
export const LIMIT_ON_SCALE = 4;

export function limitOnScale(limit: number | null, peak: number): boolean {
  return limit !== null && limit > 0 && limit <= LIMIT_ON_SCALE * Math.max(1, peak);
}
