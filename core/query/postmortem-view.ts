// Why the job died, as the app's charts and the report draw it: the kill (which process, by whom, when), the
// limit and each process's time to it (postmortem.ts's one projection), heap against RSS with the part outside
// the heap named, the ranked culprits and the logs read. A plain-data subset of postmortemQuery's answer, small
// enough to post to the UI and to embed in a report; `readPostmortemView` checks one read back from a report.

import type { Job } from '../model/model.js';
import type { EvidenceSource, KillBy } from '../stats/kill-evidence.js';
import { FATE_ORDER, type Fate } from '../stats/fates.js';
import type { MemoryExplanation, ProcessMemory } from '../stats/memory-outside-heap.js';
import type { Projection } from '../stats/postmortem.js';
import { projectionText } from '../stats/projection-text.js';
import { postmortemQuery, type LimitScope, type PostmortemOptions, type PostmortemResult } from './postmortem.js';

export interface KillMark {
  /** the killed process in the job, null when the evidence names a pid without dumps */
  processIndex: number | null;
  pid: number | null;
  by: KillBy;
  /** on the dumps' wall clock, null when the evidence gives no time that can be placed */
  atMs: number | null;
  /** how the time was placed (e.g. dmesg seconds through the dumps' monotonic clock) */
  timeFrom: string | null;
  rssBytes: number | null;
  limitBytes: number | null;
  usageBytes: number | null;
  /** the first piece of evidence: file and line, as the tooltip names it */
  evidence: { file: string; line: number | null; text: string } | null;
}

export interface ProcessView {
  processIndex: number;
  pid: number | null;
  fate: Fate;
  /** end rate per second (Theil–Sen over the late window), null without times */
  perSecond: number | null;
  /** time to the limit, null when killed, without a limit or without a rate; its text (projection-text.ts) */
  projection: Projection | null;
  toLimit: string | null;
  /** the first evidence of its fate (a log line with file:line, else the dumps'); absent in older reports */
  evidence?: { source: EvidenceSource; file: string; line: number | null; text: string } | null;
  memory: {
    heapBytes: number;
    /** of the heap, allocations inherited at fork and never freed (the parent's pages until written) */
    inheritedBytes: number;
    rssBytes: number | null;
    outsideHeapBytes: number | null;
    explanation: MemoryExplanation | null;
    parts: ProcessMemory['parts'];
    /** where the page figures came from */
    source: string | null;
  };
}

export interface CulpritView {
  kind: 'heap' | 'outside-heap';
  pids: (number | null)[];
  site: string;
  bytes: number;
  rate: number | null;
  share: number;
  /** the heap culprit's growth pattern (core/stats/patterns.ts), null outside the heap; absent in older reports */
  pattern?: string | null;
}

export interface PostmortemView {
  verdict: string;
  kill: KillMark | null;
  /** scope: what the limit bounds (job: the processes' sum, no per-process countdown; process: each alone) */
  limit: { bytes: number | null; source: string; scope: LimitScope } | null;
  processes: ProcessView[];
  /** the job as one cgroup: its time to the limit (rates summed), as text */
  jobToLimit: string | null;
  culprits: CulpritView[];
  logsRead: { file: string; gave: string }[];
}

export function postmortemView(job: Job, opts: PostmortemOptions = {}): PostmortemView {
  return viewOf(postmortemQuery(job, opts));
}

