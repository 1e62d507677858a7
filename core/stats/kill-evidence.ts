// Kill evidence as data: the kills the kernel, the cgroup, Ray, Kubernetes or SLURM reported, each checked
// against the dumps (the pid has dumps, the name agrees, the process did not dump after its death) and
// placed on the dumps' wall clock; the signal lines (PyTorch, the shell) that say a process was killed
// without saying why; and the list of logs read, with what each gave. Bad evidence is a warning, never a fate.

import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import type { OomKill } from '../formats/kernel-oom.js';
import { LocalTimeNote } from '../formats/kernel-oom.js';
import { combineCgroupFiles, type CgroupMemory } from '../formats/cgroup-memory.js';
import type { JobLogEvent } from '../formats/job-log.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { processIdentity } from '../model/memory-context.js';

export type EvidenceSource =
  | 'kernel'
  | 'cgroup'
  | 'ray'
  | 'kubernetes'
  | 'slurm'
  | 'pytorch'
  | 'shell'
  | 'watchdog'
  | 'launcher'
  | 'torchrun'
  | 'unknown'
  | 'dumps';
export type KillBy = 'kernel' | 'cgroup' | 'ray' | 'kubernetes' | 'slurm' | 'watchdog' | 'inferred';

/** How a source is named beside its quote: `unknown` is a line of a format not known. */
export function evidenceSourceLabel(source: EvidenceSource): string {
  return source === 'unknown' ? 'format not known' : source;
}

export interface Evidence {
  source: EvidenceSource;
  /** the file the evidence is in (the dump, for evidence from the dumps) */
  file: string;
  line: number | null;
  text: string;
}

export interface KillRecord {
  pid: number | null;
  by: KillBy;
  /** index into job.processes; null when no process of the dumps is this pid */
  processIndex: number | null;
  comm: string | null;
  /** wall clock, ms since the epoch; null when it cannot be placed */
  atMs: number | null;
  /** how atMs was found */
  timeFrom: string | null;
  /** anon-rss + file-rss + shmem-rss at the kill (kernel) */
  rssBytes: number | null;
  anonRssBytes: number | null;
  limitBytes: number | null;
  usageBytes: number | null;
  scope: 'memcg' | 'global' | null;
  /** the process whose allocation invoked the OOM killer (kernel), when the report names it */
  invokedByPid: number | null;
  evidence: Evidence[];
}

export interface LogRead {
  file: string;
  kind: 'kernel-log' | 'cgroup' | 'job-log' | 'smaps-rollup';
  /** what it gave, in words */
  gave: string;
}

export interface KillEvidence {
  kills: KillRecord[];
  /**
   * killed-by-signal lines by pid (PyTorch, a shell, a launcher's exit code −9, torchrun's "Signal 9", lines of a
   * format not known with kill words): a process was killed, the reason not said
   */
  signals: Map<number, Evidence[]>;
  /** stopped by the job (a launcher's SIGTERM, exit code −15, torchrun's "closing signal SIGTERM") by pid */
  teardowns: Map<number, Evidence[]>;
  /** a launcher's exit code of a process that ended by itself (no signal), by pid */
  exits: Map<number, { code: number; evidence: Evidence }>;
  /** OOM kills reported without a pid (SLURM's count, Kubernetes' OOMKilled, Ray's summary, the cgroup's oom_kill) */
  unattributed: { by: KillBy; count: number | null; atMs: number | null; evidence: Evidence }[];
  cgroup: CgroupMemory | null;
  logsRead: LogRead[];
  /** wall − monotonic of the dumps' clocks (to place dmesg's seconds since boot), and how it was found */
  clock: { offsetMs: number; note: string } | null;
  warnings: LoadWarning[];
}

/** Two reports of one kill (dmesg and dmesg -T of the same run) are within this of each other. */
const SAME_KILL_MS = 2000;
/** Slack between the dumps' clock and a log's before a kill "before the first dump" is a contradiction. */
export const CLOCK_SLACK_MS = 2000;
/** A log's wall clock further than this from the dumps' monotonic placement is a skew worth saying. */
const SKEW_WARN_MS = 2000;

const mib = (b: number): string => `${(b / 1048576).toFixed(b < 10 * 1048576 ? 1 : 0)} MiB`;

/** wall − monotonic over every dump with both clocks (the median: one odd dump does not move it). */
export function dumpClockOffset(processes: readonly ProcessSeries[]): { offsetMs: number; note: string } | null {
  const d: number[] = [];
  for (const p of processes)
    for (const s of p.snapshots) {
      const c = s.context;
      if (c && c.timeMonoMs !== null) d.push(c.timeRealMs - c.timeMonoMs);
    }
  if (d.length === 0) return null;
  d.sort((a, b) => a - b);
  return {
    offsetMs: d[d.length >> 1],
    note: `dmesg's seconds since boot placed on the wall clock by the dumps' monotonic and real times (${d.length} dumps)`,
  };
}

