// App state ⇄ session (core/notes/schema.ts), and what the views need from notes. Pure: no DOM, no runes, so it is
// unit-tested (session-map.test.ts). The app keeps indices (process, snapshot, stack id); a session keeps what
// stays true across loads (process key, snapshot file/seq, a stack's return addresses).

import {
  emptySession,
  type Note,
  type NoteTarget,
  type Session,
  type SnapshotRef,
  type StackTarget,
  type ViewState,
} from '../../../core/notes/schema.ts';
import type { ProcessSummary, SampleType, SourceFile, StackFilterChip, StackMode } from './protocol.ts';

import { TABS, type Tab } from '../views/tabs.ts';

export { TABS, type Tab };

/** What of the app's state goes into a session. */
export interface AppSnapshot {
  files: string[];
  symbolDirs: string[];
  process: ProcessSummary | null;
  base: number;
  target: number;
  /** the snapshot picked in the timeline (single-snapshot flame graph) */
  snapshot: number;
  tab: Tab;
  mode: StackMode;
  hideAllocator: boolean;
  search: string;
  selectedStack: StackTarget | null;
  diffMode: 'absolute' | 'share';
  widthBy: 'target' | 'delta';
  /** pprof's sample type, slicing chips, interpreter frames shown (kept in the session's view.extra) */
  sample?: SampleType;
  filters?: StackFilterChip[];
  unfold?: boolean;
  /** the flame graphs' order and start-up fold (view.extra) */
  flame?: FlameArrangement;
  notes: Note[];
  readOnly: boolean;
  source: Session['source'];
}

/** A session's view state resolved against the loaded processes. */
export interface RestoredView {
  /** index of the process to focus, null when the session's process is not loaded */
  process: number | null;
  base: number | null;
  target: number | null;
  snapshot: number | null;
  tab: Tab;
  mode: StackMode;
  hideAllocator: boolean;
  search: string;
  diffMode: 'absolute' | 'share';
  widthBy: 'target' | 'delta';
  sample: SampleType;
  filters: StackFilterChip[];
  unfold: boolean;
  flame: FlameArrangement;
  selectedStack: StackTarget | null;
}

/** How the flame graphs lay out a tree: root or leaf first, siblings heaviest first or by name, start-up folded. */
export interface FlameArrangement {
  order: 'root' | 'leaf';
  siblings: 'heaviest' | 'name';
  startup: boolean;
}

export const DEFAULT_FLAME: FlameArrangement = { order: 'root', siblings: 'heaviest', startup: true };

const CHIP_KINDS: readonly StackFilterChip['kind'][] = ['focus', 'ignore', 'hide', 'show'];

/** Chips from a session's text: well-formed ones with a valid expression, the rest dropped. */
export function parseChips(text: unknown): StackFilterChip[] {
  if (typeof text !== 'string') return [];
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: StackFilterChip[] = [];
  for (const c of v.slice(0, CHIP_KINDS.length)) {
    if (typeof c !== 'object' || c === null) continue;
    const kind = (c as { kind?: unknown }).kind;
    const re = (c as { re?: unknown }).re;
    if (typeof re !== 'string' || !CHIP_KINDS.includes(kind as StackFilterChip['kind'])) continue;
    try {
      new RegExp(re);
    } catch {
      continue;
    }
    out.push({ kind: kind as StackFilterChip['kind'], re });
  }
  return out;
}

export function refOf(p: ProcessSummary, index: number): SnapshotRef | null {
  const s = p.snapshots[index];
  return s ? { file: s.file, seq: s.seq } : null;
}

/**
 * Snapshot index of a reference (by file and sequence number, by file, else by sequence number, else by base name),
 * or -1: the snapshots of one massif file or one PyTorch trace share their file, their numbers tell them apart.
 */
export function resolveRef(p: ProcessSummary, ref: SnapshotRef): number {
  const both = p.snapshots.findIndex((s) => s.file === ref.file && s.seq === ref.seq);
  if (both >= 0) return both;
  const byFile = p.snapshots.findIndex((s) => s.file === ref.file);
  if (byFile >= 0) return byFile;
  if (ref.seq !== null) {
    const bySeq = p.snapshots.findIndex((s) => s.seq === ref.seq);
    if (bySeq >= 0) return bySeq;
  }
  const name = baseName(ref.file);
  return p.snapshots.findIndex((s) => baseName(s.file) === name);
}

