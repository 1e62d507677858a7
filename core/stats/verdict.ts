// The verdict: the victim apart from the culprit. One sentence first (who was killed, by whom, when, at what
// limit), then what filled the memory (the growing stacks, and the pages outside the heap), then whether the
// killed process's own heap grew. The culprits are ranked by their share of what grew.

import type { Job } from '../model/model.js';
import type { GrowthPattern } from './patterns.js';
import type { JobSuspects } from './suspects.js';
import type { ProcessMemory } from './memory-outside-heap.js';
import type { KillRecord } from './kill-evidence.js';
import type { ProcessEnd } from './fates.js';
import { DEFAULT_VIEW, processViewer } from '../frames/view.js';
import { frameText } from '../frames/stack-labels.js';
import { revealControls } from '../model/display-text.js';
import { processName } from '../model/process-name.js';
import { jobPidText } from '../model/process-host.js';

export interface Culprit {
  kind: 'heap' | 'outside-heap';
  pids: (number | null)[];
  processIndexes: number[];
  /** heap: the stack's frames, leaf first (Python frames when it has them) */
  frames?: string[];
  /** one line: the call site, or what the pages are */
  site: string;
  /** bytes it grew by (heap: over the series; outside-heap: the pages at the end) */
  bytes: number;
  /** bytes per second at the end (heap), null when unknown */
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

/**
 * The stack's frames as people read them: the one frame pipeline's default view (Python first, the interpreter's
 * and the allocator's own frames left out, symbols when the process has them), each as `fn (file:line)`.
 */
export function stackFrameLabels(job: Pick<Job, 'processes'>, processIndex: number, stackId: number): string[] {
  const p = job.processes[processIndex];
  // names come from files (maps, symbols, Python tables): marked as every shown name is
  return (processViewer(p, DEFAULT_VIEW)(stackId)?.frames ?? []).map((f) => revealControls(frameText(f)));
}

/** A short name for a process: its comm with its pid (`node-a:12` where pids repeat in the job). */
export function processLabel(job: Pick<Job, 'processes'>, i: number): string {
  const p = job.processes[i];
  const name = processName(p);
  return `${name ?? 'pid'} ${p.pid !== null ? jobPidText(job.processes, p) : '?'}`.replace(/^pid pid/, 'pid');
}

export function rankCulprits(
  job: Pick<Job, 'processes'>,
  suspects: JobSuspects,
  memory: readonly ProcessMemory[],
): Culprit[] {
  const heap: Culprit[] = [];
  const groups = suspects.groups
    .filter((g) => g.deltaBytes > 0 && (g.score > 0 || g.pattern === 'steady' || g.pattern === 'step'))
    .slice(0, MAX_HEAP_CULPRITS);
  for (const g of groups) {
    const members = suspects.stacks.filter((s) => s.group === g.group);
    const rates = members.map((m) => m.lateSlopePerSecond);
    const frames = stackFrameLabels(job, g.top.processIndex, g.top.stackId);
    heap.push({
      kind: 'heap',
      pids: g.processes,
      processIndexes: g.processIndexes,
      frames,
      site: frames[0] ?? '(no frames)',
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

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19) + ' UTC';
}

export function verdictSentence(
  job: Pick<Job, 'processes'>,
  kill: KillRecord | null,
  ends: readonly ProcessEnd[],
  culprits: readonly Culprit[],
  victimRate: number | null,
): string {
  const parts: string[] = [];
  if (kill && kill.processIndex !== null) {
    const who = processLabel(job, kill.processIndex).replace(/ ((?:\S+:)?\d+)$/, ' (pid $1');
    const anon = kill.anonRssBytes !== null ? `, ${mib(kill.anonRssBytes)} anon` : '';
    const at = kill.atMs !== null ? ` at ${clock(kill.atMs)}` : '';
    const limit =
      kill.scope === 'global'
        ? ' when the machine ran out of memory'
        : kill.limitBytes !== null
          ? ` when the cgroup reached its ${mib(kill.limitBytes)} limit`
          : '';
    const by =
      kill.by === 'kernel'
        ? 'The kernel OOM-killed'
        : kill.by === 'ray'
          ? "Ray's memory monitor killed"
          : kill.by === 'kubernetes'
            ? 'Kubernetes reports an OOM kill (OOMKilled); the process it ended is'
            : kill.by === 'slurm'
              ? 'SLURM reports an OOM kill in the step; the process it ended is'
              : kill.by === 'cgroup'
                ? 'The cgroup counted an OOM kill; the process it ended is'
                : 'No log says why; the process that stopped is';
    parts.push(`${by} ${who}${anon})${at}${limit}.`);
  } else {
    const killed = ends.map((e, i) => ({ e, i })).filter(({ e }) => e.fate === 'killed');
    if (killed.length > 0)
      parts.push(
        `No log says why ${killed.map(({ i }) => processLabel(job, i)).join(', ')} stopped: ${killed[0].e.fateEvidence[0]?.text ?? 'no final dump'}.`,
      );
    else parts.push('No process of the job was killed: every process exited or its end is unknown.');
  }
  const heap = culprits.filter((c) => c.kind === 'heap').slice(0, 2);
  const cow = culprits.find((c) => c.kind === 'outside-heap');
  const pieces = heap.map(
    (c) =>
      `${c.site} in ${c.processIndexes.map((i) => processLabel(job, i)).join(', ')}, ${c.rate !== null ? rateText(c.rate) : `+${mib(c.bytes)}`}${c.pattern ? `, ${c.pattern}` : ''}`,
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
  if (pieces.length > 0) parts.push(`The growth that filled it: ${pieces.join('; and ')}.`);
  if (kill && kill.processIndex !== null && victimRate !== null)
    parts.push(
      Math.abs(victimRate) < FLAT_RATE
        ? "The killed process's own heap was flat."
        : `The killed process's own heap grew ${rateText(victimRate)} at the end.`,
    );
  return parts.join(' ');
}
