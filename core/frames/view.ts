// The one frame pipeline's second half: a stack's frames (core/frames/describe.ts) as a view shows them, the same
// in the CLI, the exports, the report and the app: the leading allocator frames dropped unless asked for, then
// pprof's slicing (--focus/--ignore/--hide/--show; core/frames/stack-filter.ts), then the Python-first folds
// (core/frames/stack-labels.ts).

import type { ProcessSeries } from '../model/model.js';
import type { StackMode, ViewOptions } from '../model/vocab.js';
import { DEFAULT_STACK_MODE } from './python-stacks.js';
import { foldOptionsFor, foldStack, type Fold, type FoldedStack, type FoldOptions } from './stack-labels.js';
import { filterStack, type StackFilter } from './stack-filter.js';
import { describeProcess, type Frame, type StackDescriber } from './describe.js';

// Per view object (one per request): its filter is compiled once, not once per stack.
const filterOf = new WeakMap<ViewOptions, StackFilter>();

/** The view's filters as a stack filter (the last of each kind wins, as the CLI's last option does). */
export function viewFilter(view: ViewOptions): StackFilter {
  const hit = filterOf.get(view);
  if (hit) return hit;
  const f: StackFilter = {};
  filterOf.set(view, f);
  for (const c of view.filters ?? []) {
    try {
      f[c.kind] = new RegExp(c.re);
    } catch {
      // an invalid expression filters nothing (the CLI's flag check and the app's chip editor refuse it first)
    }
  }
  return f;
}

/** The stack mode the frames are described in: Python-first unfolded describes as merged. */
export function describedMode(view: Pick<ViewOptions, 'mode' | 'unfold'>): StackMode {
  return view.unfold && view.mode === 'python-first' ? 'merged' : view.mode;
}

/** The folds of a view for a process (none when unfolded). */
export function viewFolds(
  proc: ProcessSeries,
  view: Pick<ViewOptions, 'mode' | 'unfold' | 'foldImports'>,
): FoldOptions {
  return foldOptionsFor(proc, describedMode(view), view.foldImports ?? false);
}

/** Frames to show: allocator frames dropped when the view hides them. */
export function visibleFrames(frames: readonly Frame[], hideAllocator: boolean): Frame[] {
  return hideAllocator ? frames.filter((f) => f.kind !== 'allocator') : [...frames];
}

/** A stack as a view shows it (null: the view's filters leave it out). */
export type StackViewer = (stackId: number) => FoldedStack<Frame> | null;

/** Stacks as a view shows them: allocator frames dropped unless shown, then the filters, then folded. */
export function stackViewer(d: StackDescriber, proc: ProcessSeries, view: ViewOptions): StackViewer {
  const fold = viewFolds(proc, view);
  const filter = viewFilter(view);
  return (stackId) => {
    const frames = filterStack(visibleFrames(d.frames(stackId), view.hideAllocator), filter);
    return frames ? foldStack(frames, fold) : null;
  };
}

/** The viewer of a process's stacks for a view: describeProcess, then stackViewer. */
export function processViewer(proc: ProcessSeries, view: ViewOptions): StackViewer {
  return stackViewer(describeProcess(proc, describedMode(view)), proc, view);
}

/**
 * The marker frame of a fold. Its name carries no count, so that flame graphs and pprof merge the markers of one
 * place whatever the number of frames folded there.
 */
export function foldMarker(fold: Pick<Fold<unknown>, 'reason'>): Frame {
  const name = fold.reason === 'import' ? '[import machinery]' : '[interpreter frames]';
  return { address: '0x0', kind: 'folded', module: null, moduleOffset: null, function: name, file: null, line: null };
}

/** A folded stack's frames with a marker frame where each run was folded. */
export function withMarkers(stack: FoldedStack<Frame>): Frame[] {
  const { frames, folds } = stack;
  if (folds.length === 0) return frames;
  const out: Frame[] = [];
  let k = 0;
  for (let i = 0; i <= frames.length; i++) {
    while (k < folds.length && folds[k].index === i) out.push(foldMarker(folds[k++]));
    if (i < frames.length) out.push(frames[i]);
  }
  return out;
}

/**
 * A process's stacks as a view shows them, folds as marker frames: what exports and the report read. A stack the
 * view's filters leave out is `dropped` (and has no frames).
 */
export function viewSource(proc: ProcessSeries, view: ViewOptions): StackDescriber {
  const viewer = processViewer(proc, view);
  const cache = new Map<number, Frame[] | null>();
  const get = (id: number): Frame[] | null => {
    let v = cache.get(id);
    if (v === undefined) {
      const s = viewer(id);
      v = s ? withMarkers(s) : null;
      cache.set(id, v);
    }
    return v;
  };
  return { frames: (id) => get(id) ?? [], dropped: (id) => get(id) === null };
}

/** The default view: Python-first, allocator frames hidden, no filters. */
export const DEFAULT_VIEW: ViewOptions = { mode: DEFAULT_STACK_MODE, hideAllocator: true };

/** The JSON of a stack's folds: where each run sits among `frames`, why, and how many frames it holds. */
export function foldsJson(stack: FoldedStack<Frame>): {
  folded?: { index: number; reason: string; count: number }[];
} {
  return stack.folds.length > 0
    ? { folded: stack.folds.map((f) => ({ index: f.index, reason: f.reason, count: f.frames.length })) }
    : {};
}