export function viewOf(q: PostmortemResult): PostmortemView {
  const k = q.kill;
  // the killed process by its own pid on its host (the kernel's pid is the host's for a container's process)
  const own = k?.match?.processPid ?? k?.pid ?? null;
  const killIndex =
    k && own !== null
      ? (q.processes.find((p) => p.pid === own && p.host === k.host && p.fate === 'oom-killed')?.processIndex ?? null)
      : null;
  const ev = k?.evidence[0];
  return {
    verdict: q.verdict,
    kill: k
      ? {
          processIndex: killIndex,
          pid: k.pid,
          by: k.by,
          atMs: k.atMs,
          timeFrom: k.timeFrom,
          rssBytes: k.rssBytes ?? k.anonRssBytes,
          limitBytes: k.limitBytes,
          usageBytes: k.usageBytes,
          evidence: ev ? { file: ev.file, line: ev.line, text: ev.text } : null,
        }
      : null,
    limit: q.limit,
    processes: q.processes.map((p) => {
      const pm = q.postmortem.processes[p.processIndex];
      const m = p.memory;
      const proj = p.fate === 'oom-killed' ? null : pm.projection;
      return {
        processIndex: p.processIndex,
        pid: p.pid,
        fate: p.fate,
        perSecond: pm.rate?.perSecond ?? null,
        projection: proj,
        toLimit: proj ? projectionText(proj) : null,
        // a log's line before the dumps' own inference: what the first screen quotes of its fate
        evidence: p.fateEvidence.find((e) => e.source !== 'dumps') ?? p.fateEvidence[0] ?? null,
        memory: {
          heapBytes: m.heapBytes,
          inheritedBytes: m.inheritedBytes,
          rssBytes: m.rssBytes,
          outsideHeapBytes: m.outsideHeapBytes,
          explanation: m.explanation,
          parts: { ...m.parts },
          source: m.source,
        },
      };
    }),
    jobToLimit: q.postmortem.job.projection
      ? projectionText(q.postmortem.job.projection) +
        (q.postmortem.job.basis ? ` (from ${q.postmortem.job.basis})` : '')
      : null,
    culprits: q.culprits.map((c) => ({
      kind: c.kind,
      pids: c.pids,
      site: c.site,
      bytes: c.bytes,
      rate: c.rate,
      share: c.share,
      pattern: c.pattern,
    })),
    logsRead: q.logsRead.map((l) => ({ file: l.file, gave: l.gave })),
  };
}

// ---- read back from a report (untrusted) ------------------------------------------------------------------

const FATES: ReadonlySet<string> = new Set<Fate>(FATE_ORDER);
const BYS: ReadonlySet<string> = new Set<KillBy>([
  'kernel',
  'cgroup',
  'ray',
  'kubernetes',
  'slurm',
  'watchdog',
  'inferred',
]);
const SCOPES: ReadonlySet<string> = new Set<LimitScope>(['job', 'process']);
const EXPLANATIONS: ReadonlySet<string> = new Set<MemoryExplanation>([
  'copy-on-write',
  'likely-copy-on-write',
  'unknown',
  'allocator-retained',
  'fragmentation',
  'shared-memory',
  'not-malloc',
  'heap',
]);
/** a report's texts are bounded: a verdict is a few sentences, a log line a few hundred characters */
const MAX_TEXT = 8192;

class Bad extends Error {}

type Obj = Record<string, unknown>;
function obj(v: unknown, at: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Bad(`${at} is not an object`);
  return v as Obj;
}
function arr(v: unknown, at: string, max: number): unknown[] {
  if (!Array.isArray(v) || v.length > max) throw new Bad(`${at} is not a list of at most ${max}`);
  return v;
}
function str(v: unknown, at: string): string {
  if (typeof v !== 'string' || v.length > MAX_TEXT) throw new Bad(`${at} is not a text`);
  return v;
}
function num(v: unknown, at: string): number {
  // Infinity is how a projection says "never": JSON carries it as null, so only finite numbers arrive here
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Bad(`${at} is not a number`);
  return v;
}
// core/stats/kill-evidence.ts EvidenceSource, as a report's field is checked against it
const EVIDENCE_SOURCES: ReadonlySet<string> = new Set<EvidenceSource>([
  'kernel',
  'cgroup',
  'ray',
  'kubernetes',
  'slurm',
  'pytorch',
  'shell',
  'watchdog',
  'launcher',
  'torchrun',
  'unknown',
  'dumps',
]);
const opt = <T>(v: unknown, f: (v: unknown, at: string) => T, at: string): T | null =>
  v === null || v === undefined ? null : f(v, at);
