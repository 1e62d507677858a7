// How the app names a stack in a row, a legend or a note: the frame that leads it (core/frames/stack-labels.ts
// leadFrameIndex: in python-first the first Python frame; markers of folded frames never lead), a short caller chain
// and its call site (`file:line`), over the process's frame catalog.

import type { FrameCatalog } from '../frames/catalog.js';
import { callSite, leadFrameIndex } from '../frames/stack-labels.js';
import type { FrameGroup, StackMode } from '../model/vocab.js';

export interface StackLabel {
  label: string;
  /** up to three callers of the leading frame, `a ← b ← c` */
  context: string;
  /** the legend group of the leading frame */
  group: FrameGroup;
  site: string | null;
}

/** The name of a stack (its row's label, callers and call site) given as the catalog's keys (leaf first) in a view of `mode`. */
export function stackName(table: FrameCatalog, keys: ArrayLike<number>, mode: StackMode = 'merged'): StackLabel {
  const shown = Array.from(keys, (k) => table.frames[k]).filter((f) => f.kind !== 'folded');
  if (shown.length === 0)
    return {
      label: mode === 'python' ? '(no Python frames)' : '(no frames)',
      context: '',
      group: 'unknown',
      site: null,
    };
  const lead = leadFrameIndex(shown, mode);
  const ctx = shown.slice(lead + 1, lead + 4).map((c) => c.label);
  return {
    label: shown[lead].label,
    context: ctx.join(' ← '),
    group: shown[lead].group,
    site: callSite(shown.slice(lead)),
  };
}

/** A legend's line: the label and its first caller. */
export function legendLabel(l: StackLabel): string {
  return l.context ? `${l.label} ← ${l.context.split(' ← ')[0]}` : l.label;
}
