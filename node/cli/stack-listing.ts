// What `top` and `diff` share in their text (the listings themselves are the engine's, core/query/stack-listings.ts):
// a listed stack's column, the indented table, and the end: the listing's JSON document, or the warnings after
// the text.

import type { Frame } from '../../core/frames/describe.js';
import type { FoldedStack, FoldReason } from '../../core/frames/stack-labels.js';
import type { Granularity } from '../../core/frames/stack-filter.js';
import type { ListedStack } from '../../core/query/stack-listings.js';
import type { LoadWarning } from '../../core/model/model.js';
import { indent, printWarnings, tableColumns, type Output } from './common.js';
import { table } from './format.js';
import { stackText } from './stack-text.js';

/** The stack column: the shown frames at the granularity, and how many stacks the row holds. */
export function stackCell(s: ListedStack, granularity: Granularity): string {
  // the label counts each fold's frames by reason (core/frames/stack-labels.ts stackLabel): the JSON's counts do
  const stack: FoldedStack<Frame> = {
    frames: s.frames,
    folds: (s.folded ?? []).map((f) => ({
      index: f.index,
      reason: f.reason as FoldReason,
      frames: new Array<Frame>(f.count),
    })),
  };
  const members = s.stackIds?.length ?? 1;
  return stackText(stack, 6, granularity) + (members > 1 ? ` [${members} stacks]` : '');
}

/** A process's table, indented. */
export function listingTable(io: Output, head: string[], rows: string[][], alignRight: boolean[], footer = ''): void {
  io.out(indent(table(head, rows, alignRight, tableColumns(io))) + footer + '\n');
}

/** The end of a listing: its JSON document (processes, stacks, warnings), or the warnings after the text. */
export function endListing(
  listing: { processes: unknown[]; stacks: unknown[]; warnings: LoadWarning[] },
  json: boolean,
  io: Output,
): void {
  if (json)
    io.out(
      JSON.stringify({ processes: listing.processes, stacks: listing.stacks, warnings: listing.warnings }, null, 2),
    );
  else printWarnings(listing.warnings, io);
}
