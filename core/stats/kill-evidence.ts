// Kill evidence as data: the kills the kernel, the cgroup, Ray, Kubernetes or SLURM reported, each checked
// against the dumps (the pid has dumps, the name agrees, the process did not dump after its death) and
// placed on the dumps' wall clock; the signal lines (PyTorch, the shell) that say a process was killed
// without saying why; and the list of logs read, with what each gave. Bad evidence is a warning, never a fate.
// A log in a host's folder (`node-b/logs/…`) speaks for that host's processes only (pids repeat across nodes).
// The kernel names a process by its host pid: a process in a container is found by the pid the capture recorded
// for it in the host's namespace (NSpid), else inferred from the kill line's memory cgroup, command, time and RSS,
// and the match says so.

import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import type { OomKill } from '../formats/kernel-oom.js';
import { LocalTimeNote } from '../formats/kernel-oom.js';
import { combineCgroupFiles, type CgroupMemory } from '../formats/cgroup-memory.js';
import type { JobLogEvent } from '../formats/job-log.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { processIdentity } from '../model/memory-context.js';
import { jobPidText, logScopes } from '../model/process-host.js';

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

/**
 * How a kill was tied to a process of the dumps: `pid`, the pid it names is the process's; `nspid`, it is the pid the
 * capture recorded for the process in the outermost pid namespace its /proc showed (the host's); `inferred`, no
 * process had that pid where the kernel counts, and one alone agreed with the kill line's memory cgroup, command,
 * time and RSS.
 */
export interface KillMatch {
  by: 'pid' | 'nspid' | 'inferred';
  /** the process's own pid (in its container) */
  processPid: number | null;
  /** how, in words: "by its pid", "by NSpid 4501,16", "matched by cgroup, command, time and RSS: inferred" */
  note: string;
}