export function baseName(p: string): string {
  const t = p.replace(/[\\/]+$/, '');
  return t.slice(Math.max(t.lastIndexOf('/'), t.lastIndexOf('\\')) + 1);
}

/** The process a key names: exactly, else the one whose key has the same base name (a job moved elsewhere). */
export function findProcess(processes: readonly ProcessSummary[], key: string | null): ProcessSummary | null {
  if (key === null) return null;
  return processes.find((p) => p.key === key) ?? processes.find((p) => baseName(p.key) === baseName(key)) ?? null;
}

export function toSession(s: AppSnapshot, writer: string, previous: Session | null = null): Session {
  const base = previous ?? emptySession(writer);
  const view: ViewState = {
    tab: s.tab,
    stackMode: s.mode,
    showAllocator: !s.hideAllocator,
    measure: 'bytes',
    search: s.search,
    flameZoom: null,
    selectedStack: s.selectedStack,
    extra: {
      ...base.view.extra,
      diffMode: s.diffMode,
      widthBy: s.widthBy,
      snapshot: s.process ? (s.process.snapshots[s.snapshot]?.seq ?? s.snapshot) : null,
      sample: s.sample ?? 'inuse_space',
      filters: JSON.stringify(s.filters ?? []),
      unfold: s.unfold ?? false,
      flameOrder: (s.flame ?? DEFAULT_FLAME).order,
      flameSiblings: (s.flame ?? DEFAULT_FLAME).siblings,
      foldStartup: (s.flame ?? DEFAULT_FLAME).startup,
    },
  };
  return {
    ...base,
    writer,
    files: [...s.files],
    symbols: { dirs: [...s.symbolDirs], sysroot: base.symbols.sysroot, enabled: base.symbols.enabled },
    selection: s.process
      ? { process: s.process.key, base: refOf(s.process, s.base), target: refOf(s.process, s.target) }
      : { process: null, base: null, target: null },
    view,
    notes: s.notes.map((n) => ({ ...n })),
    readOnly: s.readOnly,
    source: s.source,
  };
}

export function fromSession(session: Session, processes: readonly ProcessSummary[]): RestoredView {
  const v = session.view;
  const p = findProcess(processes, session.selection.process);
  const ix = (r: SnapshotRef | null): number | null => {
    if (!p || !r) return null;
    const i = resolveRef(p, r);
    return i >= 0 ? i : null;
  };
  let snapshot: number | null = null;
  const snapExtra = v.extra.snapshot;
  if (p && typeof snapExtra === 'number') {
    const bySeq = p.snapshots.findIndex((s) => s.seq === snapExtra);
    snapshot = bySeq >= 0 ? bySeq : snapExtra >= 0 && snapExtra < p.snapshots.length ? snapExtra : null;
  }
  return {
    process: p ? p.index : null,
    base: ix(session.selection.base),
    target: ix(session.selection.target),
    snapshot,
    // the Bottom-up tab became the flame graph's leaf-first order
    tab:
      v.tab === 'inverted' ? 'flame' : (TABS as readonly (string | null)[]).includes(v.tab) ? (v.tab as Tab) : 'growth',
    mode: v.stackMode,
    hideAllocator: !v.showAllocator,
    search: v.search,
    diffMode: v.extra.diffMode === 'share' ? 'share' : 'absolute',
    widthBy: v.extra.widthBy === 'delta' ? 'delta' : 'target',
    // any name: a type the job's profiles declare (the worker says so when they do not)
    sample: typeof v.extra.sample === 'string' && v.extra.sample.trim() !== '' ? v.extra.sample : 'inuse_space',
    filters: parseChips(v.extra.filters),
    unfold: v.extra.unfold === true,
    flame: {
      order: v.extra.flameOrder === 'leaf' || v.tab === 'inverted' ? 'leaf' : 'root',
      siblings: v.extra.flameSiblings === 'name' ? 'name' : 'heaviest',
      startup: v.extra.foldStartup !== false,
    },
    selectedStack: v.selectedStack,
  };
}

