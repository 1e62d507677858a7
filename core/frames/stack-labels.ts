// The one place that decides how a described stack reads: which frames fold away in the Python-first view and
// how a stack is labelled. For a process with Python frames the default view keeps the Python frames and the
// native frames that are not the interpreter's own (extension modules, libffi, libc, CUDA, …); each run of the
// interpreter's own native frames (libpython*, the python executable) folds into one "N interpreter frames"
// marker, and on request each run of import-machinery frames (`<frozen importlib._bootstrap…>`) does too.
// Folding never drops a stack or a byte: it only changes which frames a stack shows. Labels lead with the first
// frame that survives (the marker is noted after the frames), so the call site that matters comes first.
// Used by node/cli/, core/export/, core/report/ and the app's worker.

import type { ProcessSeries } from '../model/model.js';
import { isInterpreterModule } from './python-stacks.js';

/** The frame fields labelling and folding look at (cli FrameOut, export ExportFrame and the worker's frames fit). */
export interface LabelFrame {
  kind: string;
  /** module basename, null when unknown */
  module: string | null;
  moduleOffset?: string | null;
  address?: string;
  function?: string | null;
  file?: string | null;
  line?: number | null;
}

export type FoldReason = 'interpreter' | 'import';

/** The marker frame's name in trees and tables (catalog.ts), by what it folds. */
export const MARKER_LABEL: Record<FoldReason, string> = {
  interpreter: 'interpreter frames',
  import: 'import machinery',
};

/** A run of consecutive folded frames of one stack. */
export interface Fold<F> {
  /** the run sits leafward of `frames[index]` of the folded stack (index = frames.length: outermost) */
  index: number;
  /** 'import' when the run holds any import-machinery frame */
  reason: FoldReason;
  /** the folded frames, leaf first (for expanding a marker) */
  frames: F[];
}

export interface FoldedStack<F> {
  frames: F[];
  folds: Fold<F>[];
}

export interface FoldOptions {
  /** fold interpreter-own native frames (the Python-first view of a process with Python frames) */
  interpreter: boolean;
  /** fold import-machinery Python frames too */
  imports: boolean;
  /** which modules are the interpreter's own (default: libpython*, python3.X executables) */
  isInterpreterModule?: (module: string) => boolean;
}

/** CPython's import machinery: frozen importlib frames (`<frozen importlib._bootstrap>`, `…_bootstrap_external>`). */
export function isImportMachineryFile(file: string | null | undefined): boolean {
  return !!file && file.startsWith('<frozen importlib._bootstrap');
}

/**
 * The interpreter test of one process: libpython* and python3.X executables by name (isInterpreterModule),
 * plus, when the Python frame table names the version (`python=3.12.1`), the main executable named
 * python / pythonX / pythonX.Y (the interpreter linked into the executable, as pyenv and Debian build it).
 */
export function interpreterModules(proc: Pick<ProcessSeries, 'maps' | 'pythonFrames'>): (module: string) => boolean {
  const version = proc.pythonFrames?.python ?? null;
  const short = version ? /^(\d+)\.(\d+)/.exec(version) : null;
  const names = new Set<string>();
  if (short) for (const n of ['python', `python${short[1]}`, `python${short[1]}.${short[2]}`]) names.add(n);
  return (module) => isInterpreterModule(module) || names.has(module.slice(module.lastIndexOf('/') + 1));
}

/** True when the process's stacks carry Python frames (a table, or pseudo-frames the table does not name). */
export function processHasPython(proc: Pick<ProcessSeries, 'pythonFrames'>): boolean {
  return (proc.pythonFrames ?? null) !== null;
}

/** Why `foldStack` folds a frame (null: it is kept); a frame's own property, so callers may keep it per frame. */
export function foldReasonOf<F extends LabelFrame>(
  f: F,
  opts: FoldOptions,
  isInterp: (m: string) => boolean = opts.isInterpreterModule ?? isInterpreterModule,
): FoldReason | null {
  if (f.kind === 'python') return opts.imports && isImportMachineryFile(f.file) ? 'import' : null;
  if (f.kind === 'allocator' || f.kind === 'folded') return null;
  if (opts.interpreter && f.module !== null && isInterp(f.module)) return 'interpreter';
  return null;
}

/** Folds runs of interpreter-own (and, on request, import-machinery) frames; frames keep their order. */
export function foldStack<F extends LabelFrame>(frames: readonly F[], opts: FoldOptions): FoldedStack<F> {
  const out: F[] = [];
  const folds: Fold<F>[] = [];
  if (!opts.interpreter && !opts.imports) return { frames: [...frames], folds };
  const isInterp = opts.isInterpreterModule ?? isInterpreterModule;
  let run: Fold<F> | null = null;
  for (const f of frames) {
    const reason = foldReasonOf(f, opts, isInterp);
    if (reason === null) {
      run = null;
      out.push(f);
      continue;
    }
    if (!run) {
      run = { index: out.length, reason, frames: [] };
      folds.push(run);
    }
    run.frames.push(f);
    if (reason === 'import') run.reason = 'import';
  }
  return { frames: out, folds };
}

