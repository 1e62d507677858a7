// Process and thread start-up frames: the rows above a program's own frames that every stack shares (the C
// runtime's `_start` → `__libc_start_main` → `main`, the dynamic loader's initialisers, CPython's `Py_BytesMain` →
// `pymain_*` → `PyEval_EvalCode` chain or its "interpreter frames" marker, runpy, a thread's `clone3` →
// `start_thread` → `Thread._bootstrap_inner`). A flame graph folds each stack's root-side run of them into one
// marker row (`foldStartupKeys`), so the program's frames start near the top. Pure: frames in, keys out.

import { isInterpreterModule } from './python-stacks.js';
import { MARKER_LABEL } from './stack-labels.js';

/** Whose start-up a fold is. */
export type StartupKind = 'process' | 'thread';

/**
 * What a frame says on a stack's root side: start-up of a process or a thread; 'entry', an unnamed frame of the C
 * runtime (libc, as dumps copied off the machine read before symbols: `libc.so.6+0x27305`), start-up of one or the
 * other; 'either', frames both run that prove nothing alone (the eval loop, the interpreter marker); null, the
 * program's own.
 */
export type StartupClass = StartupKind | 'entry' | 'either';

/** The fields the rule reads (FrameInfo of the catalog, LabelFrame of the CLI and exports fit). */
export interface StartupFrame {
  kind: string;
  label?: string;
  function: string | null;
  file: string | null;
  module: string | null;
}

export const STARTUP_LABEL: Record<StartupKind, string> = {
  process: 'process start-up',
  thread: 'thread start-up',
};

// glibc's and the dynamic loader's entry, and `main` itself (a C program's, or the python executable's)
const PROCESS_NATIVE = new Set([
  '_start',
  '__libc_start_main',
  '__libc_start_main_impl',
  '__libc_start_main_alias_2',
  '__libc_start_call_main',
  '__libc_csu_init',
  '_dl_start',
  '_dl_start_user',
  '_dl_init',
  '_dl_sysdep_start',
  'call_init',
  '_init',
  'main',
]);
// CPython's way from main() to the first Python frame (Modules/main.c, Python/pythonrun.c, Python/ceval.c)
const PROCESS_CPYTHON =
  /^(Py_BytesMain|Py_Main|Py_RunMain|pymain_\w+|_?PyRun_\w+|pyrun_\w+|run_mod|run_eval_code_obj|PyEval_EvalCode(Ex)?)$/;
const EVAL = /^(_PyEval_EvalFrameDefault|_PyEval_EvalFrame|_PyEval_Vector|_PyEval_EvalCode\w*)$/;
const THREAD_NATIVE = new Set(['clone', 'clone3', '__clone', '__clone3', '__clone_internal', 'start_thread']);
// CPython's thread entry (Modules/_threadmodule.c, Python/thread_pthread.h)
const THREAD_CPYTHON = /^(thread_run|pythread_wrapper|t_bootstrap)$/;
const THREAD_PYTHON = /^(Thread\.)?(_bootstrap|_bootstrap_inner|run)$/;

function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * Whether a frame is start-up boilerplate when it sits on the root side of a stack, and whose (StartupClass).
 * The script's own `<module>` is the program's (it names the line that called main), runpy's frames are not; an
 * unnamed frame of the interpreter is not either (unsymbolized, every frame of a native view is one).
 */
export function startupKind(f: StartupFrame): StartupClass | null {
  if (f.kind === 'folded') return f.label === MARKER_LABEL.interpreter ? 'either' : null;
  if (f.kind === 'allocator') return null;
  if (f.kind === 'python') {
    const file = f.file ?? '';
    const base = baseName(file);
    if (base === 'runpy.py' || file === '<frozen runpy>') return 'process';
    if (base === 'threading.py' && f.function && THREAD_PYTHON.test(f.function)) return 'thread';
    return null;
  }
  const fn = f.function;
  const module = f.module ? baseName(f.module) : null;
  // the dynamic loader runs before the program, named or not
  if (module && /^ld-linux[\w.-]*\.so|^ld-[\w.-]*\.so|^ld64\.so/.test(module)) return 'process';
  // unnamed libc on the root side: __libc_start_call_main / __libc_start_main, or a thread's clone3 / start_thread
  if (!fn) return module && /^libc(\.so|-[\d.]+\.so)/.test(module) ? 'entry' : null;
  if (PROCESS_NATIVE.has(fn)) return 'process';
  if (THREAD_NATIVE.has(fn)) return 'thread';
  if (PROCESS_CPYTHON.test(fn) && (module === null || isInterpreterModule(module))) return 'process';
  if (THREAD_CPYTHON.test(fn) && (module === null || isInterpreterModule(module))) return 'thread';
  if (EVAL.test(fn)) return 'either';
  return null;
}

/** One stack's root-side start-up run: how many frames (from the root) and whose. */
export interface StartupRun {
  frames: number;
  kind: StartupKind;
}

/**
 * The root-side run of start-up frames of a stack given leaf first (keys or frames, through `kindOf`), or null
 * when the stack does not start with one. A run is only boilerplate if it has a start-up frame of its own: an
 * eval loop or an interpreter marker alone at the root (a stack cut by jemalloc's depth limit) is kept. The run
 * is a thread's when its outermost frame that says whose is a thread's; a process's when none says.
 */
export function startupRun<K>(keys: ArrayLike<K>, kindOf: (key: K) => StartupClass | null): StartupRun | null {
  let kind: StartupKind | null = null;
  let entry = false;
  let n = 0;
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = kindOf(keys[i]);
    if (k === null) break;
    if (k === 'entry') entry = true;
    else if (k !== 'either') kind ??= k;
    n++;
  }
  return n > 0 && (kind || entry) ? { frames: n, kind: kind ?? 'process' } : null;
}

/**
 * A stack's keys (leaf first) with its root-side start-up run replaced by one marker key (`markerKey(kind)`);
 * the same array when it has none. Folding never drops a stack or a byte: it only changes which frames it shows.
 */
export function foldStartupKeys(
  keys: Int32Array,
  kindOf: (key: number) => StartupClass | null,
  markerKey: (kind: StartupKind) => number,
): Int32Array {
  const run = startupRun(keys, kindOf);
  if (!run) return keys;
  const kept = keys.length - run.frames;
  const out = new Int32Array(kept + 1);
  out.set(keys.subarray(0, kept));
  out[kept] = markerKey(run.kind);
  return out;
}
