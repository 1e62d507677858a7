// Frames and stacks as the terminal shows them. The frames come from the one pipeline (core/frames/describe.ts,
// view.ts); this is only their text.

import type { Frame } from '../../core/frames/describe.js';
import { frameMark } from '../../core/frames/describe.js';
import { stackLabel, frameText, type FoldedStack } from '../../core/frames/stack-labels.js';
import { atGranularity, frameTextAt, type Granularity } from '../../core/frames/stack-filter.js';

/** A frame's text, with the one mark of a name that may be wrong (frameMark) after it: "f file.c:3 [binary mismatch]". */
export function describeFrame(f: Frame): string {
  const mark = frameMark(f);
  return mark ? `${frameText(f)} [${mark}]` : frameText(f);
}

/** A stack's label for the terminal (core/frames/stack-labels.ts): the first surviving frame first. */
export function stackText(stack: FoldedStack<Frame>, max = 6, granularity: Granularity = 'lines'): string {
  const text = granularity === 'lines' ? (f: Frame) => describeFrame(f) : (f: Frame) => frameTextAt(f, granularity);
  const shown = { frames: atGranularity(stack.frames, granularity), folds: stack.folds };
  return stackLabel(shown, { max, text: (f) => text(f as Frame) });
}
