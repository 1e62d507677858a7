// Turns interned stacks into frames for output. This is where symbolization and Python frames plug in:
// the CLI asks for a describer once per process, then for the frames of each stack it prints.

import type { ProcessSeries } from '../analysis/model.js';
import { frameLabel, locateAddress } from '../analysis/frame-labels.js';
import { applyStackMode, isInterpreterModule, type StackMode } from '../analysis/python-stacks.js';

export type FrameKind = 'native' | 'allocator' | 'python';

export interface FrameOut {
  /** raw return address as written in the dump, hex */
  address: string;
  kind: FrameKind;
  module: string | null;
  moduleOffset: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
  /** frames inlined at this address, innermost first (the last is `function` itself) */
  inlined?: { function: string | null; file: string | null; line: number | null }[];
  /** whether the binary the symbols came from matched the mapping (symbolize/locate.ts); absent when not symbolized */
  binary?: 'verified' | 'unverified' | 'mismatch';
}

export interface StackDescriber {
  frames(stackId: number): FrameOut[];
}

export interface DescribeOptions {
  showAllocator: boolean;
}

/** Frames from the maps alone: module+offset, allocator frames marked. */
export function mapsDescriber(proc: ProcessSeries): StackDescriber {
  const cache = new Map<number, Omit<FrameOut, 'kind'>>();
  return {
    frames(stackId: number): FrameOut[] {
      const { offsets, frames, allocatorDepth } = proc.stacks;
      const out: FrameOut[] = [];
      for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) {
        const a = frames[k];
        let loc = cache.get(a);
        if (!loc) {
          const l = locateAddress(proc, a);
          loc = { address: l.address, module: l.module, moduleOffset: l.moduleOffset };
          cache.set(a, loc);
        }
        out.push({ ...loc, kind: k - offsets[stackId] < allocatorDepth[stackId] ? 'allocator' : 'native' });
      }
      return out;
    },
  };
}

export function describeFrame(f: FrameOut): string {
  if (f.kind === 'python') return `${f.function ?? '?'} (${f.file ? baseOf(f.file) : '?'}:${f.line ?? '?'})`;
  // A name from a binary that does not fit the mapping may be wrong: say so rather than present a guess as fact.
  const mark = f.binary === 'mismatch' ? ' [binary mismatch]' : '';
  if (f.function) return (f.file ? `${f.function} (${baseOf(f.file)}:${f.line ?? '?'})` : f.function) + mark;
  return frameLabel({ address: f.address, module: f.module, modulePath: null, moduleOffset: f.moduleOffset });
}

function baseOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
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
      const frames = inner.frames(stackId);
      const moduleOf = new Map(frames.map((f) => [f.address, f.module] as const));
      // merged: the interpreter's own frames outward of the innermost Python frame are hidden
      const isInterpreterFrame = (a: string): boolean => isInterpreterModule(moduleOf.get(a));
      return applyStackMode(
        frames,
        table,
        mode,
        (p) => ({ address: p.addr, kind: 'python', module: null, moduleOffset: null, function: p.function, file: p.file, line: p.line }),
        { isInterpreterFrame },
      );
    },
  };
}
