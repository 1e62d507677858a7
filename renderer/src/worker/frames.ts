// Frames of one process for the views: labels, kinds and merge keys, from (in order of preference) the
// symbolizer's results (function, file:line, inlined frames), the Python frame table (PYFRAMES/1), and the
// maps (module+0xoffset). Stacks are turned into frame keys per view (merged / python / native; allocator
// frames hidden or not); flame-graph keys merge by function (no line), the stack panel keeps lines.

import { revealControls } from '../../../core/model/display-text.js';
import type { MapsEntry } from '../../../core/formats/proc-maps.ts';
import type { ProcessSeries } from '../../../core/model/model.ts';
import { decodePseudoAddress } from '../../../core/formats/pyframes.ts';
import { isInterpreterModule, layoutOf, viewStack, type PythonFrameView } from '../../../core/frames/python-stacks.ts';
import { symbolAt, type SymbolTable, type SymbolizedAddress } from '../../../core/symbolize/symbolize.ts';
import { foldOptionsFor, foldStack, type FoldOptions, type FoldReason } from '../../../core/frames/stack-labels.ts';
import { filterStack, isActive, type StackFilter } from '../../../core/frames/stack-filter.ts';
import type { FrameInfo, FrameKind, StackMode, ViewOptions } from '../lib/protocol.ts';

const EMPTY = new Int32Array(0);

// Per view object (one per request): its filter and cache key are made once, not once per stack.
const filterOf = new WeakMap<ViewOptions, StackFilter>();
const cacheKeyOf = new WeakMap<ViewOptions, string>();

/** The chips of a view as a stack filter (the last chip of each kind wins, as the CLI's last option does). */
export function viewFilter(view: ViewOptions): StackFilter {
  const hit = filterOf.get(view);
  if (hit) return hit;
  const f: StackFilter = {};
  filterOf.set(view, f);
  for (const c of view.filters ?? []) {
    try {
      f[c.kind] = new RegExp(c.re);
    } catch {
      // an invalid expression filters nothing (the chip editor refuses it before it gets here)
    }
  }
  return f;
}

function viewCacheKey(view: ViewOptions): string {
  let k = cacheKeyOf.get(view);
  if (k === undefined) {
    k = JSON.stringify([view.mode, view.hideAllocator, view.unfold ?? false, view.filters ?? []]);
    cacheKeyOf.set(view, k);
  }
  return k;
}

export function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}

/** Index of the mapping containing `addr`, or -1 (maps sorted by start). */
export function findMapping(maps: MapsEntry[], addr: bigint): number {
  let lo = 0;
  let hi = maps.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const m = maps[mid];
    if (addr < m.start) hi = mid - 1;
    else if (addr >= m.end) lo = mid + 1;
    else return mid;
  }
  return -1;
}

const ALLOCATOR_MODULE = /(^|\/)lib(jemalloc|tcmalloc|je_malloc)[^/]*$/;

export function moduleKind(path: string, mainExe: string | null): FrameKind {
  if (path === '') return 'unknown';
  if (ALLOCATOR_MODULE.test(path)) return 'allocator';
  if (mainExe !== null && path === mainExe && !isInterpreterModule(path)) return 'program';
  if (path.startsWith('[')) return 'unknown';
  return 'library';
}

/** The main executable: the first file mapping that is not a shared library. */
export function guessMainExecutable(maps: MapsEntry[] | null): string | null {
  if (!maps) return null;
  for (const m of maps) {
    if (m.path === '' || m.path.startsWith('[')) continue;
    if (/\.so(\.|$)/.test(basename(m.path))) continue;
    return m.path;
  }
  return null;
}

/** One displayed frame, with its line; `treeKey` merges frames of one function in flame graphs. */
interface FrameDesc {
  info: Omit<FrameInfo, 'key'>;
  treeDescriptor: string;
}

export class FrameTable {
  /** tree frames by key (line-less for symbolized and Python frames) */
  readonly frames: FrameInfo[] = [];
  readonly hasPython: boolean;
  private readonly keyByDescriptor = new Map<string, number>();
  private readonly maps: MapsEntry[];
  private readonly mainExe: string | null;
  /** per address: descs as a leaf (position 0) and as a caller (position > 0); computed lazily */
  private readonly leafDescs: (FrameDesc[] | undefined)[];
  private readonly callerDescs: (FrameDesc[] | undefined)[];
  private readonly leafKeys: (Int32Array | undefined)[];
  private readonly callerKeys: (Int32Array | undefined)[];
  private readonly pseudo: Uint8Array;
  private readonly stackHasPseudo: Uint8Array;
  private readonly stackCache = new Map<string, (Int32Array | null | undefined)[]>();
  private readonly foldCache = new Map<string, FoldOptions>();

