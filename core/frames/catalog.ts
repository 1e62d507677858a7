// The app's frames of one process (the worker's trees, tables and stack panel): each frame of the one pipeline
// (core/frames/describe.ts NativeFrames, the Python frame table) interned as a key, one per inlined function, and
// stacks turned into keys per view (core/frames/view.ts's allocator option, filters and folds). Flame-graph keys
// merge by function (no line); the stack panel keeps lines.

import { revealControls } from '../model/display-text.js';
import type { ProcessSeries } from '../model/model.js';
import type { BinaryCheck } from '../model/symbol-table.js';
import {
  frameGroup,
  type FrameGroup,
  type FrameKind,
  type ModuleRole,
  type StackMode,
  type ViewOptions,
} from '../model/vocab.js';
import { decodePseudoAddress, layoutOf } from '../formats/pyframes.js';
import { viewClassified, type Classified, type PythonFrameView } from './python-stacks.js';
import { foldReasonOf, foldStack, MARKER_LABEL, type FoldOptions, type FoldReason } from './stack-labels.js';
import { STARTUP_LABEL, startupKind, type StartupClass, type StartupKind } from './startup.js';
import { filterStack, isActive } from './stack-filter.js';
import { NativeFrames, unresolvedName, type Frame } from './describe.js';
import { viewFilter, viewFolds } from './view.js';

/** One frame as the app shows it: one per inlined function of an address. */
export interface FrameInfo {
  /** the tree key (frames of one function share it) */
  key: number;
  label: string;
  function: string | null;
  file: string | null;
  line: number | null;
  module: string | null;
  modulePath: string | null;
  /** module-relative offset, "0x…" */
  offset: string | null;
  address: string;
  /** inlined into the next frame (not the address's outer function) */
  inlined: boolean;
  kind: FrameKind;
  /** a native frame's module role; null for Python frames and markers */
  role: ModuleRole | null;
  /** the legend's colour group (kind, or a native frame's role) */
  group: FrameGroup;
  /** the binary check of the symbols' file (describe.ts Frame.binary; frameMark words it); null when not symbolized */
  binary: BinaryCheck | null;
}

const EMPTY = new Int32Array(0);

const cacheKeyOf = new WeakMap<ViewOptions, string>();

function viewCacheKey(view: ViewOptions): string {
  let k = cacheKeyOf.get(view);
  if (k === undefined) {
    k = JSON.stringify([
      view.mode,
      view.hideAllocator,
      view.unfold ?? false,
      view.foldImports ?? false,
      view.filters ?? [],
    ]);
    cacheKeyOf.set(view, k);
  }
  return k;
}

/** One displayed frame, with its line; `treeDescriptor` merges frames of one function in flame graphs. */
interface FrameDesc {
  info: Omit<FrameInfo, 'key'>;
  treeDescriptor: string;
}

function infoOf(
  f: Frame,
  label: string,
  line: { function: string | null; file: string | null; line: number | null },
  inlined: boolean,
): Omit<FrameInfo, 'key'> {
  return {
    label,
    function: line.function,
    file: line.file,
    line: line.line,
    module: f.module,
    modulePath: f.modulePath ?? null,
    offset: f.moduleOffset,
    address: f.address,
    inlined,
    kind: f.kind,
    role: f.role ?? null,
    group: frameGroup(f),
    binary: f.binary ?? null,
  };
}

/** The catalog's descriptions of a native frame: one per inlined function (innermost first), else one unnamed. */
function nativeDescs(f: Frame): FrameDesc[] {
  const lines = f.inlined ?? [{ function: f.function ?? null, file: f.file ?? null, line: f.line ?? null }];
  if (lines.some((l) => l.function)) {
    const last = lines.length - 1;
    return lines.map((l, i) => {
      const fn = l.function ?? unresolvedName(f);
      return {
        info: infoOf(f, fn, { ...l, function: fn }, i < last),
        treeDescriptor: `f|${f.modulePath ?? ''}|${fn}|${l.file ?? ''}`,
      };
    });
  }
  const label = unresolvedName(f);
  return [{ info: infoOf(f, label, { function: null, file: null, line: null }, false), treeDescriptor: `a|${label}` }];
}

