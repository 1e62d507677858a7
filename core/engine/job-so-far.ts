// The job so far of a load, sent as what changed since the last update: the processes read whole since (and any
// whose summary changed with the others: its place in the fork tree, its host label), the rest of the summary, and
// the processes still being read only when they are not the last update's less those read since; the load's end is
// one more such update, to the full job. The whole job so far was ~8.6 KB a process (~8.6 MB at 1,000 processes)
// per update, and its decoding the page's longest task while loading; the window puts each update together from the
// last (applyJobSoFar).

import type { ProcessSeries } from '../model/model.js';
import type { JobSummary, ProcessSummary } from '../query/job-summary.js';

export interface JobSoFarDelta {
  /** 0 for a load's first update (applied to nothing), then one more each update: each applies to the one before */
  seq: number;
  /** the job so far's summary but its processes and warnings */
  rest: Omit<JobSummary, 'processes' | 'warnings'>;
  /**
   * the warnings: the first `kept` of the last update's, then `added`. They mostly grow as dumps are read, and a
   * warning a dump (stacks the profiler could not unwind, truncation) was ~5 MB at 10,000 dumps, sent again at each
   * update and at the end
   */
  warnings: { kept: number; added: JobSummary['warnings'] };
  /** how many processes are read whole: they come first, the pending ones after */
  read: number;
  /** the processes read whole that are new or changed since the last update (by their `index`) */
  changed: ProcessSummary[];
  /** the processes still being read (dump heads), in order; null: the last update's, less those read since */
  pending: ProcessSummary[] | null;
}

/**
 * Whether two summaries' values read the same once sent (JSON: undefined members as absent). A process's summary is
 * sent again when it differs from what was sent of it last: while loading, its place in the tree or host label as
 * others come (its snapshots are the same array from one update to the next, so compared at once); at the load's
 * end, anything the full job adds (RSS from logs on its snapshots, symbols).
 */
function sameSent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => sameSent(x, bs[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  // counted rather than listed: at the load's end this walks every process's snapshots (no arrays made)
  let n = 0;
  for (const k in ao) {
    const x = ao[k];
    if (x === undefined) continue;
    if (!sameSent(x, bo[k])) return false;
    n++;
  }
  for (const k in bo) if (bo[k] !== undefined) n--;
  return n === 0;
}

/**
 * The load's updates as deltas: called with each job so far's summary (QuerySession.showPartial) and the processes
 * read whole it summarizes (the first `processes.length` of it), in order; and last with the full job's summary
 * and its processes, which sends what the full job changed or adds (its post-mortem, verdict, warnings: `rest`)
 * rather than the whole of it (~8 MB at 1,000 processes, ~150 ms to encode and the page's longest task to decode).
 */
export function jobSoFarDeltas(): (summary: JobSummary, processes: readonly ProcessSeries[]) => JobSoFarDelta {
  let seq = 0;
  // what was sent of each process read whole, by index
  const sent: ProcessSummary[] = [];
  let pendingKeys: string[] = [];
  let sentWarnings: JobSummary['warnings'] = [];
  return (summary, processes) => {
    const read = processes.length;
    const changed: ProcessSummary[] = [];
    for (let i = 0; i < read; i++) {
      const s = summary.processes[i];
      if (i < sent.length && sameSent(sent[i], s)) continue;
      sent[i] = s;
      changed.push(s);
    }
    sent.length = read;
    const pending = summary.processes.slice(read);
    const keys = pending.map((p) => p.key);
    const readKeys = new Set(processes.map((p) => p.key));
    const left = pendingKeys.filter((k) => !readKeys.has(k));
    const same = seq > 0 && left.length === keys.length && left.every((k, i) => k === keys[i]);
    pendingKeys = keys;
    const { processes: _all, warnings, ...rest } = summary;
    // the longest start the last update sent: the rest is sent
    let kept = 0;
    while (kept < sentWarnings.length && kept < warnings.length && sameSent(sentWarnings[kept], warnings[kept])) kept++;
    sentWarnings = warnings;
    return {
      seq: seq++,
      rest,
      warnings: { kept, added: warnings.slice(kept) },
      read,
      changed,
      pending: same ? null : pending,
    };
  };
}

/** The job so far after `d`, from the one before it (null for a load's first); null when `d` does not apply to it. */
export function applyJobSoFar(before: JobSummary | null, d: JobSoFarDelta): JobSummary | null {
  if (d.seq > 0 && !before) return null;
  const was = d.seq === 0 || !before ? [] : before.warnings;
  if (d.warnings.kept > was.length) return null;
  const warnings = was.slice(0, d.warnings.kept).concat(d.warnings.added);
  const prev = d.seq === 0 || !before ? [] : before.processes;
  let prevRead = prev.findIndex((p) => p.pending);
  if (prevRead < 0) prevRead = prev.length;
  const processes: (ProcessSummary | undefined)[] = prev.slice(0, Math.min(prevRead, d.read));
  processes.length = d.read;
  for (const c of d.changed) processes[c.index] = c;
  const read: ProcessSummary[] = [];
  for (const p of processes) {
    if (!p) return null;
    read.push(p);
  }
  let pending = d.pending;
  if (!pending) {
    const readKeys = new Set(read.map((p) => p.key));
    pending = prev
      .slice(prevRead)
      .filter((p) => !readKeys.has(p.key))
      .map((p, k) => (p.index === d.read + k ? p : { ...p, index: d.read + k }));
  }
  return { ...d.rest, warnings, processes: read.concat(pending) };
}
