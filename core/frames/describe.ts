// The one frame pipeline's first half: a process's stacks as frames, maps → symbols → Python frames. The CLI, the
// exports, the report and the app's views (core/frames/catalog.ts) all name a frame here, so a frame reads the same
// in every front-end. What a view then hides, filters and folds is core/frames/view.ts.

import type { ProcessSeries } from '../model/model.js';
import { isAllocatorPath } from '../model/process-builder.js';
import { symbolAt, type BinaryCheck } from '../model/symbol-table.js';
import type { FrameKind, ModuleRole, StackMode } from '../model/vocab.js';
import { basename } from '../formats/dump-filename.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import { locateAddress } from './frame-labels.js';
import { decodePseudoAddress, layoutOf } from '../formats/pyframes.js';
import { applyStackMode, isInterpreterModule, type PythonFrameView } from './python-stacks.js';

export interface FrameLine {
  function: string | null;
  file: string | null;
  line: number | null;
}

/** One frame of a stack, as every front-end shows it (and the CLI's --json prints it). */
export interface Frame {
  /** raw return address as written in the dump (hex), or the Python pseudo-address */
  address: string;
  kind: FrameKind;
  /** a native frame's module in its process (absent for Python frames and markers) */
  role?: ModuleRole;
  module: string | null;
  moduleOffset: string | null;
  /** the module's path as in the maps (what --focus and the other filters match, as pprof's mapping file) */
  modulePath?: string | null;
  function?: string | null;
  file?: string | null;
  line?: number | null;
  /** frames inlined at this address, innermost first (the last is `function` itself) */
  inlined?: FrameLine[];
  /**
   * whether the binary the symbols came from matched the mapping (core/symbolize/locate.ts); absent when not
   * symbolized. A name from a 'mismatch' binary may be wrong: every front-end marks it (frameMark).
   */
  binary?: BinaryCheck;
}

/** Frames of a process's stacks, leaf first. */
export interface StackDescriber {
  frames(stackId: number): Frame[];
  /** true for a stack the view's filters (--focus, --ignore, …) leave out; absent: none is */
  dropped?(stackId: number): boolean;
}

/** The main executable: the first file mapping that is not a shared library. */
export function guessMainExecutable(maps: readonly MapsEntry[] | null): string | null {
  if (!maps) return null;
  for (const m of maps) {
    if (m.path === '' || m.path.startsWith('[')) continue;
    if (/\.so(\.|$)/.test(basename(m.path))) continue;
    return m.path;
  }
  return null;
}

/** The role of a mapped module (a Python interpreter binary is a library: the user's program is the script). */
export function moduleRole(path: string | null, mainExe: string | null): ModuleRole {
  if (path === null || path === '' || path.startsWith('[')) return 'unknown';
  if (mainExe !== null && path === mainExe && !isInterpreterModule(path)) return 'program';
  return 'library';
}

/**
 * The native frame of each address of a process: module+offset from the maps (findMapping), the module's role, and
 * the process's symbols when it has them (ProcessSeries.symbols: function, file:line, inlined frames, the binary
 * check; a CPython perf trampoline becomes a Python frame). One Frame per (address, leaf or caller, allocator or
 * not), made on first use and shared by every stack that holds it: describers and views never change a frame, and
 * building one per frame of every stack made `top` over a large job mostly garbage collection.
 */
export class NativeFrames {
  private readonly made = new Map<number, Frame>();
  private readonly mainExe: string | null;

  constructor(private readonly proc: ProcessSeries) {
    this.mainExe = guessMainExecutable(proc.maps);
  }

  /**
   * The frame of address `a` at `position` in a stack (0: the leaf, looked up at the PC; callers at PC − 1).
   * `allocator`: whether it counts as the allocator's; by default, whether its module is (isAllocatorPath).
   */
  frame(a: number, position: number, allocator?: boolean): Frame {
    // six entries per address: leaf or caller × allocator by the caller's say (yes, no) or by the module's path
    const key = a * 6 + (position === 0 ? 0 : 3) + (allocator === undefined ? 0 : allocator ? 1 : 2);
    let f = this.made.get(key);
    if (!f) {
      f = this.make(a, position, allocator);
      this.made.set(key, f);
    }
    return f;
  }

  private make(a: number, position: number, allocator: boolean | undefined): Frame {
    const l = locateAddress(this.proc, a);
    const inAllocator = allocator ?? (l.modulePath !== null && isAllocatorPath(l.modulePath));
    const f: Frame = {
      address: l.address,
      module: l.module,
      moduleOffset: l.moduleOffset,
      modulePath: l.modulePath,
      kind: inAllocator ? 'allocator' : 'native',
      role: moduleRole(l.modulePath, this.mainExe),
    };
    const s = symbolAt(this.proc, a, position);
    if (!s) return f;
    if (s.binary) f.binary = s.binary;
    if (s.frames.length === 0) return f;
    const outer = s.frames[s.frames.length - 1];
    f.function = outer.function;
    f.file = outer.file;
    f.line = outer.line;
    if (s.python) {
      f.kind = 'python';
      delete f.role;
    }
    if (s.frames.length > 1) f.inlined = s.frames.map((x) => ({ function: x.function, file: x.file, line: x.line }));
    return f;
  }
}

