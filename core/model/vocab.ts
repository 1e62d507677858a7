// The words every layer shares, declared once: the CLI, the app's worker and UI, sessions, exports and the report
// import them from here (a string union declared twice compiles until the day one copy drifts).

/** How a stack's Python frames show (core/frames/python-stacks.ts): Python-first folds the interpreter's frames. */
export type StackMode = 'python-first' | 'merged' | 'python' | 'native';

/** The sample types every heap profile has a column for, with pprof's names (core/model/sample-type.ts). */
export type BuiltinSampleType = 'inuse_space' | 'inuse_objects' | 'alloc_space' | 'alloc_objects';
/** What the values count: a built-in type, or any other a pprof profile declares (its `type` string, e.g. `tlab`). */
export type SampleType = BuiltinSampleType | (string & Record<never, never>);

/**
 * What a frame is: a native return address, one in the allocator's leading frames, a Python frame, or the marker
 * of a run of folded frames (interpreter or import machinery; core/frames/stack-labels.ts).
 */
export type FrameKind = 'native' | 'allocator' | 'python' | 'folded';

/** The role of a native frame's module in its process: the main executable, a shared library, or unknown. */
export type ModuleRole = 'program' | 'library' | 'unknown';

/**
 * The group a frame is coloured and named by in the app's legend: its kind, with a native frame's module role in
 * place of 'native'.
 */
export type FrameGroup = Exclude<FrameKind, 'native'> | ModuleRole;

export function frameGroup(f: { kind: FrameKind; role?: ModuleRole | null }): FrameGroup {
  return f.kind === 'native' ? (f.role ?? 'unknown') : f.kind;
}

/** pprof's slicing (core/frames/stack-filter.ts): a regular expression on function, file or module path */
export interface StackFilterChip {
  kind: 'focus' | 'ignore' | 'hide' | 'show';
  re: string;
}

/**
 * How a view shows stacks, in the CLI (--stacks, --show-allocator, --fold-imports, --focus…) and in the app alike
 * (core/frames/view.ts). The allocator flag has one sense here: the sessions' `showAllocator` and the CLI's
 * `--show-allocator` are its negation at the edges.
 */
export interface ViewOptions {
  mode: StackMode;
  /** drop each stack's leading allocator frames (ProcessSeries.stacks.allocatorDepth): the default everywhere */
  hideAllocator: boolean;
  /** what the values count (default inuse_space) */
  sample?: SampleType;
  /** focus/ignore/hide/show, applied to every frame before folding; the last of each kind wins */
  filters?: StackFilterChip[];
  /** python-first: show the interpreter's frames instead of their markers */
  unfold?: boolean;
  /** fold the import machinery's frames too (--fold-imports) */
  foldImports?: boolean;
}

/** What a load is doing: the engine's phases (scan, parse, symbolize), or a front-end's own step in words. */
export type LoadPhase = 'scan' | 'parse' | 'symbolize';

export interface LoadProgress {
  phase: LoadPhase;
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  file: string;
}