function wallTimes(p: ProcessSeries): number[] | null {
  const t = seriesTimes(p);
  return t.axis === 'wall' ? t.snapshots.map((s) => s.timeMs as number) : null;
}

/** The process a pid names, checked: name and times must agree; else null with a warning saying why. */
function matchProcess(
  job: Pick<Job, 'processes'>,
  pid: number,
  comm: string | null,
  atMs: number | null,
  what: string,
  file: string,
  line: number | null,
  warnings: LoadWarning[],
): number | null {
  const w = (message: string): void => {
    warnings.push({ file, ...(line !== null ? { line } : {}), message });
  };
  const cands = job.processes.map((p, i) => ({ p, i })).filter(({ p }) => p.pid === pid);
  if (cands.length === 0) {
    w(`${what} names pid ${pid}${comm ? ` (${comm})` : ''}, which has no dumps here: no fate from it`);
    return null;
  }
  const ok = cands.filter(({ p }) => {
    const t = wallTimes(p);
    if (atMs === null || !t || t.length === 0) return true;
    return t[0] <= atMs + CLOCK_SLACK_MS && t[t.length - 1] <= atMs + CLOCK_SLACK_MS;
  });
  if (ok.length === 0) {
    const t = wallTimes(cands[0].p)!;
    const before = atMs! < t[0];
    w(
      before
        ? `${what} of pid ${pid} is ${Math.round((t[0] - atMs!) / 1000)} s before that process's first dump: another process with the same pid (an earlier run, or the pid reused)? No fate from it`
        : `${what} of pid ${pid} is ${Math.round((t[t.length - 1] - atMs!) / 1000)} s before that process's last dump (it dumped after it): not this process, or the clocks disagree? No fate from it`,
    );
    return null;
  }
  if (ok.length > 1) {
    w(`${what} names pid ${pid}, which ${ok.length} processes of the dumps had (different nodes?): no fate from it`);
    return null;
  }
  const p = ok[0].p;
  const t = wallTimes(p);
  const last = p.snapshots[p.snapshots.length - 1];
  if (atMs !== null && t && last?.trigger === 'final' && atMs > t[t.length - 1] + CLOCK_SLACK_MS) {
    w(
      `${what} of pid ${pid} is ${Math.round((atMs - t[t.length - 1]) / 1000)} s after its final dump (it exited): another process with the same pid? No fate from it`,
    );
    return null;
  }
  const id = processIdentity(p);
  // the kernel's comm is at most 15 bytes (TASK_COMM_LEN)
  if (comm && id?.comm && comm.slice(0, 15) !== id.comm.slice(0, 15)) {
    w(
      `${what} names pid ${pid} as "${comm}", but that process is "${id.comm}" in its dumps: the pid reused? No fate from it`,
    );
    return null;
  }
  return ok[0].i;
}

function kernelKillTime(
  k: OomKill,
  clock: KillEvidence['clock'],
  file: string,
  warnings: LoadWarning[],
): { atMs: number | null; from: string | null } {
  const fromBoot = k.bootS !== null && clock ? k.bootS * 1000 + clock.offsetMs : null;
  if (fromBoot !== null && k.wallMs !== null && Math.abs(fromBoot - k.wallMs) > SKEW_WARN_MS)
    warnings.push({
      file,
      line: k.line,
      message: `clock skew: the log's wall clock says ${new Date(k.wallMs).toISOString()}, the dumps' clocks place the kill at ${new Date(fromBoot).toISOString()} (${((k.wallMs - fromBoot) / 1000).toFixed(1)} s apart; ${LocalTimeNote}): the dumps' placement is used`,
    });
  if (fromBoot !== null) return { atMs: fromBoot, from: clock!.note };
  if (k.wallMs !== null) return { atMs: k.wallMs, from: `the log's own wall clock (${LocalTimeNote})` };
  return { atMs: null, from: 'dmesg seconds since boot, and no dump recorded the clocks to place them' };
}

