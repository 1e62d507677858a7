// Which snapshot a name chooses (`--snapshot`, `--base`, `--target`; a listing request's): one rule
// (core/model/snapshot-status.ts snapshotByName) for every command, the engine's listings and the dataset reader's
// choice of cells; a malformed name is a SnapshotChoiceError (the CLI's usage error, exit 2).
// Without a flag, `top` and `diff` read the series' end (core/model/series-end.ts): the last complete dump that is
// not an exit dump written after the interpreter's teardown.

import type { ProcessSeries } from '../model/model.js';
import { snapshotByName } from '../model/snapshot-status.js';
import { defaultSnapshot, teardownIndex, type TeardownInput } from '../model/series-end.js';

/** A snapshot name that is malformed, or that no process has: the message says which names there are. */
export class SnapshotChoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotChoiceError';
  }
}

/** Snapshot index by `last`, `first`, `peak` or sequence number; -1 when the process has no such snapshot. */
export function snapshotBySeq(p: TeardownInput, which: string, option: string): number {
  if (which !== 'last' && which !== 'first' && which !== 'peak' && !/^\d+$/.test(which))
    throw new SnapshotChoiceError(
      `--${option} takes last, first, peak or a sequence number, got ${JSON.stringify(which)}`,
    );
  return snapshotByName(p, which);
}

/**
 * The snapshot `which` names in each process (-1 where that process has none). When no process has it, a usage
 * error (exit 2) that lists the sequence numbers there are.
 */
export function snapshotIndices(
  processes: readonly Pick<ProcessSeries, 'snapshots'>[],
  which: string,
  option: string,
): number[] {
  const at = processes.map((p) => snapshotBySeq(p, which, option));
  if (processes.length > 0 && at.every((i) => i < 0)) {
    const seqs = [...new Set(processes.flatMap((p) => p.snapshots.flatMap((s) => (s.seq === null ? [] : [s.seq]))))];
    throw new SnapshotChoiceError(
      `--${option} ${which}: no snapshot has sequence number ${which}; ${seqs.length > 0 ? `the sequence numbers are ${seqRanges(seqs)}` : 'the dumps have no sequence numbers (use first or last)'}`,
    );
  }
  return at;
}

/**
 * The snapshot each process is read at for `--snapshot which` (null: its default, the series end), and the
 * processes that lack it, as warnings (`top`, `binaries`).
 */
export function snapshotsAsked(
  processes: readonly (Pick<ProcessSeries, 'snapshots'> & TeardownInput & { key: string })[],
  which: string | null,
  warnings: { file: string; message: string }[],
): number[] {
  const at = which !== null ? snapshotIndices(processes, which, 'snapshot') : processes.map(defaultSnapshot);
  for (const [pi, p] of processes.entries())
    if (at[pi] < 0) warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
  return at;
}

/** Sequence numbers as sorted ranges: "0–19, 25, 30–31". */
export function seqRanges(seqs: readonly number[]): string {
  const s = [...seqs].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(j === i ? String(s[i]) : `${s[i]}–${s[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** The snapshot a command reads by default in each process (core/model/series-end.ts). */
export { defaultSnapshot } from '../model/series-end.js';

/**
 * Why the default left the last dump out, for the command's heading ("" when it did not): the exit dump after
 * teardown is still there to ask for by its sequence number.
 */
export function defaultNote(p: TeardownInput, chosen: number, option = 'snapshot'): string {
  const t = teardownIndex(p);
  if (t < 0 || chosen === t) return '';
  const s = p.snapshots[t];
  return ` (the series' end; the exit dump after teardown, ${s.file}, is left out${s.seq !== null ? `: --${option} ${s.seq} reads it` : ''})`;
}
