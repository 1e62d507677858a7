// Which modules' frames stay unresolved at a snapshot, the bytes through them and what to hand over (the worker's
// `missingBinaries` answer, `heaplens binaries`): core/symbolize/missing-binaries.ts over the process's symbol table.

import type { ProcessSeries } from '../model/model.js';
import { missingBinaries, type MissingBinariesSummary } from '../symbolize/missing-binaries.js';

export interface MissingBinaries {
  summary: MissingBinariesSummary;
  /** the process was symbolized (without a table every module is unresolved for want of trying) */
  symbolized: boolean;
}

export function missingBinariesAt(
  p: ProcessSeries,
  snapshot: number,
  opts: { includeAllocator: boolean },
): MissingBinaries {
  return {
    summary: missingBinaries(p, snapshot, p.symbols?.modules ?? [], opts),
    symbolized: p.symbols !== null,
  };
}