export function killEvidence(job: Pick<Job, 'processes' | 'evidence'>): KillEvidence {
  const ev = job.evidence;
  const warnings: LoadWarning[] = [];
  const logsRead: LogRead[] = [];
  const clock = dumpClockOffset(job.processes);
  const kills: KillRecord[] = [];
  const signals = new Map<number, Evidence[]>();
  const teardowns = new Map<number, Evidence[]>();
  const exits: KillEvidence['exits'] = new Map();
  const unattributed: KillEvidence['unattributed'] = [];
  if (!ev) return { kills, signals, teardowns, exits, unattributed, cgroup: null, logsRead, clock, warnings };

  for (const { file, log } of ev.kernel) {
    for (const k of log.kills) {
      const { atMs, from } = kernelKillTime(k, clock, file, warnings);
      const e: Evidence = { source: 'kernel', file, line: k.line, text: k.text };
      const same = kills.find(
        (x) =>
          x.by === 'kernel' &&
          x.pid === k.pid &&
          (x.atMs === null || atMs === null || Math.abs(x.atMs - atMs) <= SAME_KILL_MS),
      );
      if (same) {
        same.evidence.push(e); // the same kill in another copy of the log (dmesg and dmesg -T)
        // dmesg's microseconds placed by the dumps' clocks beat dmesg -T's whole seconds
        if (k.bootS !== null && clock && atMs !== null) {
          same.atMs = atMs;
          same.timeFrom = from;
        }
        continue;
      }
      const rss = [k.anonRssBytes, k.fileRssBytes, k.shmemRssBytes];
      kills.push({
        pid: k.pid,
        by: 'kernel',
        processIndex: matchProcess(job, k.pid, k.comm, atMs, 'the kernel OOM kill', file, k.line, warnings),
        comm: k.comm,
        atMs,
        timeFrom: from,
        rssBytes: rss.every((x) => x !== null) ? rss.reduce((a, b) => a! + b!, 0) : k.anonRssBytes,
        anonRssBytes: k.anonRssBytes,
        limitBytes: k.memcg?.limitBytes ?? null,
        usageBytes: k.memcg?.usageBytes ?? null,
        scope: k.scope,
        invokedByPid: k.invokedBy?.pid ?? null,
        evidence: [e],
      });
    }
    const n = log.kills.length;
    logsRead.push({
      file,
      kind: 'kernel-log',
      gave:
        n === 0
          ? `a kernel log (${log.form}) with an OOM report but no kill line`
          : `kernel log (${log.form}): ${n} OOM kill${n > 1 ? 's' : ''} (pid ${log.kills.map((k) => k.pid).join(', ')})`,
    });
  }

  const cg = ev.cgroup.length > 0 ? combineCgroupFiles(ev.cgroup) : null;
  for (const { file, cg: f } of ev.cgroup) {
    const v = f.values;
    const gave =
      f.kind === 'memory.oom_control' || f.kind === 'memory.events'
        ? `cgroup v${f.version} ${f.kind}: oom_kill ${v.oom_kill ?? '?'}`
        : f.kind === 'memory.stat'
          ? `cgroup v${f.version} memory.stat (${Object.keys(v).length} counters)`
          : // a count of charges refused at the limit, not a size
            f.kind === 'memory.failcnt'
            ? `cgroup v${f.version} memory.failcnt: ${v.value ?? '?'} charge${v.value === 1 ? '' : 's'} refused at the limit`
            : `cgroup v${f.version} ${f.kind}: ${v.value === null ? 'no limit' : mib(v.value)}`;
    logsRead.push({ file, kind: 'cgroup', gave });
  }

  const jobPids = new Set(job.processes.map((p) => p.pid).filter((p): p is number => p !== null));
  const add = (m: Map<number, Evidence[]>, pid: number, e: Evidence): void => {
    const list = m.get(pid) ?? [];
    if (!list.some((x) => x.file === e.file && x.line === e.line)) list.push(e);
    m.set(pid, list);
  };
  for (const { file, log } of ev.jobLogs) {
    const by = new Map<string, number>();
    for (const e of log.events) {
      // a line of a format not known counts only when one of its numbers is a pid of the job
      const pids = e.kind === 'unknown' ? e.pids.filter((p) => jobPids.has(p)) : e.pids;
      if (e.kind === 'unknown' && pids.length === 0) continue;
      by.set(e.source, (by.get(e.source) ?? 0) + 1);
      const evd: Evidence = { source: e.source, file, line: e.line, text: e.text };
      const what = e.kind === 'unknown' ? 'a line of a format not known' : `the ${e.source} line`;
      if (e.kind === 'signal' || e.kind === 'teardown' || e.kind === 'exit' || e.kind === 'unknown') {
        for (const pid of pids) {
          if (matchProcess(job, pid, null, e.atMs, what, file, e.line, warnings) === null) continue;
          if (e.kind === 'signal') add(signals, pid, evd);
          else if (e.kind === 'teardown') add(teardowns, pid, evd);
          else if (e.kind === 'exit') {
            if (!exits.has(pid)) exits.set(pid, { code: e.exitCode ?? 0, evidence: evd });
          } else add(stopWordsOnly(e.text) ? teardowns : signals, pid, evd);
        }
        continue;
      }
      if ((e.source === 'ray' || e.source === 'watchdog') && e.pids.length > 0) {
        for (const pid of e.pids) addLogKill(job, kills, e.source, pid, e, evd, warnings);
        continue;
      }
      unattributed.push({ by: byOf(e), count: e.count, atMs: e.atMs, evidence: evd });
    }
    const roles = new Set(log.roles.filter((r) => jobPids.has(r.pid)).map((r) => r.pid)).size;
    const lines = [...by.entries()].map(
      ([s, n]) =>
        `${n} ${s === 'unknown' ? 'line' : `${s} line`}${n > 1 ? 's' : ''}${s === 'unknown' ? ' of a format not known' : ''}`,
    );
    if (roles > 0) lines.push(`the roles of ${roles} process${roles > 1 ? 'es' : ''}`);
    // a file read as a kernel log too (a node's journal) is listed once, with what each reader gave
    const listed = logsRead.find((l) => l.file === file);
    if (listed) {
      if (lines.length > 0) listed.gave += `; ${lines.join(', ')}`;
    } else
      logsRead.push({
        file,
        kind: 'job-log',
        gave:
          lines.length === 0
            ? 'a job log without kill lines naming a process of the job'
            : `job log: ${lines.join(', ')}`,
      });
  }
  for (const { file, rollup } of ev.smaps) {
    const pids = [...new Set(rollup.samples.map((s) => s.pid).filter((p): p is number => p !== null))];
    logsRead.push({
      file,
      kind: 'smaps-rollup',
      gave: `smaps_rollup: ${rollup.samples.length} samples of pid ${pids.join(', ') || '?'}`,
    });
  }

  // the cgroup's own count of kills: support for the kernel's lines, or the only evidence
  if (cg && cg.oomKills !== null && cg.oomKills > 0) {
    const file = cg.files.find((f) => f.kind === 'memory.oom_control' || f.kind === 'memory.events')!.file;
    const e: Evidence = { source: 'cgroup', file, line: null, text: `oom_kill ${cg.oomKills}` };
    const named = kills.filter((k) => k.by === 'kernel');
    if (named.length > 0) {
      for (const k of named) k.evidence.push(e);
      if (named.length !== cg.oomKills)
        warnings.push({
          file,
          message: `the cgroup counted ${cg.oomKills} OOM kill(s), the kernel log names ${named.length}: the log may be cut, or from another cgroup`,
        });
    } else unattributed.push({ by: 'cgroup', count: cg.oomKills, atMs: null, evidence: e });
  }
  for (const k of kills) {
    k.limitBytes ??= cg?.limitBytes ?? null;
  }
  const distinct = kills.filter((k) => k.processIndex !== null);
  if (distinct.length > 1)
    warnings.push({
      file: distinct[1].evidence[0].file,
      ...(distinct[1].evidence[0].line !== null ? { line: distinct[1].evidence[0].line } : {}),
      message: `${distinct.length} kills (pid ${distinct.map((k) => k.pid).join(', ')}): each is marked; the verdict names the first`,
    });
  kills.sort((a, b) => (a.atMs ?? Infinity) - (b.atMs ?? Infinity));
  return { kills, signals, teardowns, exits, unattributed, cgroup: cg, logsRead, clock, warnings };
}

