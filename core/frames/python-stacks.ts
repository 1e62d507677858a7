// Python frames in stacks: turns a stack's frames (normalized hex strings, leaf first, as in the
// AddressTable) plus a PYFRAMES/1 table into one of these views:
//   python-first - the default: merged, then the interpreter's own native frames folded into markers
//                  (the folding is core/frames/stack-labels.ts, on described frames; here it is merged)
//   merged  - Python frames in place of the interpreter's native eval frames, every other frame kept
//   python  - Python frames only
//   native  - native frames only (pseudo-addresses removed)
// Markers (entry, unmerged, truncated) are never frames; they only set flags on the view.
// Pseudo-addresses must never reach the symbolizer or the maps: filter with isPythonPseudoAddress (core/formats/pyframes.ts).

import {
  PY_KIND_ENTRY,
  PY_KIND_FRAME,
  PY_KIND_TRUNCATED,
  PY_KIND_UNKNOWN,
  PY_KIND_UNMERGED,
  decodePseudoAddress,
  layoutOf,
  parsePyFrames,
  pyFramesTokenFromMaps,
  readSidecar,
  sidecarPathsFor,
  type SidecarRead,
  type PyFrameTable,
} from '../formats/pyframes.js';
import type { InputFile } from '../formats/input-file.js';
import type { LoadWarning } from '../model/model.js';

import type { StackMode } from '../model/vocab.js';

export type { StackMode };
export const STACK_MODES: readonly StackMode[] = ['python-first', 'merged', 'python', 'native'];
export const DEFAULT_STACK_MODE: StackMode = 'python-first';

export interface NativeFrameView {
  kind: 'native';
  /** the address as given */
  addr: string;
  /** position in the input frames */
  index: number;
}

export interface PythonFrameView {
  kind: 'python';
  /** canonical pseudo-address (a "-1" applied by another tool undone) */
  addr: string;
  index: number;
  /** qualname; "<unresolved 0x…>" when the table does not name it, "<unknown>" for an unreadable frame */
  function: string;
  file: string | null;
  line: number | null;
  resolved: boolean;
  /** "[py] fn (file:line)" or "[py] <unresolved 0x…>" */
  label: string;
  /** a native frame a capture named (PyFrameEntry.native: memleak, PyTorch C++ frames) */
  native?: boolean;
  module?: string | null;
}

export type FrameView = NativeFrameView | PythonFrameView;

export interface StackView {
  frames: FrameView[];
  /** frames were dropped (producer's walk limit or jemalloc's 128-slot limit) */
  truncated: boolean;
  /** the producer could not place the Python frames among the native ones (fallback layout) */
  unmerged: boolean;
  /** Python frames in the input (resolved or not) */
  pythonFrames: number;
}

export interface StackViewOptions {
  /**
   * Native frames of the interpreter (libpython plumbing: eval loop, vectorcall, ...). When given, merged
   * mode hides them outward of the innermost Python frame; leaf-side native frames (the allocation site)
   * are always kept. Without it only each group's own eval frame is hidden. The views (CLI, exports, the
   * app) do not hide: they fold (stack-labels.ts), so `--stacks merged` keeps every frame.
   */
  isInterpreterFrame?: (addr: string) => boolean;
  /** `_PyEval_EvalFrameDefault` frames: lets merged mode re-merge a fallback (unmerged) stack. */
  isEvalFrame?: (addr: string) => boolean;
}

export function pythonFrameLabel(f: Pick<PythonFrameView, 'function' | 'file' | 'line' | 'resolved'>): string {
  if (!f.resolved) return `[py] ${f.function}`;
  const where = f.file ? ` (${f.file}${f.line !== null ? ':' + f.line : ''})` : '';
  return `[py] ${f.function}${where}`;
}

function pythonFrame(addr: string, index: number, kind: number, table: PyFrameTable | null): PythonFrameView {
  if (kind === PY_KIND_FRAME) {
    const e = table?.frames.get(addr);
    if (e) {
      const v = {
        kind: 'python' as const,
        addr,
        index,
        function: e.function || '<anonymous>',
        file: e.file || null,
        line: e.line,
        resolved: true,
        label: '',
        ...(e.native ? { native: true, module: e.module ?? null } : {}),
      };
      v.label = e.native ? v.function : pythonFrameLabel(v);
      return v;
    }
  }
  const fn = kind === PY_KIND_UNKNOWN ? '<unknown>' : `<unresolved ${addr}>`;
  return { kind: 'python', addr, index, function: fn, file: null, line: null, resolved: false, label: `[py] ${fn}` };
}

/** A stack's frame told apart: native (its address) or a pseudo-frame (the address it stands for, its kind). */
export interface Classified {
  native: boolean;
  addr: string;
  kind: number; // 0 for native
  index: number;
}

function classify(frames: readonly string[], table: PyFrameTable | null): Classified[] {
  const layout = layoutOf(table);
  return frames.map((addr, index) => {
    const pa = decodePseudoAddress(addr, layout);
    return pa ? { native: false, addr: pa.addr, kind: pa.kind, index } : { native: true, addr, kind: 0, index };
  });
}

