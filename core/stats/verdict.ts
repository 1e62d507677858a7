// The verdict: the victim apart from the culprit. One sentence first (who was killed, by whom, when, at what
// limit), then what filled the memory (the growing stacks, and the pages outside the heap), then whether the
// killed process's own heap grew. The culprits are ranked by their share of what grew.

import type { Job } from '../model/model.js';
import type { GrowthPattern } from './patterns.js';
import type { JobSuspects, SuspectGroup } from './suspects.js';
import { rankIndex } from './rank-index.js';
import { NO_PAGE_COUNTS, type ProcessMemory } from './memory-outside-heap.js';
import type { KillRecord } from './kill-evidence.js';
import type { ProcessEnd } from './fates.js';
import { DEFAULT_VIEW, processViewer } from '../frames/view.js';
import type { Frame } from '../frames/describe.js';
import { frameText, leadFrame } from '../frames/stack-labels.js';
import { revealControls } from '../model/display-text.js';
import { processName } from '../model/process-name.js';
import { jobPidText } from '../model/process-host.js';
import { formatCount, type ValueUnit } from '../model/units.js';

export interface Culprit {
  kind: 'heap' | 'outside-heap';
  pids: (number | null)[];
  processIndexes: number[];
  /** heap: the stack's frames, leaf first (Python frames when it has them) */
  frames?: string[];
  /** one line: the call site, or what the pages are */
  site: string;
  /** bytes it grew by (heap: over the series; outside-heap: the pages at the end); a count sample's heap culprit: the
   *  count (postmortem's `unit`) */
  bytes: number;
  /** bytes (or the count sample's objects) per second at the end (heap), null when unknown */
  rate: number | null;
  /** its share of everything the culprits add up to */
  share: number;
  pattern: GrowthPattern | null;
}

/** A killed process's own heap "was flat" when it grew less than this per second at the end. */
export const FLAT_RATE = 64 * 1024;
const MAX_HEAP_CULPRITS = 5;

const mib = (b: number): string =>
  b >= 1024 ** 3 ? `${(b / 1024 ** 3).toFixed(1)} GiB` : `${(b / 1048576).toFixed(b < 10 * 1048576 ? 1 : 0)} MiB`;
const rateText = (r: number): string => `${r >= 0 ? '+' : '−'}${(Math.abs(r) / 1048576).toFixed(1)} MiB/s`;
/** a count sample's figures in the sentence: "+7,014 objects", "+12 objects/s" */
const countText = (n: number): string => `${n >= 0 ? '+' : '−'}${formatCount(Math.abs(n))} objects`;
/** a killed process's count of objects "was flat" when it grew by less than one a second at the end */
const FLAT_COUNT_RATE = 0.5;

/**
 * The stack's frames as people read them: the one frame pipeline's default view (Python first, the interpreter's
 * and the allocator's own frames left out, symbols when the process has them), each as `fn (file:line)`.
 */
export function stackFrameLabels(job: Pick<Job, 'processes'>, processIndex: number, stackId: number): string[] {
  return stackFrames(job, processIndex, stackId).map((f) => revealControls(frameText(f)));
}

function stackFrames(job: Pick<Job, 'processes'>, processIndex: number, stackId: number): Frame[] {
  return processViewer(job.processes[processIndex], DEFAULT_VIEW)(stackId)?.frames ?? [];
}

/** The stack's name as every view names it (core/frames/stack-labels.ts leadFrame), as `fn (file:line)`. */
export function stackSite(job: Pick<Job, 'processes'>, processIndex: number, stackId: number): string {
  const lead = leadFrame(stackFrames(job, processIndex, stackId), DEFAULT_VIEW.mode);
  // names come from files (maps, symbols, Python tables): marked as every shown name is
  return lead ? revealControls(frameText(lead)) : '(no frames)';
}

/** A short name for a process: its comm with its pid (`node-a:12` where pids repeat in the job). */
export function processLabel(job: Pick<Job, 'processes'>, i: number): string {
  const p = job.processes[i];
  const name = processName(p);
  // a series with no pid (a PyTorch snapshot's device, a capture without one) is named by its file (and device)
  const where =
    p.pid !== null ? jobPidText(job.processes, p) : p.key.slice(p.key.lastIndexOf('/') + 1).replace('#', ' ');
  if (p.pid === null) return name ? `${name} (${where})` : where;
  return `${name ?? 'pid'} ${where}`.replace(/^pid pid/, 'pid');
}

