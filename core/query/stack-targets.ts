// Stacks as note and session targets (core/notes/notes.ts: a stack named by its return addresses, so it survives a
// reload of the same dumps), and such targets back to stack ids in the loaded job.

import type { StackTarget } from '../notes/schema.js';
import { resolveStack, stackTarget } from '../notes/notes.js';
import { stackName } from './labels.js';
import type { QuerySession } from './session.js';

/** Each stack of process `i` as a target; its label is its first surviving frame in the default (python-first) view. */
export function stackTargets(s: QuerySession, i: number, stackIds: readonly number[]): StackTarget[] {
  const p = s.proc(i);
  const table = s.catalog(i);
  return stackIds.map((id) => {
    const l = stackName(table, table.stackKeys(id, { mode: 'python-first', hideAllocator: true }));
    return stackTarget(p, id, l.label.startsWith('(no ') ? undefined : l.label);
  });
}

/** Targets back to (process, stack); null for one not in these dumps (or when no job is loaded). */
export function resolveStacks(
  s: QuerySession,
  targets: readonly StackTarget[],
): ({ proc: number; stackId: number } | null)[] {
  if (!s.hasJob) return targets.map(() => null);
  const byKey = new Map(s.job.processes.map((p, i) => [p.key, i] as const));
  return targets.map((t) => {
    const i = byKey.get(t.process);
    if (i === undefined) return null;
    const id = resolveStack(s.proc(i), t);
    return id === null ? null : { proc: i, stackId: id };
  });
}