const isMarker = (k: number): boolean => k === PY_KIND_ENTRY || k === PY_KIND_UNMERGED || k === PY_KIND_TRUNCATED;
const isPyFrame = (c: Classified): boolean =>
  !c.native && (c.kind === PY_KIND_FRAME || c.kind === PY_KIND_UNKNOWN || !isMarker(c.kind));

/** Builds the view of one stack in `mode`. */
export function viewStack(
  frames: readonly string[],
  table: PyFrameTable | null,
  mode: StackMode,
  opts: StackViewOptions = {},
): StackView {
  return viewClassified(classify(frames, table), table, mode, opts);
}

/** viewStack of frames already told apart (a caller that decoded each address once, core/frames/catalog.ts). */
export function viewClassified(
  cs: readonly Classified[],
  table: PyFrameTable | null,
  mode: StackMode,
  opts: StackViewOptions = {},
): StackView {
  const truncated = cs.some((c) => !c.native && c.kind === PY_KIND_TRUNCATED);
  const unmergedAt = cs.findIndex((c) => !c.native && c.kind === PY_KIND_UNMERGED);
  const pythonFrames = cs.filter(isPyFrame).length;
  const out: FrameView[] = [];
  const py = (c: Classified): PythonFrameView => pythonFrame(c.addr, c.index, c.kind, table);
  const nat = (c: Classified): NativeFrameView => ({ kind: 'native', addr: c.addr, index: c.index });

  if (mode === 'native') {
    for (const c of cs) if (c.native) out.push(nat(c));
    return { frames: out, truncated, unmerged: unmergedAt >= 0, pythonFrames };
  }
  if (mode === 'python') {
    // a native frame a capture named (PyTorch's C++ frames, memleak's) is no Python frame
    for (const c of cs) if (isPyFrame(c) && !table?.frames.get(c.addr)?.native) out.push(py(c));
    return { frames: out, truncated, unmerged: unmergedAt >= 0, pythonFrames };
  }

  // merged
  if (unmergedAt >= 0) {
    mergeFallback(cs, unmergedAt, opts, out, py, nat);
    return { frames: out, truncated, unmerged: true, pythonFrames };
  }
  let seenPython = false;
  let afterGroup = false; // the previous slot was a Python frame (or the truncated marker after one)
  for (const c of cs) {
    if (!c.native) {
      if (isPyFrame(c)) {
        out.push(py(c));
        seenPython = true;
        afterGroup = true;
      }
      // markers: a truncated marker right after a group keeps afterGroup as it is
      continue;
    }
    if (afterGroup) {
      afterGroup = false; // the group's own eval frame, which the producer kept: hidden
      continue;
    }
    if (seenPython && opts.isInterpreterFrame?.(c.addr)) continue;
    out.push(nat(c));
  }
  return { frames: out, truncated, unmerged: false, pythonFrames };
}

/**
 * Fallback layout: natives, unmerged marker, Python groups (innermost first) split by entry markers.
 * With an eval-frame test the groups are put back leafward of their eval frames, outermost first
 * (as memray pairs them); otherwise the Python frames are shown outward of all native frames.
 */
function mergeFallback(
  cs: readonly Classified[],
  unmergedAt: number,
  opts: StackViewOptions,
  out: FrameView[],
  py: (c: Classified) => PythonFrameView,
  nat: (c: Classified) => NativeFrameView,
): void {
  const natives = cs.slice(0, unmergedAt).filter((c) => c.native);
  const groups: Classified[][] = [[]];
  for (const c of cs.slice(unmergedAt + 1)) {
    if (!c.native && c.kind === PY_KIND_ENTRY) groups.push([]);
    else if (isPyFrame(c)) groups[groups.length - 1].push(c);
  }
  while (groups.length > 0 && groups[groups.length - 1].length === 0) groups.pop();
  const evals = opts.isEvalFrame
    ? natives.map((c, i) => (opts.isEvalFrame?.(c.addr) ? i : -1)).filter((i) => i >= 0)
    : [];
  if (evals.length >= groups.length && groups.length > 0) {
    const pairOf = new Map<number, number>();
    groups.forEach((_, g) => pairOf.set(evals[evals.length - groups.length + g], g));
    let seenPython = false;
    natives.forEach((c, i) => {
      const g = pairOf.get(i);
      if (g !== undefined) {
        for (const p of groups[g]) out.push(py(p));
        seenPython = seenPython || groups[g].length > 0;
        return; // the eval frame itself is replaced by its group
      }
      if (seenPython && opts.isInterpreterFrame?.(c.addr)) return;
      out.push(nat(c));
    });
    return;
  }
  for (const c of natives) out.push(nat(c));
  for (const g of groups) for (const p of g) out.push(py(p));
}

