// RSS logs (core/formats/rss-log.ts) matched to the job's processes by pid and placed on their time axis,
// for dumps that carry no context of their own. A log applies to the processes whose dumps lie in its
// folder or below it (pids repeat across the nodes of a job, each node's files in their own folder).

import type { RssLog } from '../formats/rss-log.js';
import type { LoadWarning, ProcessSeries } from '../model/model.js';
import { processIdentity } from '../model/memory-context.js';
import { seriesTimes } from '../model/snapshot-time.js';

export interface ProcessRssLog {
  file: string;
  /** wall clock, ms since the epoch, increasing */
  timeMs: number[];
  /** bytes */
  rss: number[];
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}
const under = (file: string, dir: string): boolean => dir === '' || file === dir || file.startsWith(dir + '/');

/** Sets ProcessSeries.rssLog from the logs given; problems become warnings naming the log file. */
export function attachRssLogs(
  processes: ProcessSeries[],
  logs: readonly { file: string; log: RssLog }[],
  warnings: LoadWarning[],
): void {
  for (const { file, log } of logs) {
    for (const p of log.problems.slice(0, 10)) warnings.push({ file, line: p.line, message: `RSS log: ${p.message}` });
    const dir = dirOf(file);
    const candidates = processes.filter((p) => p.snapshots.length > 0 && under(p.snapshots[0].file, dir));
    const anyPid = log.samples.some((s) => s.pid !== null);
    let matched = 0;
    for (const p of candidates) {
      let rows = log.samples.filter((s) => (anyPid ? s.pid === p.pid : true));
      if (!anyPid && candidates.length > 1) {
        warnings.push({
          file,
          message: `RSS log has no pid column and ${candidates.length} processes share its folder: not used`,
        });
        break;
      }
      if (rows.length === 0) continue;
      if (log.timeKind === 'since-start') {
        const start = processIdentity(p)?.startMs ?? null;
        if (start === null) {
          warnings.push({
            file,
            message: `RSS log times are seconds since start, but pid ${p.pid ?? '?'} has no recorded start time (no capture context): not aligned`,
          });
          continue;
        }
        rows = rows.map((r) => ({ ...r, timeMs: start + r.timeMs }));
      }
      rows = [...rows].sort((a, b) => a.timeMs - b.timeMs);
      p.rssLog = { file, timeMs: rows.map((r) => r.timeMs), rss: rows.map((r) => r.rss) };
      matched++;
    }
    if (matched === 0 && candidates.length > 0)
      warnings.push({ file, message: 'RSS log matches no process of the job (by pid, in its folder)' });
  }
}

/** Slack for matching a log sample to a dump: twice the log's median interval, at least this. */
const MIN_MATCH_MS = 1000;
/**
 * ... and at most this: a sample further than 10 minutes from a dump does not say its RSS (two samples
 * years apart would otherwise make a median gap that matches anything).
 */
export const MAX_MATCH_MS = 10 * 60 * 1000;

/** RSS at each snapshot from the process's log (nearest sample, close enough in time), else null. */
export function rssFromLog(p: Pick<ProcessSeries, 'snapshots' | 'rssLog'>): (number | null)[] {
  const log = p.rssLog;
  const times = seriesTimes(p).snapshots;
  if (!log || log.timeMs.length === 0) return times.map(() => null);
  const gaps = log.timeMs
    .slice(1)
    .map((t, i) => t - log.timeMs[i])
    .sort((a, b) => a - b);
  const slack = Math.min(MAX_MATCH_MS, Math.max(MIN_MATCH_MS, 2 * (gaps.length ? gaps[gaps.length >> 1] : 0)));
  return times.map((t) => {
    if (t.timeMs === null) return null;
    // binary search for the first sample at or after t
    let lo = 0;
    let hi = log.timeMs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (log.timeMs[mid] < (t.timeMs as number)) lo = mid + 1;
      else hi = mid;
    }
    let best = -1;
    for (const i of [lo - 1, lo]) {
      if (i < 0 || i >= log.timeMs.length) continue;
      if (
        best < 0 ||
        Math.abs(log.timeMs[i] - (t.timeMs as number)) < Math.abs(log.timeMs[best] - (t.timeMs as number))
      )
        best = i;
    }
    return best >= 0 && Math.abs(log.timeMs[best] - (t.timeMs as number)) <= slack ? log.rss[best] : null;
  });
}
