// The session file (docs/session-format.md): what was opened, symbol paths, the base/target selection, view state
// and notes. Versioned: `schema` is a whole number raised on every incompatible change; readers accept any
// schema up to their own and refuse newer ones with a clear message. Pure: no Node APIs.

import type { StackMode } from '../model/vocab.js';

export const SESSION_FORMAT = 'heaplens-session';
/** The schema this code writes and the newest it reads. */
export const SESSION_SCHEMA = 1;

/** A snapshot of a process, by its file (unique within a job) and sequence number (for display and matching). */
export interface SnapshotRef {
  file: string;
  seq: number | null;
}

/** A stack by its return addresses (leaf first, normalized hex as in the dump): stable across loads. */
export interface StackTarget {
  kind: 'stack';
  process: string;
  frames: string[];
  /** how the stack read when the note was written (leaf frame's name), for display when it cannot be found */
  label?: string;
}

/** A function (or module+offset) by name, in one process or (process null) in all. */
export interface FrameTarget {
  kind: 'frame';
  process: string | null;
  function: string;
  module?: string | null;
}

export interface SnapshotTarget {
  kind: 'snapshot';
  process: string;
  snapshot: SnapshotRef;
}

/** A span of the timeline, from one snapshot to another (inclusive). */
export interface SpanTarget {
  kind: 'span';
  process: string;
  from: SnapshotRef;
  to: SnapshotRef;
}

/** A comparison of two snapshots. */
export interface DiffTarget {
  kind: 'diff';
  process: string;
  base: SnapshotRef;
  target: SnapshotRef;
}

export type NoteTarget = StackTarget | FrameTarget | SnapshotTarget | SpanTarget | DiffTarget;
export type NoteKind = NoteTarget['kind'];
export const NOTE_KINDS: readonly NoteKind[] = ['stack', 'frame', 'snapshot', 'span', 'diff'];

export interface Note {
  /** unique within the session */
  id: string;
  target: NoteTarget;
  text: string;
  /** "#rrggbb" */
  color: string;
  /** ISO 8601, when written */
  createdAt: string;
  /** ISO 8601, when last edited (absent if never) */
  updatedAt?: string;
}

/** the session file's stack mode: the shared vocabulary's (core/model/vocab.ts) */
export type StackModeName = StackMode;

export interface ViewState {
  /** which view was showing ("timeline", "flame", "diff", "growth", …), null for the default */
  tab: string | null;
  stackMode: StackModeName;
  showAllocator: boolean;
  measure: 'bytes' | 'objects';
  search: string;
  /** flame-graph zoom: frame names from the root to the zoomed node; null when not zoomed */
  flameZoom: string[] | null;
  /** a stack selected in the stack panel */
  selectedStack: StackTarget | null;
  /** anything else a view keeps (flat: strings, numbers, booleans, null) */
  extra: Record<string, string | number | boolean | null>;
}

export interface Session {
  format: typeof SESSION_FORMAT;
  schema: number;
  /** ISO 8601 of the last save */
  savedAt: string;
  /** which heaplens wrote it ("heaplens 0.1.0") */
  writer: string;
  /** dump files and folders opened, as given (absolute paths in the app) */
  files: string[];
  symbols: { dirs: string[]; sysroot: string | null; enabled: boolean };
  selection: { process: string | null; base: SnapshotRef | null; target: SnapshotRef | null };
  view: ViewState;
  notes: Note[];
  /** true for a session reopened from a report: the dumps are not there, nothing is saved back */
  readOnly: boolean;
  /** where a read-only session came from */
  source: {
    kind: 'report';
    title: string;
    createdAt: string;
    /** what the report's bounds made its writer leave out (core/report/job-pack.ts), absent when nothing */
    leftOut?: string;
  } | null;
}

export function defaultView(): ViewState {
  return {
    tab: null,
    stackMode: 'python-first',
    showAllocator: false,
    measure: 'bytes',
    search: '',
    flameZoom: null,
    selectedStack: null,
    extra: {},
  };
}

export function emptySession(writer = 'heaplens'): Session {
  return {
    format: SESSION_FORMAT,
    schema: SESSION_SCHEMA,
    savedAt: new Date(0).toISOString(),
    writer,
    files: [],
    symbols: { dirs: [], sysroot: null, enabled: true },
    selection: { process: null, base: null, target: null },
    view: defaultView(),
    notes: [],
    readOnly: false,
    source: null,
  };
}