function pythonDesc(p: PythonFrameView): FrameDesc {
  // a native frame a capture named (memleak's `symbol+0xoff [module]`, PyTorch's C++ frames) is native
  if (p.native) {
    const f: Frame = {
      address: p.addr,
      kind: 'native',
      module: p.module ?? null,
      moduleOffset: null,
      role: p.module ? 'library' : 'unknown',
    };
    return {
      info: infoOf(f, p.function, { function: p.function, file: null, line: null }, false),
      treeDescriptor: `nat|${p.function}`,
    };
  }
  const f: Frame = { address: p.addr, kind: 'python', module: null, moduleOffset: null };
  return {
    info: infoOf(
      f,
      p.resolved ? p.function : p.label,
      { function: p.resolved ? p.function : null, file: p.file, line: p.line },
      false,
    ),
    treeDescriptor: p.resolved ? `py|${p.function}|${p.file ?? ''}|${p.line ?? ''}` : `pyu|${p.addr}`,
  };
}

const FOLD_KEPT = 0;
const FOLD_INTERPRETER = 1;
const FOLD_IMPORT = 2;
const FOLD_CODE: Record<FoldReason | 'kept', number> = {
  kept: FOLD_KEPT,
  interpreter: FOLD_INTERPRETER,
  import: FOLD_IMPORT,
};

function markerDesc(reason: FoldReason): FrameDesc {
  const f: Frame = { address: '0x0', kind: 'folded', module: null, moduleOffset: null };
  const label = MARKER_LABEL[reason];
  return {
    info: infoOf(f, label, { function: null, file: null, line: null }, false),
    treeDescriptor: `fold|${reason}`,
  };
}

export class FrameCatalog {
  /** tree frames by key (line-less for symbolized and Python frames) */
  readonly frames: FrameInfo[] = [];
  readonly hasPython: boolean;
  private readonly keyByDescriptor = new Map<string, number>();
  private readonly native: NativeFrames;
  /** per address: descs as a leaf (position 0) and as a caller (position > 0); computed lazily */
  private readonly leafDescs: (FrameDesc[] | undefined)[];
  private readonly callerDescs: (FrameDesc[] | undefined)[];
  private readonly leafKeys: (Int32Array | undefined)[];
  private readonly callerKeys: (Int32Array | undefined)[];
  /**
   * each address decoded once: the pseudo-frame it is (what it stands for, its kind), or null for a native one; and
   * which stacks hold one. Made with the first stack walked: the job's summary makes a catalog of every process for
   * `hasPython` alone (1,000 of them at 1,000 processes, each decoding every address and scanning every stack).
   */
  private pseudoOf: {
    pseudo: ({ addr: string; kind: number } | null)[];
    stackHasPseudo: Uint8Array;
  } | null = null;
  private readonly stackCache = new Map<string, (Int32Array | null | undefined)[]>();
  private readonly foldCache = new Map<string, FoldOptions>();
  /** per fold options, each key's fold reason (FOLD_KEPT, FOLD_INTERPRETER, FOLD_IMPORT), filled as keys are met */
  private readonly foldReasons = new Map<FoldOptions, number[]>();
  /** a Python frame's key by its pseudo-address (the frame is the address's alone, wherever it stands) */
  private readonly pythonKeys: (number | undefined)[] = [];
  private readonly markerKeys: (number | undefined)[] = [];
  /** the symbols the catalog was made with (a later symbolization needs a new catalog) */
  private readonly symbols: ProcessSeries['symbols'];

  /** Whether this catalog describes `proc` as it is now (one made while the job loaded can serve the full job). */
  describes(proc: ProcessSeries): boolean {
    return this.proc === proc && this.symbols === proc.symbols;
  }