function oneOf<T extends string>(v: unknown, set: ReadonlySet<string>, at: string): T {
  if (typeof v !== 'string' || !set.has(v)) throw new Bad(`${at} is not one of ${[...set].join(', ')}`);
  return v as T;
}
function index(v: unknown, at: string, n: number): number {
  const i = num(v, at);
  if (!Number.isInteger(i) || i < 0 || i >= n) throw new Bad(`${at} is not a process of the report`);
  return i;
}
/** JSON has no Infinity: a "never" bound reads back as null (unknown); the text `toLimit` still says never */
function projection(v: unknown, at: string): Projection {
  const o = obj(v, at);
  const f = (k: keyof Projection): number | null => opt(o[k], num, `${at}.${k}`);
  return {
    headroomBytes: num(o.headroomBytes, `${at}.headroomBytes`),
    seconds: f('seconds'),
    secondsLo: f('secondsLo'),
    secondsHi: f('secondsHi'),
    snapshots: f('snapshots'),
    snapshotsLo: f('snapshotsLo'),
    snapshotsHi: f('snapshotsHi'),
  };
}

/**
 * A postmortem view read back from a report's header, every field checked; the message names the field.
 * Returns null for a report without one (older reports).
 */
export function readPostmortemView(v: unknown, processCount: number): PostmortemView | null {
  if (v === undefined || v === null) return null;
  try {
    return readView(v, processCount);
  } catch (e) {
    if (e instanceof Bad) throw new Error(`postmortem: ${e.message}`, { cause: e });
    throw e;
  }
}

