// Time to a memory limit as people read it: "64 MiB left: 14 s [9 s–31 s], 7.5 dumps [4.8–16] at the end
// rate (95 % interval)". One text for the CLI's `postmortem --limit`, the app and the report, over the one
// projection (postmortem.ts project).

import { formatBytes } from '../model/units.js';
import type { Projection } from './postmortem.js';

/** Seconds as the shortest readable duration; "never" for a bound that does not grow. */
export function durationText(s: number | null): string {
  if (s === null) return '?';
  if (!Number.isFinite(s)) return 'never';
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

function dumps(x: number | null): string {
  if (x === null) return '?';
  if (!Number.isFinite(x)) return 'never';
  return x < 10 ? x.toFixed(1) : String(Math.round(x));
}

export function projectionText(p: Projection): string {
  if (p.headroomBytes === 0) return 'at the limit';
  if (p.headroomBytes < 0) return `already ${formatBytes(-p.headroomBytes)} over the limit`;
  const left = `${formatBytes(p.headroomBytes)} left: `;
  if (p.snapshots === null || !Number.isFinite(p.snapshots)) {
    // not growing at the end: say so, and what the fastest bound of the rate would give
    const fast = p.secondsLo !== null && Number.isFinite(p.secondsLo) ? `${durationText(p.secondsLo)} (` : '';
    const fastDumps =
      p.snapshotsLo !== null && Number.isFinite(p.snapshotsLo)
        ? `${fast}${dumps(p.snapshotsLo)} dumps${fast ? ')' : ''}`
        : '';
    return `${left}not growing at the end${fastDumps ? `; at the fastest bound of the 95 % interval in ${fastDumps}` : ''}`;
  }
  const byDumps = `${dumps(p.snapshots)} dumps [${dumps(p.snapshotsLo)}–${dumps(p.snapshotsHi)}]`;
  const byTime =
    p.seconds !== null
      ? `${durationText(p.seconds)} [${durationText(p.secondsLo)}–${durationText(p.secondsHi)}], `
      : '';
  return `${left}${byTime}${byDumps} at the end rate (95 % interval)`;
}