  constructor(private readonly proc: ProcessSeries) {
    this.symbols = proc.symbols;
    this.native = new NativeFrames(proc);
    const n = proc.addresses.hex.length;
    this.leafDescs = new Array(n);
    this.callerDescs = new Array(n);
    this.leafKeys = new Array(n);
    this.callerKeys = new Array(n);
    const layout = layoutOf(proc.pythonFrames ?? null);
    this.hasPython = proc.addresses.hex.some((hex) => decodePseudoAddress(hex, layout) !== null);
  }

  /** The pseudo-frames of the addresses and the stacks that hold one (pseudoOf), made once. */
  private pseudoFrames(): NonNullable<FrameCatalog['pseudoOf']> {
    if (this.pseudoOf) return this.pseudoOf;
    const proc = this.proc;
    const n = proc.addresses.hex.length;
    const pseudo = new Array<{ addr: string; kind: number } | null>(n).fill(null);
    const st = proc.stacks;
    const stackHasPseudo = new Uint8Array(st.count);
    if (this.hasPython) {
      const layout = layoutOf(proc.pythonFrames ?? null);
      for (let a = 0; a < n; a++) {
        const pa = decodePseudoAddress(proc.addresses.hex[a], layout);
        if (pa) pseudo[a] = { addr: pa.addr, kind: pa.kind };
      }
      for (let s = 0; s < st.count; s++) {
        for (let f = st.offsets[s]; f < st.offsets[s + 1]; f++) {
          if (pseudo[st.frames[f]]) {
            stackHasPseudo[s] = 1;
            break;
          }
        }
      }
    }
    this.pseudoOf = { pseudo, stackHasPseudo };
    return this.pseudoOf;
  }

  private intern(d: FrameDesc): number {
    let k = this.keyByDescriptor.get(d.treeDescriptor);
    if (k === undefined) {
      k = this.frames.length;
      const shown = visibleInfo(d.info);
      // native frames are function-grained; Python frames line-grained (pprof's granularity=lines: two lines of
      // one function are two call sites, and the capture records the line executing in each frame)
      const info =
        shown.function !== null && shown.kind !== 'python' ? { ...shown, line: null, key: k } : { ...shown, key: k };
      this.frames.push(info);
      this.keyByDescriptor.set(d.treeDescriptor, k);
    }
    return k;
  }

  /** The key of the marker a flame graph folds a stack's start-up run into (core/frames/startup.ts). */
  startupKey(kind: StartupKind): number {
    const f: Frame = { address: '0x0', kind: 'folded', module: null, moduleOffset: null };
    return this.intern({
      info: infoOf(f, STARTUP_LABEL[kind], { function: null, file: null, line: null }, false),
      treeDescriptor: `startup|${kind}`,
    });
  }

  private startupKinds: (StartupClass | null | undefined)[] = [];

  /** Whether the frame of a key is start-up boilerplate on a stack's root side (startup.ts startupKind). */
  startupKindOf = (key: number): StartupClass | null => {
    let k = this.startupKinds[key];
    if (k === undefined) {
      k = startupKind(this.frames[key]);
      this.startupKinds[key] = k;
    }
    return k;
  };

  /** Native frames of one address (innermost inlined first); 'allocator' by its module (isAllocatorPath). */
  private nativeDescs(a: number, position: number): FrameDesc[] {
    const cache = position === 0 ? this.leafDescs : this.callerDescs;
    let out = cache[a];
    if (!out) {
      out = nativeDescs(this.native.frame(a, position));
      cache[a] = out;
    }
    return out;
  }

  private nativeKeys(a: number, position: number): Int32Array {
    const cache = position === 0 ? this.leafKeys : this.callerKeys;
    let k = cache[a];
    if (!k) {
      k = Int32Array.from(this.nativeDescs(a, position), (d) => this.intern(d));
      cache[a] = k;
    }
    return k;
  }

