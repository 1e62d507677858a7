// Which snapshot a flag names (`--snapshot`, `--base`, `--target`): one rule for every command and for the
// dataset reader's choice of cells.

import type { ProcessSeries } from '../../core/model/model.js';
import { UsageError } from './args.js';

/** Snapshot index by `last`, `first` or sequence number; -1 when the process has no such snapshot. */
export function snapshotBySeq(p: Pick<ProcessSeries, 'snapshots'>, which: string, option: string): number {
  if (which === 'last') return p.snapshots.length - 1;
  if (which === 'first') return 0;
  if (!/^\d+$/.test(which))
    throw new UsageError(`--${option} takes last, first or a sequence number, got ${JSON.stringify(which)}`);
  return p.snapshots.findIndex((s) => s.seq === Number(which));
}