/** Files a session names that were not opened (compared by base name: the browser has no real paths). */
export function missingFiles(session: Session, opened: readonly string[]): string[] {
  const have = new Set(opened.map(baseName));
  const dirs = new Set<string>();
  for (const o of opened) for (const part of o.split(/[\\/]/).slice(0, -1)) dirs.add(part);
  return session.files.filter((f) => !have.has(baseName(f)) && !dirs.has(baseName(f)));
}

export type OpenedKind = 'session' | 'report' | 'dump';

/** What a dropped or picked file is, by name: a session file, a report, or anything else (dumps, maps, binaries). */
export function openedKind(path: string): OpenedKind {
  const n = baseName(path).toLowerCase();
  if (n.endsWith('.heaplens.json') || n.endsWith('.heaplens-session.json')) return 'session';
  if (n.endsWith('.html') || n.endsWith('.htm')) return 'report';
  return 'dump';
}

export function classifyOpened(files: readonly SourceFile[]): {
  sessions: SourceFile[];
  reports: SourceFile[];
  dumps: SourceFile[];
} {
  const out = { sessions: [] as SourceFile[], reports: [] as SourceFile[], dumps: [] as SourceFile[] };
  for (const f of files) {
    const k = openedKind(f.path);
    (k === 'session' ? out.sessions : k === 'report' ? out.reports : out.dumps).push(f);
  }
  return out;
}

/** A timeline mark: a note on a snapshot (from = to), a span, or a diff (from = base, to = target). */
export interface TimelineMark {
  note: Note;
  kind: 'snapshot' | 'span' | 'diff';
  from: number;
  to: number;
}

/** Notes of this process that belong on the timeline, resolved to snapshot indices. */
export function timelineMarks(notes: readonly Note[], p: ProcessSummary | null): TimelineMark[] {
  if (!p) return [];
  const out: TimelineMark[] = [];
  for (const note of notes) {
    const t = note.target;
    if (t.kind === 'stack' || t.kind === 'frame') continue;
    if (t.process !== p.key && baseName(t.process) !== baseName(p.key)) continue;
    const [a, b] =
      t.kind === 'snapshot' ? [t.snapshot, t.snapshot] : t.kind === 'span' ? [t.from, t.to] : [t.base, t.target];
    const from = resolveRef(p, a);
    const to = resolveRef(p, b);
    if (from < 0 || to < 0) continue;
    out.push({ note, kind: t.kind, from: Math.min(from, to), to: Math.max(from, to) });
  }
  return out;
}

/** Notes on a function (frame notes of this process or of every process). */
export function notesOnFunction(notes: readonly Note[], processKey: string | null, fn: string): Note[] {
  return notes.filter(
    (n) =>
      n.target.kind === 'frame' &&
      n.target.function === fn &&
      (n.target.process === null || n.target.process === processKey),
  );
}

/** Function names with frame notes in this process: what the flame graph and tables badge. */
export function notedFunctions(notes: readonly Note[], processKey: string | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of notes) {
    const t = n.target;
    if (t.kind === 'frame' && (t.process === null || t.process === processKey) && !out.has(t.function))
      out.set(t.function, n.color);
  }
  return out;
}

export function sameStackTarget(a: StackTarget, b: StackTarget): boolean {
  return a.process === b.process && a.frames.length === b.frames.length && a.frames.every((f, i) => f === b.frames[i]);
}

/** Short kind label for a note target (the notes panel). */
export function targetKindLabel(t: NoteTarget): string {
  return t.kind === 'frame' ? 'function' : t.kind;
}

/** Debounce: `run` once, `ms` after the last call; `flush` runs a pending call now. */
export function debounce(run: () => void, ms: number): { call(): void; flush(): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return {
    call() {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        run();
      }, ms);
    },
    flush() {
      if (!timer) return;
      clearTimeout(timer);
      timer = null;
      run();
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