/** "4 interpreter frames", "1 import-machinery frame" */
export function foldText(fold: Pick<Fold<unknown>, 'reason' | 'frames'>): string {
  const n = fold.frames.length;
  const what = fold.reason === 'import' ? 'import-machinery' : 'interpreter';
  return `${n} ${what} frame${n === 1 ? '' : 's'}`;
}

function baseOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** A frame as text: `fn (file.py:line)`, `fn (file.c:line)`, `fn`, else `module+0xoffset` or the address. */
export function frameText(f: LabelFrame): string {
  if (f.kind === 'python') return `${f.function ?? '?'} (${f.file ? baseOf(f.file) : '?'}:${f.line ?? '?'})`;
  if (f.function) return f.file ? `${f.function} (${baseOf(f.file)}:${f.line ?? '?'})` : f.function;
  if (f.module !== null && f.moduleOffset) return `${f.module}+${f.moduleOffset}`;
  return f.address ?? '?';
}

export interface LabelOptions {
  /** frames shown before "… (N more)"; default all */
  max?: number;
  /** frame → text (default frameText) */
  text?: (f: LabelFrame) => string;
  separator?: string;
  /** what a stack without frames reads */
  empty?: string;
}

/**
 * A stack's label, leaf first: the surviving frames, then what was folded ("[+12 interpreter frames]"). The first
 * surviving frame always comes first, whatever was folded leafward of it.
 */
export function stackLabel<F extends LabelFrame>(
  stack: FoldedStack<F> | readonly F[],
  options: LabelOptions = {},
): string {
  const frames = 'folds' in stack ? stack.frames : stack;
  const folds = 'folds' in stack ? stack.folds : [];
  const text = options.text ?? frameText;
  const sep = options.separator ?? ' ← ';
  const max = options.max ?? Infinity;
  let s = frames.slice(0, max).map(text).join(sep);
  if (frames.length > max) s += `${sep}… (${frames.length - max} more)`;
  if (frames.length === 0) s = options.empty ?? '(no frames)';
  const byReason = new Map<FoldReason, number>();
  for (const f of folds) byReason.set(f.reason, (byReason.get(f.reason) ?? 0) + f.frames.length);
  const notes = [...byReason].map(([reason, n]) => `+${foldText({ reason, frames: new Array<unknown>(n) })}`);
  return notes.length > 0 ? `${s} [${notes.join(', ')}]` : s;
}

/** The fold options of a view: `python-first` folds for processes with Python frames; `merged` keeps every frame. */
export function foldOptionsFor(
  proc: Pick<ProcessSeries, 'maps' | 'pythonFrames'>,
  mode: string,
  foldImports: boolean,
): FoldOptions {
  const python = processHasPython(proc);
  return {
    interpreter: python && mode === 'python-first',
    imports: python && foldImports && mode !== 'native',
    isInterpreterModule: interpreterModules(proc),
  };
}

/**
 * Which shown frame names a stack. In the python-first view a stack whose leaf frames are native but that holds
 * Python frames (ctypes, C extensions, code run with the GIL released) is named by its first Python frame: the
 * Python call site is what the user wrote and can change; the native frames leafward of it stay in the stack.
 * Other views (and stacks without Python frames) are named by their first frame.
 */
export function leadFrameIndex(frames: readonly Pick<LabelFrame, 'kind'>[], mode: string): number {
  if (mode !== 'python-first') return 0;
  const i = frames.findIndex((f) => f.kind === 'python');
  return i < 0 ? 0 : i;
}

/**
 * The frame that names a stack, everywhere one is named (the app's rows and legends, the verdict, the CLI's call-site
 * columns): leadFrameIndex over the frames shown, markers of folded frames never leading. Null for no frame.
 */
export function leadFrame<F extends LabelFrame>(frames: readonly F[], mode: string): F | null {
  const shown = frames.filter((f) => f.kind !== 'folded');
  return shown.length === 0 ? null : shown[leadFrameIndex(shown, mode)];
}

/**
 * A stack's call site as it goes into a ticket: `file:line` (file's base name) of its first Python frame, else of
 * its first frame with a source line (pprof's granularity=lines), else null. Two lines of one function are two
 * call sites.
 */
export function callSite(frames: readonly LabelFrame[]): string | null {
  const at = (f: LabelFrame) => (f.file ? `${baseOf(f.file)}:${f.line ?? '?'}` : null);
  const py = frames.find((f) => f.kind === 'python' && f.file);
  if (py) return at(py);
  const src = frames.find((f) => f.kind !== 'folded' && f.file && f.line !== null && f.line !== undefined);
  return src ? at(src) : null;
}