/** A line of a format not known that says only that a process was stopped (SIGTERM, terminated): teardown. */
function stopWordsOnly(text: string): boolean {
  return (
    /\b(?:SIGTERM|SIGINT|SIGHUP|terminat\w*|closing signal|stopp\w*)\b/i.test(text) &&
    !/\b(?:SIGKILL|kill(?:ed|ing|s)?|oom|out of memory|signal 9)\b/i.test(text)
  );
}

function byOf(e: JobLogEvent): KillBy {
  return e.source === 'kubernetes'
    ? 'kubernetes'
    : e.source === 'slurm'
      ? 'slurm'
      : e.source === 'ray'
        ? 'ray'
        : 'inferred';
}

/** A kill a job's own log names by pid: Ray's memory monitor, the job's memory watchdog. */
function addLogKill(
  job: Pick<Job, 'processes'>,
  kills: KillRecord[],
  by: 'ray' | 'watchdog',
  pid: number,
  e: JobLogEvent,
  evd: Evidence,
  warnings: LoadWarning[],
): void {
  const same = kills.find((k) => k.by === by && k.pid === pid);
  if (same) {
    same.evidence.push(evd);
    return;
  }
  const what = by === 'ray' ? "Ray's OOM kill" : "the watchdog's kill";
  kills.push({
    pid,
    by,
    processIndex: matchProcess(job, pid, null, e.atMs, what, evd.file, evd.line, warnings),
    comm: e.name,
    atMs: e.atMs,
    timeFrom: e.atMs !== null ? "the log line's time" : null,
    rssBytes: e.rssBytes ?? null,
    anonRssBytes: null,
    limitBytes: e.limitBytes ?? null,
    usageBytes: e.jobBytes ?? null,
    scope: null,
    invokedByPid: null,
    evidence: [evd],
  });
}