  /** Whether this table describes `proc` with `symbols` (a table made while the job loaded can serve the full job). */
  describes(proc: ProcessSeries, symbols: SymbolTable | null): boolean {
    return this.proc === proc && this.symbols === symbols;
  }

  constructor(
    private readonly proc: ProcessSeries,
    private readonly symbols: SymbolTable | null,
  ) {
    this.maps = proc.maps ?? [];
    this.mainExe = guessMainExecutable(proc.maps);
    const n = proc.addresses.hex.length;
    this.leafDescs = new Array(n);
    this.callerDescs = new Array(n);
    this.leafKeys = new Array(n);
    this.callerKeys = new Array(n);
    this.pseudo = new Uint8Array(n);
    const layout = layoutOf(proc.pythonFrames ?? null);
    let any = false;
    for (let a = 0; a < n; a++) {
      if (decodePseudoAddress(proc.addresses.hex[a], layout)) {
        this.pseudo[a] = 1;
        any = true;
      }
    }
    this.hasPython = any;
    const st = proc.stacks;
    this.stackHasPseudo = new Uint8Array(st.count);
    if (any) {
      for (let s = 0; s < st.count; s++) {
        for (let f = st.offsets[s]; f < st.offsets[s + 1]; f++) {
          if (this.pseudo[st.frames[f]]) {
            this.stackHasPseudo[s] = 1;
            break;
          }
        }
      }
    }
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

  private moduleOf(hex: string): {
    kind: FrameKind;
    module: string | null;
    modulePath: string | null;
    offset: string | null;
  } {
    let addr: bigint;
    try {
      addr = BigInt(hex);
    } catch {
      return { kind: 'unknown', module: null, modulePath: null, offset: null };
    }
    const mi = findMapping(this.maps, addr);
    if (mi < 0) return { kind: 'unknown', module: null, modulePath: null, offset: null };
    const m = this.maps[mi];
    return {
      kind: moduleKind(m.path, this.mainExe),
      module: basename(m.path) || '[anon]',
      modulePath: m.path || null,
      offset: '0x' + (addr - m.start + m.offset).toString(16),
    };
  }

  /** Native frames of one address (innermost inlined first). */
  private nativeDescs(a: number, position: number): FrameDesc[] {
    const cache = position === 0 ? this.leafDescs : this.callerDescs;
    const hit = cache[a];
    if (hit) return hit;
    const hex = this.proc.addresses.hex[a];
    const loc = this.moduleOf(hex);
    const sym: SymbolizedAddress | undefined = this.symbols ? symbolAt(this.symbols, a, position) : undefined;
    let out: FrameDesc[];
    if (sym && sym.frames.length > 0 && sym.frames.some((f) => f.function)) {
      const unverified = sym.binary === 'unverified' || sym.binary === 'mismatch';
      const last = sym.frames.length - 1;
      out = sym.frames.map((f, i) => {
        const fn = f.function ?? `${loc.module ?? '?'}+${loc.offset ?? hex}`;
        return {
          info: {
            label: fn,
            function: fn,
            file: f.file,
            line: f.line,
            module: loc.module,
            modulePath: loc.modulePath,
            offset: loc.offset,
            address: hex,
            inlined: i < last,
            kind: sym.python ? 'python' : loc.kind,
            unverified,
          },
          treeDescriptor: `f|${loc.modulePath ?? ''}|${fn}|${f.file ?? ''}`,
        };
      });
    } else {
      const label = loc.module && loc.offset ? `${loc.module}+${loc.offset}` : hex;
      out = [
        {
          info: {
            label,
            function: null,
            file: null,
            line: null,
            module: loc.module,
            modulePath: loc.modulePath,
            offset: loc.offset,
            address: hex,
            inlined: false,
            kind: loc.kind,
            unverified: sym?.binary === 'mismatch',
          },
          treeDescriptor: `a|${label}`,
        },
      ];
    }
    cache[a] = out;
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

  private pythonDesc(p: PythonFrameView): FrameDesc {
    const fn = p.function;
    return {
      info: {
        label: p.resolved ? fn : p.label,
        function: p.resolved ? fn : null,
        file: p.file,
        line: p.line,
        module: null,
        modulePath: null,
        offset: null,
        address: p.addr,
        inlined: false,
        kind: 'python',
        unverified: false,
      },
      treeDescriptor: p.resolved ? `py|${fn}|${p.file ?? ''}|${p.line ?? ''}` : `pyu|${p.addr}`,
    };
  }

  private isEval = (hex: string): boolean => {
    const i = this.proc.addresses.index.get(hex);
    if (i === undefined) return false;
    return this.nativeDescs(i, 1).some((d) => d.info.function === '_PyEval_EvalFrameDefault');
  };

  /** Visits the frames of a stack in view order (leaf first). `hidden` marks allocator frames. */
  private walk(
    stackId: number,
    mode: StackMode,
    skip: number,
    emit: (kind: 'native' | 'python', a: number, position: number, py: PythonFrameView | null) => void,
  ): void {
    const st = this.proc.stacks;
    const s = st.offsets[stackId];
    const e = st.offsets[stackId + 1];
    if (!this.stackHasPseudo[stackId]) {
      if (mode === 'python') return;
      for (let f = s + skip; f < e; f++) emit('native', st.frames[f], f - s, null);
      return;
    }
    const hexes: string[] = [];
    for (let f = s + skip; f < e; f++) hexes.push(this.proc.addresses.hex[st.frames[f]]);
    // nothing hidden here: python-first folds the interpreter's frames afterwards (viewKeys), merged keeps them
    const v = viewStack(hexes, this.proc.pythonFrames ?? null, mode, { isEvalFrame: this.isEval });
    for (const fv of v.frames) {
      if (fv.kind === 'native') emit('native', st.frames[s + skip + fv.index], skip + fv.index, null);
      else emit('python', -1, skip + fv.index, fv);
    }
  }

  private foldOptions(view: ViewOptions): FoldOptions {
    const k = `${view.mode}|${view.unfold ? 1 : 0}`;
    let o = this.foldCache.get(k);
    if (!o) {
      o = foldOptionsFor(this.proc, view.unfold ? 'merged' : view.mode, false);
      this.foldCache.set(k, o);
    }
    return o;
  }

  /** The marker frame of a fold (one key per reason, so flame graphs merge the markers of one place). */
  private markerKey(reason: FoldReason): number {
    const label = reason === 'import' ? 'import machinery' : 'interpreter frames';
    return this.intern({
      info: {
        label,
        function: null,
        file: null,
        line: null,
        module: null,
        modulePath: null,
        offset: null,
        address: '0x0',
        inlined: false,
        kind: 'folded',
        unverified: false,
      },
      treeDescriptor: `fold|${reason}`,
    });
  }

  /** Filters (null: the stack is filtered out) and folds of a view, on a stack's raw keys. */
  private viewKeys(raw: Int32Array, view: ViewOptions): Int32Array | null {
    const filter = viewFilter(view);
    let keys: number[] = Array.from(raw);
    if (isActive(filter)) {
      const wrapped = keys.map((k) => {
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
    const folded = foldStack(
      keys.map((k) => ({ ...this.frames[k], key: k })),
      fold,
    );
    const out: number[] = [];
    let fi = 0;
    for (let i = 0; i <= folded.frames.length; i++) {
      while (fi < folded.folds.length && folded.folds[fi].index === i)
        out.push(this.markerKey(folded.folds[fi++].reason));
      if (i < folded.frames.length) out.push(folded.frames[i].key);
    }
    return Int32Array.from(out);
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

  /** Keys of a stack in the view's mode, before filters and folds. */
  private rawStackKeys(stackId: number, view: ViewOptions): Int32Array {
    const skip = view.hideAllocator ? (this.proc.stacks.allocatorDepth[stackId] ?? 0) : 0;
    const out: number[] = [];
    this.walk(stackId, view.mode, skip, (kind, a, position, py) => {
      if (kind === 'native') {
        const ks = this.nativeKeys(a, position);
        for (let i = 0; i < ks.length; i++) out.push(ks[i]);
      } else if (py) out.push(this.intern(this.pythonDesc(py)));
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
      const descs = kind === 'native' ? this.nativeDescs(a, position) : py ? [this.pythonDesc(py)] : [];
      for (const d of descs)
        out.push({
          ...visibleInfo(d.info),
          key: this.keyByDescriptor.get(d.treeDescriptor) ?? -1,
          hidden: position < alloc,
        });
    });
    const fold = this.foldOptions({ mode, hideAllocator: true });
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
