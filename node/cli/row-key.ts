// The CLI's "same visible frames" key for core/query/rows.ts: stacks whose shown frames are the same at the
// granularity (folded frames do not count) are one row, except in the merged view at line granularity without
// filters, where every frame is shown and each stack is its own row.

import type { RowKey } from '../../core/query/rows.js';
import { atGranularity, frameKey, isActive, type Granularity } from '../../core/frames/stack-filter.js';
import { DEFAULT_STACK_MODE } from '../../core/frames/python-stacks.js';
import type { FoldedStack } from '../../core/frames/stack-labels.js';
import type { FrameOut } from './describe-stacks.js';
import { flag, sliceFilter, type ParsedArgs } from './args.js';
import { granularityOf, type Viewer } from './common.js';

/** What makes two shown stacks the same row: their surviving frames at the granularity. */
export function shownKey(stack: FoldedStack<FrameOut>, g: Granularity): string {
  return atGranularity(stack.frames, g)
    .map((f) => (f.function || f.kind === 'python' || g === 'files' ? frameKey(f, g) : f.address))
    .join(';');
}

/** The row key of the command's view (null: the view drops the stack). */
export function rowKey(view: Viewer, args: ParsedArgs): RowKey {
  const mode = flag(args, 'stacks') ?? DEFAULT_STACK_MODE;
  const g = granularityOf(args);
  const perStack = mode === 'merged' && g === 'lines' && !isActive(sliceFilter(args));
  return (id) => {
    const stack = view(id);
    if (!stack) return null;
    return perStack ? String(id) : shownKey(stack, g);
  };
}
