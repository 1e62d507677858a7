// Per-function rows of a change (the Growth tab's by-function table): each function's self and total bytes in the
// base and the target, over the view's frames (core/frames/catalog.ts keys: one per function, in the stack mode).

import type { FrameCatalog } from '../frames/catalog.js';
import type { StackDelta } from '../stats/diff.js';
import { addStackToFunctions, compareFunctions, finishFunctionRows, type SelfTotal } from '../stats/function-diff.js';
import type { FrameGroup, ViewOptions } from '../model/vocab.js';

export interface FunctionRow extends SelfTotal {
  key: number;
  label: string;
  /** the legend group of the label's frame */
  frameGroup: FrameGroup;
  /** the function's source file (null for native frames without debug info) and module */
  file?: string | null;
  module?: string | null;
}

export interface FunctionRows {
  /** by Δ total, largest first */
  rows: FunctionRow[];
  baseTotal: number;
  targetTotal: number;
}

/** The functions of the stacks `deltas` (the ones the view keeps), a recursive function counted once per stack. */
export function functionRows(table: FrameCatalog, deltas: readonly StackDelta[], view: ViewOptions): FunctionRows {
  const fn = new Map<number, FunctionRow>();
  const row = (k: number): FunctionRow => {
    let r = fn.get(k);
    if (!r) {
      const f = table.frames[k];
      r = {
        key: k,
        label: f.label,
        frameGroup: f.group,
        file: f.file,
        module: f.module,
        selfBase: 0,
        selfTarget: 0,
        selfDelta: 0,
        totalBase: 0,
        totalTarget: 0,
        totalDelta: 0,
      };
      fn.set(k, r);
    }
    return r;
  };
  const seen = new Set<FunctionRow>();
  let baseTotal = 0;
  let targetTotal = 0;
  for (const d of deltas) {
    baseTotal += d.baseBytes;
    targetTotal += d.targetBytes;
    // markers of folded frames are not functions: the by-function table leaves them out
    addStackToFunctions(
      table.stackKeys(d.stackId, view).filter((k) => table.frames[k].kind !== 'folded'),
      d.baseBytes,
      d.targetBytes,
      row,
      seen,
    );
  }
  const rows = finishFunctionRows([...fn.values()]);
  // the cut keeps the largest totals; ties put a leaf before its callers (the table re-sorts, self first)
  rows.sort(compareFunctions('totalDelta'));
  return { rows, baseTotal, targetTotal };
}
