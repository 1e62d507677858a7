// Frames of a process's stacks for exports and reports: one pure describer chain that mirrors the CLI's
// (maps → symbols → Python frames), so exports made in the app's worker and on the command line agree.
// A caller that already has a describer (the CLI's, with its own symbolization) passes it instead.

import type { ProcessSeries } from '../model/model.js';
import { locateAddress } from '../frames/frame-labels.js';
import { applyStackMode, DEFAULT_STACK_MODE, type StackMode } from '../frames/python-stacks.js';
import { foldOptionsFor, foldStack, type Fold } from '../frames/stack-labels.js';
import { filterStack, isActive, type StackFilter } from '../frames/stack-filter.js';
import { symbolAt, type SymbolTable } from '../symbolize/symbolize.js';

/** 'folded': a marker standing for a run of folded frames (core/frames/stack-labels.ts) */
export type ExportFrameKind = 'native' | 'allocator' | 'python' | 'folded';

export interface ExportLine {
  function: string | null;
  file: string | null;
  line: number | null;
}

/** One frame, as the CLI describes it (node/cli/describe-stacks.ts FrameOut is structurally this). */
export interface ExportFrame {
  /** raw return address (hex), or the Python pseudo-address */
  address: string;
  kind: ExportFrameKind;
  module: string | null;
  moduleOffset: string | null;
  /** the module's path as in the maps */
  modulePath?: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
  /** inlined frames at this address, innermost first (the last is `function` itself) */
  inlined?: ExportLine[];
}

/** Frames of a stack, leaf first, allocator frames included (marked). */
export interface FrameSource {
  frames(stackId: number): ExportFrame[];
  /** true for a stack the view's filters (--focus, --ignore, …) leave out; absent: none is */
  dropped?(stackId: number): boolean;
}

/**
 * A frame source with pprof's slicing (core/frames/stack-filter.ts) applied to the frames a view shows (allocator
 * frames only with `showAllocator`; they stay in front, for the exports to drop or keep). Wrap before folding.
 */
export function filteringSource(source: FrameSource, filter: StackFilter, showAllocator: boolean): FrameSource {
  if (!isActive(filter)) return source;
  const cache = new Map<number, ExportFrame[] | null>();
  const get = (id: number): ExportFrame[] | null => {
    let v = cache.get(id);
    if (v === undefined) {
      const all = source.frames(id);
      const alloc = showAllocator ? [] : all.filter((f) => f.kind === 'allocator');
      const kept = filterStack(showAllocator ? all : all.filter((f) => f.kind !== 'allocator'), filter);
      v = kept ? [...alloc, ...kept] : null;
      cache.set(id, v);
    }
    return v;
  };
  return { frames: (id) => get(id) ?? [], dropped: (id) => get(id) === null || (source.dropped?.(id) ?? false) };
}

export interface FrameSourceOptions {
  /** the symbolizer's result for this process; frames stay module+offset without it */
  symbols?: SymbolTable | null;
  /** python-first (default: interpreter frames folded), merged (every frame), Python only, native only */
  stackMode?: StackMode;
  /** fold import-machinery frames too */
  foldImports?: boolean;
}

/**
 * The marker frame of a fold. Its name carries no count, so that flame graphs and pprof merge the markers of one
 * place whatever the number of frames folded there.
 */
export function foldMarker(fold: Pick<Fold<unknown>, 'reason'>): ExportFrame {
  const name = fold.reason === 'import' ? '[import machinery]' : '[interpreter frames]';
  return { address: '0x0', kind: 'folded', module: null, moduleOffset: null, function: name, file: null, line: null };
}

/** A frame source whose stacks show the view's folds as marker frames (python-first; --fold-imports). */
export function foldingSource(
  source: FrameSource,
  proc: ProcessSeries,
  mode: StackMode,
  foldImports: boolean,
): FrameSource {
  const opts = foldOptionsFor(proc, mode, foldImports);
  if (!opts.interpreter && !opts.imports) return source;
  return {
    dropped: source.dropped ? (id) => source.dropped?.(id) ?? false : undefined,
    frames(stackId: number): ExportFrame[] {
      const { frames, folds } = foldStack(source.frames(stackId), opts);
      const out: ExportFrame[] = [];
      let k = 0;
      for (let i = 0; i <= frames.length; i++) {
        while (k < folds.length && folds[k].index === i) out.push(foldMarker(folds[k++]));
        if (i < frames.length) out.push(frames[i]);
      }
      return out;
    },
  };
}

/** The pure describer chain: module+offset from the maps, symbols when given, Python frames per mode. */
export function processFrameSource(proc: ProcessSeries, options: FrameSourceOptions = {}): FrameSource {
  const symbols = options.symbols ?? null;
  const mode = options.stackMode ?? DEFAULT_STACK_MODE;
  const table = proc.pythonFrames ?? null;
  const located = new Map<
    number,
    { address: string; module: string | null; moduleOffset: string | null; modulePath: string | null }
  >();
  const source: FrameSource = {
    frames(stackId: number): ExportFrame[] {
      const { offsets, frames, allocatorDepth } = proc.stacks;
      const out: ExportFrame[] = [];
      for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) {
        const a = frames[k];
        const pos = k - offsets[stackId];
        let loc = located.get(a);
        if (!loc) {
          const l = locateAddress(proc, a);
          loc = { address: l.address, module: l.module, moduleOffset: l.moduleOffset, modulePath: l.modulePath };
          located.set(a, loc);
        }
        const f: ExportFrame = { ...loc, kind: pos < allocatorDepth[stackId] ? 'allocator' : 'native' };
        const s = symbols ? symbolAt(symbols, a, pos) : undefined;
        if (s && s.frames.length > 0) {
          const outer = s.frames[s.frames.length - 1];
          f.function = outer.function;
          f.file = outer.file;
          f.line = outer.line;
          if (s.frames.length > 1)
            f.inlined = s.frames.map((x) => ({ function: x.function, file: x.file, line: x.line }));
        }
        out.push(f);
      }
      return applyStackMode(out, table, mode, (p) => ({
        address: p.addr,
        kind: 'python',
        module: null,
        moduleOffset: null,
        function: p.function,
        file: p.file,
        line: p.line,
      }));
    },
  };
  return foldingSource(source, proc, mode, options.foldImports ?? false);
}

/** Frames to export: allocator frames dropped unless asked for. */
export function visible(frames: readonly ExportFrame[], showAllocator: boolean): ExportFrame[] {
  return showAllocator ? [...frames] : frames.filter((f) => f.kind !== 'allocator');
}

/** `module+0xoffset`, else the raw address. */
export function unresolvedName(f: Pick<ExportFrame, 'address' | 'module' | 'moduleOffset'>): string {
  return f.module !== null && f.moduleOffset !== null ? `${f.module}+${f.moduleOffset}` : f.address;
}

/** The function name to show for a frame: its (outer) function, else module+offset or the address. */
export function frameName(f: ExportFrame): string {
  return f.function ? f.function : unresolvedName(f);
}

/** Lines of a frame, innermost first (one per inlined function), as pprof's Location.line wants them. */
export function frameLines(f: ExportFrame): ExportLine[] {
  if (f.inlined && f.inlined.length > 0)
    return f.inlined.map((l) => ({ function: l.function ?? unresolvedName(f), file: l.file, line: l.line }));
  return [{ function: frameName(f), file: f.file ?? null, line: f.line ?? null }];
}

export function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