  private isEval = (hex: string): boolean => {
    const i = this.proc.addresses.index.get(hex);
    if (i === undefined) return false;
    return this.nativeDescs(i, 1).some((d) => d.info.function === '_PyEval_EvalFrameDefault');
  };

  /** Visits the frames of a stack in view order (leaf first), from position `skip`; `a` is the frame's address. */
  private walk(
    stackId: number,
    mode: StackMode,
    skip: number,
    emit: (kind: 'native' | 'python', a: number, position: number, py: PythonFrameView | null) => void,
  ): void {
    const st = this.proc.stacks;
    const s = st.offsets[stackId];
    const e = st.offsets[stackId + 1];
    const { pseudo, stackHasPseudo } = this.pseudoFrames();
    if (!stackHasPseudo[stackId]) {
      if (mode === 'python') return;
      for (let f = s + skip; f < e; f++) emit('native', st.frames[f], f - s, null);
      return;
    }
    const cs: Classified[] = [];
    for (let f = s + skip; f < e; f++) {
      const a = st.frames[f];
      const pa = pseudo[a];
      cs.push(
        pa
          ? { native: false, addr: pa.addr, kind: pa.kind, index: f - s - skip }
          : { native: true, addr: this.proc.addresses.hex[a], kind: 0, index: f - s - skip },
      );
    }
    // nothing hidden here: python-first folds the interpreter's frames afterwards (viewKeys), merged keeps them
    const v = viewClassified(cs, this.proc.pythonFrames ?? null, mode, { isEvalFrame: this.isEval });
    for (const fv of v.frames) {
      if (fv.kind === 'native') emit('native', st.frames[s + skip + fv.index], skip + fv.index, null);
      else emit('python', st.frames[s + skip + fv.index], skip + fv.index, fv);
    }
  }

  private foldOptions(view: Pick<ViewOptions, 'mode' | 'unfold' | 'foldImports'>): FoldOptions {
    const k = `${view.mode}|${view.unfold ? 1 : 0}|${view.foldImports ? 1 : 0}`;
    let o = this.foldCache.get(k);
    if (!o) {
      o = viewFolds(this.proc, view);
      this.foldCache.set(k, o);
    }
    return o;
  }

