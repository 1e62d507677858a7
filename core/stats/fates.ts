// How each process ended, from the kill evidence first and the dumps second: `oom-killed` (named by the
// kernel, the cgroup, Ray, Kubernetes, SLURM or the job's memory watchdog), `killed` (a log line says it was
// killed by a signal — PyTorch, a shell, a launcher's exit code −9, torchrun — the reason not said), `torn-down`
// (its launcher stopped it: SIGTERM, exit code −15; or it stopped within a short while after another process's
// kill while its parent lived on), `exited` (a final dump, or its launcher's exit code without a signal),
// `stopped` (no final dump and no log says why: "stopped without a final dump", never a kill without evidence),
// `unknown` (no final dump in any process of the job and nothing else: the end is not known).
// The dumps' inference (process-fate.ts) stays, as evidence of lower weight.

import type { Job, ProcessSeries } from '../model/model.js';
import { processFates, type ProcessFate } from './process-fate.js';
import type { Evidence, KillEvidence, KillRecord } from './kill-evidence.js';
import { processParents } from '../model/memory-context.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { writesFinalDump } from '../model/process-builder.js';

export type Fate = 'oom-killed' | 'killed' | 'exited' | 'torn-down' | 'stopped' | 'unknown';

/** Fates in the order a reader wants them (the kill first). */
export const FATE_ORDER: readonly Fate[] = ['oom-killed', 'killed', 'torn-down', 'stopped', 'unknown', 'exited'];

/** A fate in words, as the CLI, the app and the report print it. */
export function fateText(f: Fate): string {
  return f === 'stopped' ? 'stopped without a final dump' : f;
}

/** A process that ended within this long after another's kill, its parent still running, was torn down. */
export const TEARDOWN_WINDOW_S = 60;

export interface ProcessEnd {
  fate: Fate;
  fateEvidence: Evidence[];
  /** the kill that named this process (kernel, Ray, or an unattributed count given to it) */
  kill: KillRecord | null;
  /** the dumps' own inference (cut dump, no final dump, stopped early) */
  inferred: ProcessFate;
  endedAtMs: number | null;
}

function lastTime(p: ProcessSeries): number | null {
  const t = seriesTimes(p);
  return t.axis === 'wall' && t.snapshots.length > 0 ? (t.snapshots[t.snapshots.length - 1].timeMs as number) : null;
}

function dumpEvidence(p: ProcessSeries, f: ProcessFate): Evidence[] {
  const last = p.snapshots[p.snapshots.length - 1];
  return f.evidence.map((text) => ({ source: 'dumps' as const, file: last?.file ?? p.key, line: null, text }));
}

/**
 * Fates of every process. `ev.kills` with a processIndex decide first; unattributed OOM counts (SLURM,
 * Kubernetes, the cgroup without a kernel log) go to the processes the dumps infer killed when there are no
 * more of those than the count says (else they stay unattributed: no guess).
 */