export function rankCulprits(
  job: Pick<Job, 'processes'>,
  suspects: JobSuspects,
  memory: readonly ProcessMemory[],
): Culprit[] {
  const heap: Culprit[] = [];
  // the groups and their stacks by index: the ranking's 10^6 stacks at 1,000 processes are not made for these
  const ranked = rankIndex(suspects);
  const groups: SuspectGroup[] = [];
  for (let rank = 0; rank < ranked.groupsKept && groups.length < MAX_HEAP_CULPRITS; rank++) {
    const g = ranked.group(rank) as SuspectGroup;
    if (g.deltaBytes > 0 && (g.score > 0 || g.pattern === 'steady' || g.pattern === 'step')) groups.push(g);
  }
  for (const g of groups) {
    // the holders that share the group's pattern (core/stats/suspects.ts): a leak's culprit is its leaking
    // processes, not the bounded buffers other processes filled at the same call site
    const members = Array.from(ranked.stacksOf(g.group), (k) => ranked.stack(k)).filter((s) => s.pattern === g.pattern);
    const rates = members.map((m) => m.lateSlopePerSecond);
    const frames = stackFrameLabels(job, g.top.processIndex, g.top.stackId);
    heap.push({
      kind: 'heap',
      pids: g.patternProcessIndexes.map((i) => job.processes[i].pid),
      processIndexes: g.patternProcessIndexes,
      frames,
      site: stackSite(job, g.top.processIndex, g.top.stackId),
      bytes: g.deltaBytes,
      rate: rates.every((r) => r !== null) ? rates.reduce<number>((a, r) => a + (r as number), 0) : null,
      share: 0,
      pattern: g.pattern,
    });
  }
  const cowIdx = memory
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => (m.parts.copyOnWrite ?? 0) > 0 && m.explanation === 'copy-on-write');
  const out = [...heap];
  if (cowIdx.length > 0)
    out.push({
      kind: 'outside-heap',
      pids: cowIdx.map(({ i }) => job.processes[i].pid),
      processIndexes: cowIdx.map(({ i }) => i),
      site: 'copy-on-write: pages of the parent the forked children wrote (not allocations)',
      bytes: cowIdx.reduce((a, { m }) => a + (m.parts.copyOnWrite ?? 0), 0),
      rate: null,
      share: 0,
      pattern: null,
    });
  const total = out.reduce((a, c) => a + c.bytes, 0);
  for (const c of out) c.share = total > 0 ? c.bytes / total : 0;
  return out.sort((a, b) => b.bytes - a.bytes);
}

/** Names up to NAMED processes; more are counted by name ("1,000 processes (python3.12 train.py ×1,000)"). */
const NAMED = 3;
function namesOrCount(job: Pick<Job, 'processes'>, idx: readonly number[]): string {
  if (idx.length <= NAMED) return idx.map((i) => processLabel(job, i)).join(', ');
  const by = new Map<string, number>();
  for (const i of idx) {
    const n = processName(job.processes[i]) ?? 'pid';
    by.set(n, (by.get(n) ?? 0) + 1);
  }
  const groups = [...by.entries()].sort((a, b) => b[1] - a[1]);
  const shown = groups.slice(0, NAMED).map(([n, c]) => `${n} ×${c.toLocaleString('en-US')}`);
  if (groups.length > NAMED) shown.push(`${groups.length - NAMED} other names`);
  return `${idx.length.toLocaleString('en-US')} processes (${shown.join(', ')})`;
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19) + ' UTC';
}