/** The JSON form of a frame for `--json` output: Python frames as {kind, function, file, line}. */
export function pythonFrameJson(f: PythonFrameView): {
  kind: 'python';
  function: string;
  file: string | null;
  line: number | null;
} {
  return { kind: 'python', function: f.function, file: f.file, line: f.line };
}

/**
 * True for the CPython interpreter's own binaries (libpython3.X.so…, or a python3.X executable with the
 * interpreter linked in): in merged mode their frames between Python groups are plumbing (eval loop,
 * vectorcall, thread bootstrap) and are hidden, as py-spy does.
 */
export function isInterpreterModule(module: string | null | undefined): boolean {
  if (!module) return false;
  const base = module.slice(module.lastIndexOf('/') + 1);
  return /^(lib)?python3(\.\d+)?[a-z]*(\.so(\.[\d.]+)?)?$/.test(base);
}

/** Parses a `--stacks` value; null when invalid. */
export function parseStackMode(s: string): StackMode | null {
  return (STACK_MODES as readonly string[]).includes(s) ? (s as StackMode) : null;
}

/**
 * Applies a display mode to frames that already carry their address (e.g. the CLI's described
 * frames): native ones are passed through (by position), Python ones made by `toPython`.
 */
export function applyStackMode<F extends { address: string }>(
  frames: readonly F[],
  table: PyFrameTable | null,
  mode: StackMode,
  toPython: (p: PythonFrameView) => F,
  opts: StackViewOptions = {},
): F[] {
  // A stack without Python pseudo-addresses is its native frames in every mode but python (viewStack keeps each
  // of them, in order): most stacks of a job without the capture library, where building the view was a
  // third of `top`'s describe time.
  if (mode !== 'python') {
    const layout = layoutOf(table);
    if (frames.every((f) => decodePseudoAddress(f.address, layout) === null)) return [...frames];
  }
  const v = viewStack(
    frames.map((f) => f.address),
    table,
    mode,
    opts,
  );
  return v.frames.map((f) => (f.kind === 'native' ? frames[f.index] : toPython(f)));
}

// ---- loading (called by core/load/load-job.ts) ----------------------------------------------------

/**
 * The frame table of one dump: appended after its maps (`trailerText` from the dump reader), else its
 * `<dump>.pyframes` sidecar among the side files. Problems become warnings naming the file. When the
 * dump's maps name a table token (`/memfd:pyframes-<token>`) and the table carries another one, the
 * table is another run's (stale or renamed sidecar, reused pid): it is dropped with a warning.
 */
export async function pythonFramesForDump(
  dumpPath: string,
  trailerText: string | PyFrameTable | null | undefined,
  sidecars: ReadonlyMap<string, InputFile>,
  warnings: LoadWarning[],
  mapsText?: string | null,
  preread?: SidecarRead | null,
): Promise<PyFrameTable | null> {
  let table: PyFrameTable | null = null;
  let where = dumpPath;
  // (a table appended to the dump may come already parsed, by the dump's reader task)
  if (trailerText) table = typeof trailerText === 'string' ? parsePyFrames(trailerText, 'dump') : trailerText;
  if (!table) {
    const file = dumpSidecar(dumpPath, sidecars);
    if (file) {
      // read by the dump's task (a worker) when it could reach the file, else here
      const read = preread && preread.path === file.path ? preread : await readSidecar(file);
      where = file.path;
      table = read.table;
      if (read.error !== null) warnings.push({ file: file.path, message: `could not be read: ${read.error}` });
      else if (!table)
        warnings.push({
          file: file.path,
          message: 'not a PYFRAMES table (no PYFRAMES/1 header); Python frames stay unresolved',
        });
    }
  }
  if (!table) return null;
  for (const p of table.problems.slice(0, 5))
    warnings.push({ file: where, message: `Python frame table: ${p.message}` });
  const want = pyFramesTokenFromMaps(mapsText);
  if (want !== null && table.token !== null && table.token !== want) {
    warnings.push({
      file: where,
      message: `Python frame table has token ${table.token} but the dump's process mapped pyframes-${want}: it belongs to another run and is ignored`,
    });
    return null;
  }
  return table;
}

/** The sidecar a dump's Python frames are read from: the first of its names that was given. */
export function dumpSidecar(dumpPath: string, sidecars: ReadonlyMap<string, InputFile>): InputFile | null {
  for (const p of sidecarPathsFor(dumpPath)) {
    const f = sidecars.get(p);
    if (f) return f;
  }
  return null;
}

/**
 * ProcessSeries.pythonFrames from the merge of one process's tables (mergePyFrameTables, PyFrameTableMerger);
 * conflicts become warnings.
 */
export function seriesPythonFrames(
  { table, conflicts }: { table: PyFrameTable | null; conflicts: readonly string[] },
  file: string,
  warnings: LoadWarning[],
): PyFrameTable | null {
  for (const c of conflicts.slice(0, 5))
    warnings.push({ file, message: `Python frame tables disagree (stale sidecar or reused pid?): ${c}` });
  return table;
}