  /** Filters (null: the stack is filtered out) and folds of a view, on a stack's raw keys. */
  private viewKeys(raw: Int32Array, view: ViewOptions): Int32Array | null {
    const filter = viewFilter(view);
    let keys: ArrayLike<number> = raw;
    if (isActive(filter)) {
      const wrapped = Array.from(raw, (k) => {
        const f = this.frames[k];
        return {
          key: k,
          kind: f.kind,
          module: f.module,
          modulePath: f.modulePath,
          moduleOffset: f.offset,
          address: f.address,
          function: f.function,
          file: f.file,
          line: f.line,
        };
      });
      const kept = filterStack(wrapped, filter);
      if (!kept) return null;
      keys = kept.map((w) => w.key);
    }
    const fold = this.foldOptions(view);
    if (!fold.interpreter && !fold.imports) return keys.length === raw.length ? raw : Int32Array.from(keys);
    // foldStack's runs on the keys (a marker where each run was, 'import' when any of its frames is), without a
    // frame object per frame: a frame's reason is its own, kept per key (a deep process spent most of this
    // function copying frames for foldStack)
    let reasons = this.foldReasons.get(fold);
    if (!reasons) {
      reasons = [];
      this.foldReasons.set(fold, reasons);
    }
    const out: number[] = [];
    let run = FOLD_KEPT;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      let r = reasons[k];
      if (r === undefined) {
        r = FOLD_CODE[foldReasonOf(this.frames[k], fold) ?? 'kept'];
        reasons[k] = r;
      }
      if (r === FOLD_KEPT) {
        if (run !== FOLD_KEPT) out.push(this.markerKey(run));
        run = FOLD_KEPT;
        out.push(k);
      } else if (run === FOLD_KEPT || r === FOLD_IMPORT) run = r;
    }
    if (run !== FOLD_KEPT) out.push(this.markerKey(run));
    return Int32Array.from(out);
  }

  private markerKey(code: number): number {
    let k = this.markerKeys[code];
    if (k === undefined) {
      k = this.intern(markerDesc(code === FOLD_IMPORT ? 'import' : 'interpreter'));
      this.markerKeys[code] = k;
    }
    return k;
  }

  /** Tree keys of a stack, leaf first, for a view; empty when the view's filters drop it (see dropped). */
  stackKeys(stackId: number, view: ViewOptions): Int32Array {
    return this.viewStackKeys(stackId, view) ?? EMPTY;
  }

  /** Whether the view's filters (focus, ignore, a hide that leaves nothing) drop the stack. */
  dropped(stackId: number, view: ViewOptions): boolean {
    return this.viewStackKeys(stackId, view) === null;
  }

  private viewStackKeys(stackId: number, view: ViewOptions): Int32Array | null {
    const ck = viewCacheKey(view);
    let cache = this.stackCache.get(ck);
    if (!cache) {
      cache = new Array(this.proc.stacks.count);
      this.stackCache.set(ck, cache);
    }
    const hit = cache[stackId];
    if (hit !== undefined) return hit;
    const v = this.viewKeys(this.rawStackKeys(stackId, view), view);
    cache[stackId] = v;
    return v;
  }

  /** Keys of a stack in the view's mode, before filters and folds (the leading allocator frames skipped if hidden). */
  private rawStackKeys(stackId: number, view: ViewOptions): Int32Array {
    const skip = view.hideAllocator ? (this.proc.stacks.allocatorDepth[stackId] ?? 0) : 0;
    const out: number[] = [];
    this.walk(stackId, view.mode, skip, (kind, a, position, py) => {
      if (kind === 'native') {
        const ks = this.nativeKeys(a, position);
        for (let i = 0; i < ks.length; i++) out.push(ks[i]);
      } else if (py) {
        let k = this.pythonKeys[a];
        if (k === undefined) {
          k = this.intern(pythonDesc(py));
          this.pythonKeys[a] = k;
        }
        out.push(k);
      }
    });
    return Int32Array.from(out);
  }

  /**
   * Every frame of a stack with lines, leaf first; allocator frames included and flagged; in the python-first
   * view each frame of a folded run carries the run's index (`fold`), so the panel shows a marker that expands.
   */
  stackDetail(stackId: number, mode: StackMode): (FrameInfo & { hidden: boolean; fold?: number })[] {
    const alloc = this.proc.stacks.allocatorDepth[stackId] ?? 0;
    const out: (FrameInfo & { hidden: boolean; fold?: number })[] = [];
    this.walk(stackId, mode, 0, (kind, a, position, py) => {
      const descs = kind === 'native' ? this.nativeDescs(a, position) : py ? [pythonDesc(py)] : [];
      for (const d of descs)
        out.push({
          ...visibleInfo(d.info),
          key: this.keyByDescriptor.get(d.treeDescriptor) ?? -1,
          hidden: position < alloc,
        });
    });
    const fold = this.foldOptions({ mode });
    if (fold.interpreter) {
      const shown = out.map((f, i) => ({ ...f, i })).filter((f) => !f.hidden);
      foldStack(shown, fold).folds.forEach((run, n) => {
        for (const f of run.frames) out[f.i].fold = n;
      });
    }
    return out;
  }
}

/** Names from files as the UI shows them: control and bidi characters visibly marked (core/model/display-text). */
function visibleInfo<
  T extends {
    label: string;
    function: string | null;
    file: string | null;
    module: string | null;
    modulePath: string | null;
  },
>(i: T): T {
  const m = (v: string | null): string | null => (v === null ? null : revealControls(v));
  return {
    ...i,
    label: revealControls(i.label),
    function: m(i.function),
    file: m(i.file),
    module: m(i.module),
    modulePath: m(i.modulePath),
  };
}