export function verdictSentence(
  job: Pick<Job, 'processes'>,
  kill: KillRecord | null,
  ends: readonly ProcessEnd[],
  culprits: readonly Culprit[],
  victimRate: number | null,
  memory: readonly ProcessMemory[] = [],
  unit: ValueUnit = 'bytes',
): string {
  // the heap's figures: bytes, or a count sample's counts (never read as MiB)
  const heapRate = unit === 'bytes' ? rateText : (r: number) => `${countText(r)}/s`;
  const heapGrowth = unit === 'bytes' ? (b: number) => `+${mib(b)}` : countText;
  const parts: string[] = [];
  if (kill && kill.processIndex !== null) {
    const who = processLabel(job, kill.processIndex).replace(/ ((?:\S+:)?\d+)$/, ' (pid $1');
    // a container's process: the kernel names it by the host's pid, its dumps and logs by its own
    const own = job.processes[kill.processIndex].pid;
    const hostPid = kill.pid !== null && own !== null && kill.pid !== own ? `, host pid ${kill.pid}` : '';
    const size =
      kill.anonRssBytes !== null
        ? `, ${mib(kill.anonRssBytes)} anon`
        : kill.rssBytes !== null
          ? `, ${mib(kill.rssBytes)} resident`
          : '';
    const at = kill.atMs !== null ? ` at ${clock(kill.atMs)}` : '';
    const limit =
      kill.scope === 'global'
        ? ' when the machine ran out of memory'
        : kill.by === 'watchdog' && kill.limitBytes !== null
          ? ` when the job reached its ${mib(kill.limitBytes)} limit${kill.usageBytes !== null ? ` (${mib(kill.usageBytes)} summed)` : ''}`
          : kill.limitBytes !== null
            ? ` when the cgroup reached its ${mib(kill.limitBytes)} limit`
            : '';
    const by =
      kill.by === 'kernel'
        ? 'The kernel OOM-killed'
        : kill.by === 'ray'
          ? "Ray's memory monitor killed"
          : kill.by === 'watchdog'
            ? "The job's memory watchdog killed"
            : kill.by === 'kubernetes'
              ? 'Kubernetes reports an OOM kill (OOMKilled); the process it ended is'
              : kill.by === 'slurm'
                ? 'SLURM reports an OOM kill in the step; the process it ended is'
                : kill.by === 'cgroup'
                  ? 'The cgroup counted an OOM kill; the process it ended is'
                  : 'No log says why; the process that stopped is';
    parts.push(`${by} ${who}${hostPid}${size})${at}${limit}.`);
    if (kill.by === 'kernel' && kill.match?.by === 'inferred')
      parts.push(
        `The kernel's pid ${kill.pid} is ${jobPidText(job.processes, job.processes[kill.processIndex])}, ${kill.match.note}.`,
      );
  } else {
    const of = (fate: ProcessEnd['fate']): number[] => ends.flatMap((e, i) => (e.fate === fate ? [i] : []));
    const killed = of('killed');
    const stopped = of('stopped');
    if (killed.length > 0) {
      const first = ends[killed[0]].fateEvidence.find((e) => e.source !== 'dumps');
      parts.push(
        `${namesOrCount(job, killed)} ${killed.length > 1 ? 'were' : 'was'} killed by a signal` +
          (first ? ` (${first.text}, ${first.file}${first.line !== null ? `:${first.line}` : ''})` : '') +
          '; no log says why.',
      );
    }
    if (stopped.length > 0)
      parts.push(
        `${namesOrCount(job, stopped)} stopped without a final dump and no log says why${stopped.length === 1 ? `: ${ends[stopped[0]].fateEvidence[0]?.text ?? 'no final dump'}` : ''}.`,
      );
    if (killed.length === 0 && stopped.length === 0)
      parts.push('No process of the job was killed: every process exited or its end is unknown.');
  }
  // a one-time step did not fill the memory up to the kill: it is listed among what grew, not named here
  const heap = culprits.filter((c) => c.kind === 'heap' && c.pattern !== 'step').slice(0, 2);
  const cow = culprits.find((c) => c.kind === 'outside-heap');
  const pieces = heap.map(
    (c) =>
      `${c.site} in ${namesOrCount(job, c.processIndexes)}, ${c.rate !== null ? heapRate(c.rate) : heapGrowth(c.bytes)}${c.pattern ? `, ${c.pattern}` : ''}`,
  );
  if (cow) {
    const parents = [
      ...new Set(
        cow.processIndexes.map((i) => job.processes[i].snapshots.find((s) => s.context)?.context?.ppid ?? null),
      ),
    ];
    const from = parents.length === 1 && parents[0] !== null ? ` from pid ${parents[0]}` : '';
    pieces.push(`${mib(cow.bytes)} of pages the forked processes copied${from} (copy-on-write, not allocations)`);
  }
  const likely = memory.flatMap((m, i) => (m.explanation === 'likely-copy-on-write' ? [i] : []));
  if (!cow && likely.length > 0) {
    const inherited = likely.reduce((a, i) => a + memory[i].inheritedBytes, 0);
    pieces.push(
      `likely pages the forked processes copied (copy-on-write: ${mib(inherited)} inherited at fork by ${namesOrCount(job, likely)}; ${NO_PAGE_COUNTS})`,
    );
  }
  if (pieces.length > 0) parts.push(`The growth that filled it: ${pieces.join('; and ')}.`);
  if (kill && kill.processIndex !== null && victimRate !== null)
    parts.push(
      Math.abs(victimRate) < (unit === 'bytes' ? FLAT_RATE : FLAT_COUNT_RATE)
        ? "The killed process's own heap was flat."
        : `The killed process's own heap grew ${heapRate(victimRate)} at the end.`,
    );
  return parts.join(' ');
}