function readView(v: unknown, n: number): PostmortemView {
  const o = obj(v, 'postmortem');
  const k = o.kill === null || o.kill === undefined ? null : obj(o.kill, 'kill');
  const ev = k && k.evidence !== null && k.evidence !== undefined ? obj(k.evidence, 'kill.evidence') : null;
  const lim = o.limit === null || o.limit === undefined ? null : obj(o.limit, 'limit');
  return {
    verdict: str(o.verdict, 'verdict'),
    kill: k
      ? {
          processIndex: opt(k.processIndex, (x, at) => index(x, at, n), 'kill.processIndex'),
          pid: opt(k.pid, num, 'kill.pid'),
          by: oneOf<KillBy>(k.by, BYS, 'kill.by'),
          atMs: opt(k.atMs, num, 'kill.atMs'),
          timeFrom: opt(k.timeFrom, str, 'kill.timeFrom'),
          rssBytes: opt(k.rssBytes, num, 'kill.rssBytes'),
          limitBytes: opt(k.limitBytes, num, 'kill.limitBytes'),
          usageBytes: opt(k.usageBytes, num, 'kill.usageBytes'),
          evidence: ev
            ? {
                file: str(ev.file, 'kill.evidence.file'),
                line: opt(ev.line, num, 'kill.evidence.line'),
                text: str(ev.text, 'kill.evidence.text'),
              }
            : null,
        }
      : null,
    limit: lim
      ? {
          bytes: opt(lim.bytes, num, 'limit.bytes'),
          source: str(lim.source, 'limit.source'),
          // older reports have none: their limits were the evidence's, the job's
          scope: lim.scope === undefined ? 'job' : oneOf<LimitScope>(lim.scope, SCOPES, 'limit.scope'),
        }
      : null,
    processes: arr(o.processes, 'processes', n).map((x, i) => {
      const p = obj(x, `processes[${i}]`);
      const m = obj(p.memory, `processes[${i}].memory`);
      const parts = obj(m.parts, `processes[${i}].memory.parts`);
      const part = (key: string): number | null => opt(parts[key], num, `processes[${i}].memory.parts.${key}`);
      return {
        processIndex: index(p.processIndex, `processes[${i}].processIndex`, n),
        pid: opt(p.pid, num, `processes[${i}].pid`),
        fate: oneOf<Fate>(p.fate, FATES, `processes[${i}].fate`),
        perSecond: opt(p.perSecond, num, `processes[${i}].perSecond`),
        projection: opt(p.projection, projection, `processes[${i}].projection`),
        toLimit: opt(p.toLimit, str, `processes[${i}].toLimit`),
        evidence: opt(
          p.evidence,
          (x, at) => {
            const e = obj(x, at);
            return {
              source: oneOf<EvidenceSource>(e.source, EVIDENCE_SOURCES, `${at}.source`),
              file: str(e.file, `${at}.file`),
              line: opt(e.line, num, `${at}.line`),
              text: str(e.text, `${at}.text`),
            };
          },
          `processes[${i}].evidence`,
        ),
        memory: {
          heapBytes: num(m.heapBytes, `processes[${i}].memory.heapBytes`),
          inheritedBytes: num(m.inheritedBytes, `processes[${i}].memory.inheritedBytes`),
          rssBytes: opt(m.rssBytes, num, `processes[${i}].memory.rssBytes`),
          outsideHeapBytes: opt(m.outsideHeapBytes, num, `processes[${i}].memory.outsideHeapBytes`),
          explanation: opt(
            m.explanation,
            (x, at) => oneOf<MemoryExplanation>(x, EXPLANATIONS, at),
            `processes[${i}].memory.explanation`,
          ),
          parts: {
            copyOnWrite: part('copyOnWrite'),
            allocatorRetained: part('allocatorRetained'),
            fragmentation: part('fragmentation'),
            sharedMemory: part('sharedMemory'),
            notMalloc: part('notMalloc'),
          },
          source: opt(m.source, str, `processes[${i}].memory.source`),
        },
      };
    }),
    jobToLimit: opt(o.jobToLimit, str, 'jobToLimit'),
    culprits: arr(o.culprits, 'culprits', 64).map((x, i) => {
      const c = obj(x, `culprits[${i}]`);
      return {
        kind: oneOf<'heap' | 'outside-heap'>(c.kind, new Set(['heap', 'outside-heap']), `culprits[${i}].kind`),
        pids: arr(c.pids, `culprits[${i}].pids`, 4096).map((p, j) => opt(p, num, `culprits[${i}].pids[${j}]`)),
        site: str(c.site, `culprits[${i}].site`),
        bytes: num(c.bytes, `culprits[${i}].bytes`),
        rate: opt(c.rate, num, `culprits[${i}].rate`),
        share: num(c.share, `culprits[${i}].share`),
        ...(c.pattern === undefined ? {} : { pattern: opt(c.pattern, str, `culprits[${i}].pattern`) }),
      };
    }),
    logsRead: arr(o.logsRead, 'logsRead', 4096).map((x, i) => {
      const l = obj(x, `logsRead[${i}]`);
      return { file: str(l.file, `logsRead[${i}].file`), gave: str(l.gave, `logsRead[${i}].gave`) };
    }),
  };
}

/** The view over some of the job's processes (a report of the ticked ones): indices renumbered in `kept`'s order. */
export function viewForProcesses(v: PostmortemView, kept: readonly number[]): PostmortemView {
  const at = new Map(kept.map((i, k) => [i, k]));
  const re = (i: number | null): number | null => (i === null ? null : (at.get(i) ?? null));
  return {
    ...v,
    kill: v.kill ? { ...v.kill, processIndex: re(v.kill.processIndex) } : null,
    processes: v.processes
      .filter((p) => at.has(p.processIndex))
      .map((p) => ({ ...p, processIndex: at.get(p.processIndex)! }))
      .sort((a, b) => a.processIndex - b.processIndex),
  };
}