/** The native frames of each stack (NativeFrames), its leading allocator frames (allocatorDepth) marked. */
export function nativeDescriber(proc: ProcessSeries): StackDescriber {
  const native = new NativeFrames(proc);
  return {
    frames(stackId: number): Frame[] {
      const { offsets, frames, allocatorDepth } = proc.stacks;
      const out: Frame[] = [];
      for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) {
        const pos = k - offsets[stackId];
        out.push(native.frame(frames[k], pos, pos < allocatorDepth[stackId]));
      }
      return out;
    },
  };
}

/** Whether a frame is (or inlines) the CPython eval loop, where a Python group's frames belong. */
function isEvalFrame(f: Frame): boolean {
  const EVAL = '_PyEval_EvalFrameDefault';
  return f.function === EVAL || (f.inlined?.some((l) => l.function === EVAL) ?? false);
}

/**
 * Python frames (PYFRAMES/1 pseudo-addresses) shown per stack mode: merged (in place of the interpreter's eval
 * frames), python (only them) or native (without them). Markers are not frames; a Python frame the process's table
 * does not name reads "<unresolved 0x…>". Nothing is hidden here: the Python-first view folds the interpreter's
 * frames (core/frames/view.ts).
 */
export function pythonDescriber(inner: StackDescriber, proc: ProcessSeries, mode: StackMode): StackDescriber {
  const table = proc.pythonFrames ?? null;
  // Whether any address of the process is a Python pseudo-address: without one (no capture library), every
  // stack's native frames are its frames in every mode but python, and the per-stack view is skipped.
  let pseudo: boolean | undefined;
  const layout = layoutOf(table);
  return {
    frames(stackId: number): Frame[] {
      const frames = inner.frames(stackId);
      if (mode !== 'python') {
        pseudo ??= proc.addresses.hex.some((h) => decodePseudoAddress(h, layout) !== null);
        if (!pseudo) return frames;
      }
      const toPython = (p: PythonFrameView): Frame =>
        // a native frame a capture named (memleak's `symbol+0xoff [module]`, PyTorch's C++ frames); among the
        // stack's leading allocator frames (allocatorDepth: PyTorch's own, core/frames/torch-frames.ts) it is one
        p.native
          ? {
              address: p.addr,
              kind: frames[p.index]?.kind === 'allocator' ? 'allocator' : 'native',
              module: p.module ?? null,
              moduleOffset: null,
              function: p.function,
              ...(p.file ? { file: p.file, line: p.line } : {}),
            }
          : {
              address: p.addr,
              kind: 'python',
              module: null,
              moduleOffset: null,
              function: p.function,
              file: p.file,
              line: p.line,
            };
      // symbolized eval frames put the Python groups of an unmerged stack back in place (as memray pairs them)
      return applyStackMode(frames, table, mode, toPython, {
        isEvalFrame: (addr) => frames.some((f) => f.address === addr && isEvalFrame(f)),
      });
    },
  };
}

/** The whole chain for a process: module+offset from the maps, its symbols when it has them, Python frames per mode. */
export function describeProcess(proc: ProcessSeries, mode: StackMode): StackDescriber {
  return pythonDescriber(nativeDescriber(proc), proc, mode);
}

/** `module+0xoffset`, else the raw address. */
export function unresolvedName(f: Pick<Frame, 'address' | 'module' | 'moduleOffset'>): string {
  return f.module !== null && f.moduleOffset !== null ? `${f.module}+${f.moduleOffset}` : f.address;
}

/** The function name to show for a frame: its (outer) function, else module+offset or the address. */
export function frameName(f: Frame): string {
  return f.function ? f.function : unresolvedName(f);
}

/** Lines of a frame, innermost first (one per inlined function), as pprof's Location.line wants them. */
export function frameLines(f: Frame): FrameLine[] {
  if (f.inlined && f.inlined.length > 0)
    return f.inlined.map((l) => ({ function: l.function ?? unresolvedName(f), file: l.file, line: l.line }));
  return [{ function: frameName(f), file: f.file ?? null, line: f.line ?? null }];
}

/**
 * The one mark of a name that may be wrong: symbols read from a binary that does not match the mapping
 * (locate.ts 'mismatch'). The CLI prints it after the frame, the app shows it as a badge; null when none.
 */
export function frameMark(f: {
  kind: FrameKind;
  function?: string | null;
  binary?: BinaryCheck | null;
}): 'binary mismatch' | null {
  return f.kind !== 'python' && f.function && f.binary === 'mismatch' ? 'binary mismatch' : null;
}