export function processEnds(
  job: Pick<Job, 'processes'>,
  ev: KillEvidence,
): { ends: ProcessEnd[]; kills: KillRecord[] } {
  const inferred = processFates(job);
  const parents = processParents(job.processes);
  const index = new Map(job.processes.map((p, i) => [p.key, i]));
  const ends = job.processes.map((p) => lastTime(p));
  const kills = [...ev.kills];
  const byProcess = new Map<number, KillRecord>();
  for (const k of kills)
    if (k.processIndex !== null && !byProcess.has(k.processIndex)) byProcess.set(k.processIndex, k);

  // unattributed OOM counts: only when the dumps point at no more processes than were killed
  if (byProcess.size === 0 && ev.unattributed.length > 0) {
    const candidates = inferred.map((f, i) => ({ f, i })).filter(({ f, i }) => f.killed && !ev.signals.has(i));
    const counted = ev.unattributed.map((u) => u.count).filter((c): c is number => c !== null);
    const count = counted.length > 0 ? Math.max(...counted) : 1;
    if (candidates.length > 0 && candidates.length <= count) {
      const u = ev.unattributed[0];
      for (const { i } of candidates) {
        const k: KillRecord = {
          pid: job.processes[i].pid,
          by: u.by,
          processIndex: i,
          comm: null,
          atMs: u.atMs ?? ends[i],
          timeFrom: u.atMs !== null ? "the log line's time" : 'its last dump (the kill came after it)',
          rssBytes: null,
          anonRssBytes: null,
          limitBytes: ev.cgroup?.limitBytes ?? null,
          usageBytes: null,
          scope: null,
          invokedByPid: null,
          // a count without a pid: which process it was is the dumps' inference
          match: {
            by: 'inferred',
            processPid: job.processes[i].pid,
            note: 'the dumps say it was killed (no final dump), no more processes than the kills counted',
          },
          evidence: ev.unattributed.map((x) => x.evidence),
        };
        kills.push(k);
        byProcess.set(i, k);
      }
    }
  }
  const killTimes = [...byProcess.entries()]
    .map(([i, k]) => ({ i, at: k.atMs }))
    .filter((x): x is { i: number; at: number } => x.at !== null);

  const out = job.processes.map((p, i): ProcessEnd => {
    const f = inferred[i];
    const fromDumps = dumpEvidence(p, f);
    const sig = ev.signals.get(i) ?? [];
    const down = ev.teardowns.get(i) ?? [];
    const exit = ev.exits.get(i) ?? null;
    const logs = [...sig, ...down, ...(exit ? [exit.evidence] : [])];
    const end = ends[i];
    const k = byProcess.get(i) ?? null;
    const result = (fate: Fate, fateEvidence: Evidence[], kill: KillRecord | null = null): ProcessEnd => ({
      fate,
      fateEvidence,
      kill,
      inferred: f,
      endedAtMs: end,
    });
    if (k) return result('oom-killed', [...k.evidence, ...logs, ...fromDumps], k);
    if (sig.length > 0) return result('killed', [...logs, ...fromDumps]);
    if (down.length > 0) return result('torn-down', [...logs, ...fromDumps]);
    // torn down: ended soon after another process's kill, while its parent in the job lived on
    const parentKey = parents.get(p.key) ?? null;
    const parentEnd = parentKey !== null ? ends[index.get(parentKey)!] : null;
    const after =
      end !== null
        ? killTimes.find((x) => x.i !== i && end >= x.at - 1000 && end - x.at <= TEARDOWN_WINDOW_S * 1000)
        : undefined;
    if (after && parentEnd !== null && end !== null && parentEnd >= end) {
      const victim = job.processes[after.i];
      return result('torn-down', [
        {
          source: 'dumps',
          file: p.snapshots[p.snapshots.length - 1]?.file ?? p.key,
          line: null,
          text: `its dumps end ${((end - after.at) / 1000).toFixed(1)} s after the kill of pid ${victim.pid}, while its parent (pid ${job.processes[index.get(parentKey!)!].pid}) went on`,
        },
        ...logs,
        ...fromDumps,
      ]);
    }
    if (exit) return result('exited', [exit.evidence, ...fromDumps]);
    // a final dump says the process exited, where its format writes one (jemalloc's prof_final; a pprof, massif or
    // memleak capture ends with no such dump)
    if (!p.endedWithoutFinalDump && p.snapshots.some((s) => writesFinalDump(s.format))) {
      const last = p.snapshots[p.snapshots.length - 1];
      return result('exited', [
        { source: 'dumps', file: last.file, line: null, text: 'it wrote its final dump (prof_final: exit)' },
      ]);
    }
    // no log says why: the dumps' inference is all there is, and it is no kill
    if (f.killed) return result('stopped', fromDumps);
    return result('unknown', []);
  });
  return { ends: out, kills };
}
