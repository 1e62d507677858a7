// Turns interned stacks into frames for output. This is where symbolization and Python frames plug in:
// the CLI asks for a describer once per process, then for the frames of each stack it prints.

import type { ProcessSeries } from '../../core/model/model.js';
import { locateAddress } from '../../core/frames/frame-labels.js';
import { applyStackMode, type StackMode } from '../../core/frames/python-stacks.js';
import { foldOptionsFor, foldStack, frameText, stackLabel, type FoldedStack } from '../../core/frames/stack-labels.js';
import {
  atGranularity,
  filterStack,
  frameTextAt,
  type Granularity,
  type StackFilter,
} from '../../core/frames/stack-filter.js';

/** 'folded': a marker frame standing for folded frames (core/export/frames.ts foldMarker) */
export type FrameKind = 'native' | 'allocator' | 'python' | 'folded';

export interface FrameOut {
  /** raw return address as written in the dump, hex */
  address: string;
  kind: FrameKind;
  module: string | null;
  moduleOffset: string | null;
  /** the module's path as in the maps (what --focus and the other filters match, as pprof's mapping file) */
  modulePath?: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
  /** frames inlined at this address, innermost first (the last is `function` itself) */
  inlined?: { function: string | null; file: string | null; line: number | null }[];
  /** whether the binary the symbols came from matched the mapping (core/symbolize/locate.ts); absent when not symbolized */
  binary?: 'verified' | 'unverified' | 'mismatch';
}

export interface StackDescriber {
  frames(stackId: number): FrameOut[];
}

export interface DescribeOptions {
  showAllocator: boolean;
}

/**
 * Frames from the maps alone: module+offset, allocator frames marked. One FrameOut per (address, kind), shared by
 * every stack that holds it (describers and views never change a frame; building one per frame of every stack
 * made `top` over a large job mostly garbage collection).
 */
export function mapsDescriber(proc: ProcessSeries): StackDescriber {
  const native = new Map<number, FrameOut>();
  const allocator = new Map<number, FrameOut>();
  return {
    frames(stackId: number): FrameOut[] {
      const { offsets, frames, allocatorDepth } = proc.stacks;
      const out: FrameOut[] = [];
      for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) {
        const a = frames[k];
        const inAllocator = k - offsets[stackId] < allocatorDepth[stackId];
        const cache = inAllocator ? allocator : native;
        let f = cache.get(a);
        if (!f) {
          const l = locateAddress(proc, a);
          f = {
            address: l.address,
            module: l.module,
            moduleOffset: l.moduleOffset,
            modulePath: l.modulePath,
            kind: inAllocator ? 'allocator' : 'native',
          };
          cache.set(a, f);
        }
        out.push(f);
      }
      return out;
    },
  };
}

export function describeFrame(f: FrameOut): string {
  // A name from a binary that does not fit the mapping may be wrong: say so rather than present a guess as fact.
  const mark = f.kind !== 'python' && f.function && f.binary === 'mismatch' ? ' [binary mismatch]' : '';
  return frameText(f) + mark;
}

/** A stack's label for the terminal (core/frames/stack-labels.ts): the first surviving frame first. */
export function stackText(stack: FoldedStack<FrameOut>, max = 6, granularity: Granularity = 'lines'): string {
  const text =
    granularity === 'lines' ? (f: FrameOut) => describeFrame(f) : (f: FrameOut) => frameTextAt(f, granularity);
  const shown = { frames: atGranularity(stack.frames, granularity), folds: stack.folds };
  return stackLabel(shown, { max, text: (f) => text(f as FrameOut) });
}

/** Frames to show: allocator frames dropped unless asked for. */
export function visibleFrames(frames: readonly FrameOut[], options: DescribeOptions): FrameOut[] {
  return options.showAllocator ? [...frames] : frames.filter((f) => f.kind !== 'allocator');
}

/**
 * Python frames (PYFRAMES/1 pseudo-addresses) shown per `--stacks`: merged (in place of the
 * interpreter's eval frames), python (only them) or native (without them). Markers are not frames;
 * a Python frame the process's table does not name reads "<unresolved 0x…>".
 */
export function pythonDescriber(inner: StackDescriber, proc: ProcessSeries, mode: StackMode): StackDescriber {
  const table = proc.pythonFrames ?? null;
  return {
    frames(stackId: number): FrameOut[] {
      // Nothing is hidden here: the Python-first view folds the interpreter's frames (stackViewer).
      return applyStackMode(inner.frames(stackId), table, mode, (p) =>
        p.native
          ? { address: p.addr, kind: 'native', module: p.module ?? null, moduleOffset: null, function: p.function }
          : {
              address: p.addr,
              kind: 'python',
              module: null,
              moduleOffset: null,
              function: p.function,
              file: p.file,
              line: p.line,
            },
      );
    },
  };
}

export interface ViewOptions extends DescribeOptions {
  mode: StackMode;
  foldImports: boolean;
  /** --focus/--ignore/--hide/--show (core/frames/stack-filter.ts), applied to every frame before folding */
  filter?: StackFilter;
}

/**
 * Stacks as a view shows them: allocator frames dropped unless asked for, then the filters (null: the stack is
 * filtered out), then folded (core/frames/stack-labels.ts).
 */
export function stackViewer(
  d: StackDescriber,
  proc: ProcessSeries,
  options: ViewOptions,
): (stackId: number) => FoldedStack<FrameOut> | null {
  const fold = foldOptionsFor(proc, options.mode, options.foldImports);
  const filter = options.filter ?? {};
  return (stackId) => {
    const frames = filterStack(visibleFrames(d.frames(stackId), options), filter);
    return frames ? foldStack(frames, fold) : null;
  };
}

/** The JSON of a stack's folds: where each run sits among `frames`, why, and how many frames it holds. */
export function foldsJson(stack: FoldedStack<FrameOut>): {
  folded?: { index: number; reason: string; count: number }[];
} {
  return stack.folds.length > 0
    ? { folded: stack.folds.map((f) => ({ index: f.index, reason: f.reason, count: f.frames.length })) }
    : {};
}