export interface KillRecord {
  /** the pid the evidence names (the kernel's: the host's pid) */
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
  /** how the kill was tied to processIndex; null when it was not */
  match: KillMatch | null;
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
   * killed-by-signal lines by process index (PyTorch, a shell, a launcher's exit code −9, torchrun's "Signal 9",
   * lines of a format not known with kill words): a process was killed, the reason not said
   */
  signals: Map<number, Evidence[]>;
  /** stopped by the job (a launcher's SIGTERM, exit code −15, torchrun's "closing signal SIGTERM") by process index */
  teardowns: Map<number, Evidence[]>;
  /** a launcher's exit code of a process that ended by itself (no signal), by process index */
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

/** Where a process is named by its pid: the pid jemalloc and the capture give it (its container's, in a container). */
const ownPid = (p: ProcessSeries): number | null => p.pid;

/**
 * The pid the kernel's own messages name a process by (the host's): the capture's NSpid entry for the outermost
 * namespace its /proc showed, or its pid on the host itself; null for a process in a pid namespace of its own whose
 * /proc showed only that namespace (a container that mounted its own /proc). Dumps without the capture's context
 * (or from a capture before it recorded namespaces) are taken at their pid, as before.
 */
export function kernelPid(p: ProcessSeries): number | null {
  const id = processIdentity(p);
  if (!id) return p.pid;
  if (id.hostPid !== null) return id.hostPid;
  return id.pidNamespace === null && id.nsPids === null ? p.pid : null;
}

interface MatchOptions {
  /** the processes the log speaks for (logScopes), null for all */
  scope: readonly number[] | null;
  /** the pid of a process the evidence names it by (default: its own) */
  pidOf?: (p: ProcessSeries) => number | null;
  /** when no process has the pid: another way to find it (its own warnings), instead of the warning */
  onNone?: () => number | null;
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
  opts: MatchOptions,
): number | null {
  const w = (message: string): void => {
    warnings.push({ file, ...(line !== null ? { line } : {}), message });
  };
  const pidOf = opts.pidOf ?? ownPid;
  const cands = (opts.scope ?? job.processes.map((_, i) => i))
    .map((i) => ({ p: job.processes[i], i }))
    .filter(({ p }) => pidOf(p) === pid);
  if (cands.length === 0) {
    if (opts.onNone) return opts.onNone();
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

  const scopes = logScopes(job.processes, [...ev.kernel.map((x) => x.file), ...ev.jobLogs.map((x) => x.file)]);
  // Every copy of one kernel kill (dmesg and dmesg -T, each node's copy of one machine's log) is one record; its
  // process is looked for from each copy (a copy in a host's folder among that host's processes), after all copies
  // are read, so the best clock placement is the one matched.
  const kernelKills: { record: KillRecord; copies: { file: string; k: OomKill }[] }[] = [];
  for (const { file, log } of ev.kernel) {
    for (const k of log.kills) {
      const { atMs, from } = kernelKillTime(k, clock, file, warnings);
      const e: Evidence = { source: 'kernel', file, line: k.line, text: k.text };
      const same = kernelKills.find(
        ({ record: x }) =>
          x.pid === k.pid && (x.atMs === null || atMs === null || Math.abs(x.atMs - atMs) <= SAME_KILL_MS),
      );
      if (same) {
        same.record.evidence.push(e); // the same kill in another copy of the log (dmesg and dmesg -T)
        same.copies.push({ file, k });
        // dmesg's microseconds placed by the dumps' clocks beat dmesg -T's whole seconds
        if (k.bootS !== null && clock && atMs !== null) {
          same.record.atMs = atMs;
          same.record.timeFrom = from;
        }
        continue;
      }
      const rss = [k.anonRssBytes, k.fileRssBytes, k.shmemRssBytes];
      kernelKills.push({
        record: {
          pid: k.pid,
          by: 'kernel',
          processIndex: null,
          comm: k.comm,
          atMs,
          timeFrom: from,
          rssBytes: rss.every((x) => x !== null) ? rss.reduce((a, b) => a! + b!, 0) : k.anonRssBytes,
          anonRssBytes: k.anonRssBytes,
          limitBytes: k.memcg?.limitBytes ?? null,
          usageBytes: k.memcg?.usageBytes ?? null,
          scope: k.scope,
          invokedByPid: k.invokedBy?.pid ?? null,
          match: null,
          evidence: [e],
        },
        copies: [{ file, k }],
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
  matchKernelKills(job, kernelKills, scopes, warnings);
  kills.push(...kernelKills.map((x) => x.record));

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
  const add = (m: Map<number, Evidence[]>, i: number, e: Evidence): void => {
    const list = m.get(i) ?? [];
    if (!list.some((x) => x.file === e.file && x.line === e.line)) list.push(e);
    m.set(i, list);
  };
  for (const { file, log } of ev.jobLogs) {
    const by = new Map<string, number>();
    // a log in a host's folder names that host's processes, by the pids they have there
    const scope = scopes.get(file) ?? null;
    const pidsHere = scope
      ? new Set(scope.map((i) => job.processes[i].pid).filter((p): p is number => p !== null))
      : jobPids;
    for (const e of log.events) {
      // a line of a format not known counts only when one of its numbers is a pid of the job
      const pids = e.kind === 'unknown' ? e.pids.filter((p) => pidsHere.has(p)) : e.pids;
      if (e.kind === 'unknown' && pids.length === 0) continue;
      by.set(e.source, (by.get(e.source) ?? 0) + 1);
      const evd: Evidence = { source: e.source, file, line: e.line, text: e.text };
      const what = e.kind === 'unknown' ? 'a line of a format not known' : `the ${e.source} line`;
      if (e.kind === 'signal' || e.kind === 'teardown' || e.kind === 'exit' || e.kind === 'unknown') {
        for (const pid of pids) {
          const i = matchProcess(job, pid, null, e.atMs, what, file, e.line, warnings, { scope });
          if (i === null) continue;
          if (e.kind === 'signal') add(signals, i, evd);
          else if (e.kind === 'teardown') add(teardowns, i, evd);
          else if (e.kind === 'exit') {
            if (!exits.has(i)) exits.set(i, { code: e.exitCode ?? 0, evidence: evd });
          } else add(stopWordsOnly(e.text) ? teardowns : signals, i, evd);
        }
        continue;
      }
      if ((e.source === 'ray' || e.source === 'watchdog') && e.pids.length > 0) {
        for (const pid of e.pids) addLogKill(job, kills, e.source, pid, e, evd, warnings, scope);
        continue;
      }
      unattributed.push({ by: byOf(e), count: e.count, atMs: e.atMs, evidence: evd });
    }
    const roles = new Set(log.roles.filter((r) => pidsHere.has(r.pid)).map((r) => r.pid)).size;
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

/** The kill line's RSS within this factor of a process's RSS at its last dump agrees with it. */
const RSS_AGREE = 2;
/** Between two processes the kill line could be, its RSS must agree with one this many times better. */
const RSS_APART = 1.5;
/** Where the capture finds the memory counters: cg_path is one of these plus the path the kernel names. */
const CGROUP_MOUNTS = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup/memory', '/sys/fs/cgroup'];

/**
 * The memory cgroup of a process as the kernel's `task_memcg=` names it (its path in the hierarchy), from the
 * capture's `cg_path`; null when not recorded, or when the path is a mount's root (inside a cgroup namespace the
 * process's place in the host's hierarchy is not seen).
 */
export function memcgOf(p: Pick<ProcessSeries, 'snapshots'>): string | null {
  for (let i = p.snapshots.length - 1; i >= 0; i--) {
    const path = p.snapshots[i].context?.cgroup?.path?.replace(/\/+$/, '');
    if (!path) continue;
    if (CGROUP_MOUNTS.includes(path)) return null;
    const m = CGROUP_MOUNTS.find((root) => path.startsWith(root + '/'));
    return m ? path.slice(m.length) : null;
  }
  return null;
}

/** VmRSS at the process's last dump with a context. */
function lastRss(p: ProcessSeries): number | null {
  for (let i = p.snapshots.length - 1; i >= 0; i--) {
    const r = p.snapshots[i].context?.rss;
    if (r !== null && r !== undefined) return r;
  }
  return null;
}

const words = (xs: readonly string[]): string =>
  xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

interface KernelKill {
  record: KillRecord;
  /** each copy of the kill line read (the log it is in, the kill as that log gave it) */
  copies: { file: string; k: OomKill }[];
}

/**
 * Ties each kernel kill to its process: by the host pid (kernelPid: the pid, or the capture's NSpid) from any copy
 * of the kill; else, when no process has that pid where the kernel counts, by inference (inferKernelKill). The
 * inference runs after every exact match, so it never takes a process another kill names.
 */
function matchKernelKills(
  job: Pick<Job, 'processes'>,
  kernelKills: readonly KernelKill[],
  scopes: ReadonlyMap<string, number[] | null>,
  warnings: LoadWarning[],
): void {
  const taken = new Set<number>();
  const tie = (x: KernelKill, i: number, copy: { file: string; k: OomKill }, match: KillMatch): void => {
    x.record.processIndex = i;
    x.record.match = match;
    taken.add(i);
    // the copy that found the process is quoted first
    const at = x.record.evidence.findIndex((e) => e.file === copy.file && e.line === copy.k.line);
    if (at > 0) x.record.evidence.unshift(...x.record.evidence.splice(at, 1));
  };
  const left: { x: KernelKill; rejected: LoadWarning[] | null }[] = [];
  for (const x of kernelKills) {
    const r = x.record;
    let rejected: LoadWarning[] | null = null;
    for (const copy of x.copies) {
      const said: LoadWarning[] = [];
      let none = false;
      const i = matchProcess(job, r.pid!, r.comm, r.atMs, 'the kernel OOM kill', copy.file, copy.k.line, said, {
        scope: scopes.get(copy.file) ?? null,
        pidOf: kernelPid,
        onNone: () => {
          none = true;
          return null;
        },
      });
      if (i !== null) {
        const p = job.processes[i];
        const ns = processIdentity(p)?.nsPids ?? null;
        tie(
          x,
          i,
          copy,
          p.pid === r.pid
            ? { by: 'pid', processPid: p.pid, note: 'by its pid' }
            : { by: 'nspid', processPid: p.pid, note: `by NSpid ${ns?.join(',') ?? '?'} recorded with its dumps` },
        );
        break;
      }
      if (!none) rejected ??= said;
    }
    if (r.processIndex === null) left.push({ x, rejected });
  }
  for (const { x, rejected } of left) {
    // a process has that pid where the kernel counts, but it is not the one killed (times, name): said, no guess
    if (rejected) {
      warnings.push(...rejected);
      continue;
    }
    // no copy found it: what the copy that came closest said (candidates in its folder beat none)
    let best: { stage: number; said: LoadWarning[] } | null = null;
    for (const copy of x.copies) {
      const said: LoadWarning[] = [];
      const got = inferKernelKill(job, x.record, copy, scopes.get(copy.file) ?? null, taken, said);
      if ('index' in got) {
        tie(x, got.index, copy, got.match);
        break;
      }
      if (!best || got.stage > best.stage) best = { stage: got.stage, said };
    }
    if (x.record.processIndex === null && best) warnings.push(...best.said);
  }
}

/**
 * A kernel kill whose host pid no process has (each in a pid namespace of its own, its /proc showing only its own
 * pid): the process the kill line describes, among those whose host pid is not known, in the log's folder. It
 * must have the kill's command (the kernel's 15-byte comm), be in the kill's memory cgroup (task_memcg against the
 * capture's cg_path) and have no dump after the kill and no final dump before it, by at least one of these two;
 * between several, its RSS at its last dump must agree with the kill line's (within RSS_AGREE) and clearly better
 * than the next one's (RSS_APART). Anything less is a warning naming the candidates, no fate.
 */
function inferKernelKill(
  job: Pick<Job, 'processes'>,
  r: KillRecord,
  copy: { file: string; k: OomKill },
  scope: readonly number[] | null,
  taken: ReadonlySet<number>,
  warnings: LoadWarning[],
): { index: number; match: KillMatch } | { stage: 0 | 1 | 2 } {
  const w = (message: string): void => {
    warnings.push({ file: copy.file, line: copy.k.line, message });
  };
  const head = `the kernel OOM kill names host pid ${r.pid}${r.comm ? ` (${r.comm})` : ''}`;
  const pool = (scope ?? job.processes.map((_, i) => i)).filter(
    (i) => !taken.has(i) && kernelPid(job.processes[i]) === null,
  );
  if (pool.length === 0) {
    w(`${head}, which has no dumps here: no fate from it`);
    return { stage: 0 };
  }
  const memcg = copy.k.taskMemcg;
  const cands: { i: number; byCgroup: boolean; byTime: boolean; rss: number | null }[] = [];
  for (const i of pool) {
    const p = job.processes[i];
    const comm = processIdentity(p)?.comm ?? null;
    // the kernel's comm is at most 15 bytes (TASK_COMM_LEN)
    if (!r.comm || !comm || r.comm.slice(0, 15) !== comm.slice(0, 15)) continue;
    const cg = memcgOf(p);
    const byCgroup = memcg !== null && cg !== null;
    if (byCgroup && cg !== memcg) continue;
    const t = wallTimes(p);
    const byTime = r.atMs !== null && t !== null && t.length > 0;
    if (byTime) {
      // alive at the kill: no dump after it, no final dump (exit) before it
      if (t[0] > r.atMs! + CLOCK_SLACK_MS || t[t.length - 1] > r.atMs! + CLOCK_SLACK_MS) continue;
      if (p.snapshots[p.snapshots.length - 1]?.trigger === 'final') continue;
    }
    if (!byCgroup && !byTime) continue; // its command alone says too little
    cands.push({ i, byCgroup, byTime, rss: lastRss(p) });
  }
  const where = scope ? 'in its folder' : 'in the job';
  const label = (i: number): string => jobPidText(job.processes, job.processes[i]);
  if (cands.length === 0) {
    w(
      `${head}; no process has it where the kernel counts (in a pid namespace of its own, without the host's pid recorded), and none ${where} agrees with its memory cgroup${memcg !== null ? ` ${memcg}` : ''}, command and time: no fate from it`,
    );
    return { stage: 1 };
  }
  const killRss = r.rssBytes;
  let chosen: (typeof cands)[number];
  let byRss = false;
  if (killRss !== null && killRss > 0 && cands.every((c) => c.rss !== null && c.rss > 0)) {
    const d = cands.map((c) => ({ c, dist: Math.abs(Math.log(killRss / c.rss!)) })).sort((a, b) => a.dist - b.dist);
    const [best, next] = d;
    if (best.dist > Math.log(RSS_AGREE)) {
      w(
        `${head}; by cgroup, command and time it could be ${words(cands.map((c) => label(c.i)))}, but the kill's ${mib(killRss)} resident is far from ${cands.length > 1 ? 'each one' : 'its'} RSS at the last dump (${cands.map((c) => mib(c.rss!)).join(', ')}): no fate from it`,
      );
      return { stage: 2 };
    }
    if (next && next.dist - best.dist < Math.log(RSS_APART)) {
      w(
        `${head}; by cgroup, command and time it could be ${words(cands.map((c) => label(c.i)))}, and their RSS at the last dump (${d.map((x) => `${label(x.c.i)} ${mib(x.c.rss!)}`).join(', ')}) does not tell which had the kill's ${mib(killRss)}: no fate from it`,
      );
      return { stage: 2 };
    }
    chosen = best.c;
    byRss = true;
  } else if (cands.length === 1) chosen = cands[0];
  else {
    w(
      `${head}; by cgroup, command and time it could be ${words(cands.map((c) => label(c.i)))}, and the RSS to tell them apart is not known: no fate from it`,
    );
    return { stage: 2 };
  }
  const used = [
    ...(chosen.byCgroup ? ['cgroup'] : []),
    'command',
    ...(chosen.byTime ? ['time'] : []),
    ...(byRss ? ['RSS'] : []),
  ];
  return {
    index: chosen.i,
    match: { by: 'inferred', processPid: job.processes[chosen.i].pid, note: `matched by ${words(used)}: inferred` },
  };
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
  scope: readonly number[] | null,
): void {
  const what = by === 'ray' ? "Ray's OOM kill" : "the watchdog's kill";
  const said: LoadWarning[] = [];
  const processIndex = matchProcess(job, pid, null, e.atMs, what, evd.file, evd.line, said, { scope });
  // the same kill in another line or log (the same pid on two nodes is two kills)
  const same = kills.find((k) => k.by === by && k.pid === pid && k.processIndex === processIndex);
  if (same) {
    same.evidence.push(evd);
    return;
  }
  warnings.push(...said);
  kills.push({
    pid,
    by,
    processIndex,
    comm: e.name,
    atMs: e.atMs,
    timeFrom: e.atMs !== null ? "the log line's time" : null,
    rssBytes: e.rssBytes ?? null,
    anonRssBytes: null,
    limitBytes: e.limitBytes ?? null,
    usageBytes: e.jobBytes ?? null,
    scope: null,
    invokedByPid: null,
    match: processIndex !== null ? { by: 'pid', processPid: pid, note: 'by its pid' } : null,
    evidence: [evd],
  });
}
