// Which modules' frames stay unresolved at a snapshot, the bytes through them and what to hand over (the worker's
// `missingBinaries` answer, `heaplens binaries`): core/symbolize/missing-binaries.ts over the process's symbol table.

import type { ProcessSeries } from '../model/model.js';
import { missingBinaries, type MissingBinariesSummary } from '../symbolize/missing-binaries.js';
import { viewFolds } from '../frames/view.js';
import { interpreterModules } from '../frames/stack-labels.js';
import type { ViewOptions } from '../model/vocab.js';

export interface MissingBinaries {
  summary: MissingBinariesSummary;
  /** the process was symbolized (without a table every module is unresolved for want of trying) */
  symbolized: boolean;
}

export function missingBinariesAt(
  p: ProcessSeries,
  snapshot: number,
  opts: { includeAllocator: boolean; view?: ViewOptions },
): MissingBinaries {
  return {
    summary: missingBinaries(p, snapshot, p.symbols?.modules ?? [], {
      includeAllocator: opts.includeAllocator,
      // the view's folded interpreter frames are not what it shows unresolved
      folded: opts.view && viewFolds(p, opts.view).interpreter ? interpreterModules(p) : undefined,
    }),
    symbolized: p.symbols !== null,
  };
}
