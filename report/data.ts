// The data a report embeds (compressed): everything the viewer shows and what reopening needs, nothing more.
// Strings are interned in one table (`strings`); frames are per process, stacks refer to them by index.

import type { Note, Session } from '../session/schema.js';

export const REPORT_FORMAT = 'heaplens-report';
export const REPORT_VERSION = 1;

/** A frame: `lines` innermost first (inlined functions, the last is the real one): [name, file, line] string ids, 0 = none. */
export interface ReportFrame {
  /** raw address (hex), or the Python pseudo-address */
  address: string;
  /** 'folded': the marker of folded frames (interpreter or import machinery; analysis/stack-labels.ts) */
  kind: 'native' | 'allocator' | 'python' | 'folded';
  /** module name string id, -1 when in no module */
  module: number;
  moduleOffset: string | null;
  lines: [name: number, file: number, line: number][];
}

export interface ReportStack {
  /** the stack's id in the model (for the reader's reference; not stable across loads) */
  id: number;
  /** frame indices, leaf first */
  frames: number[];
  /** return addresses, leaf first (what notes refer to) */
  addresses: string[];
  baseBytes: number;
  baseObjects: number;
  targetBytes: number;
  targetObjects: number;
  /** growth over the whole series, when the process has more than one snapshot */
  growth: { slope: number; grew: number; r2: number; delta: number; score: number } | null;
  /** live bytes at every snapshot (rounded), for the steadiest growers and noted stacks; null otherwise */
  series: number[] | null;
}

export interface ReportSnapshot {
  file: string;
  seq: number | null;
  trigger: string;
  liveBytes: number;
  liveObjects: number;
  samplePeriod: number;
  truncated: boolean;
  mtimeMs: number | null;
}

export interface ReportProcess {
  key: string;
  pid: number | null;
  prefix: string;
  endedWithoutFinalDump: boolean;
  snapshots: ReportSnapshot[];
  /** indices into snapshots */
  base: number;
  target: number;
  frames: ReportFrame[];
  /** the included stacks: top-N by target bytes, by growth and by Δ, and every stack a note points at */
  stacks: ReportStack[];
  /** what the stacks not included add up to, so that totals stay whole */
  other: { baseBytes: number; baseObjects: number; targetBytes: number; targetObjects: number; stacks: number };
  /** all stacks of the process */
  stackCount: number;
  /** the process's maps (file mappings), null when dropped or absent */
  maps: { start: string; end: string; offset: string; path: string }[] | null;
}

export interface ReportData {
  format: typeof REPORT_FORMAT;
  version: number;
  title: string;
  /** ISO 8601 */
  createdAt: string;
  generator: string;
  sanitized: { paths: boolean; maps: boolean };
  options: { topN: number; seriesN: number; stackMode: string; showAllocator: boolean; symbolized: boolean };
  /** interned strings; id 0 is "" */
  strings: string[];
  processes: ReportProcess[];
  notes: Note[];
  /** the session the report was made from (files, symbols, selection, view); notes are in `notes` */
  session: Omit<Session, 'notes'>;
  warnings: { file: string; line?: number; message: string }[];
  /** warnings left out (the report keeps the first 200) */
  warningsOmitted: number;
}
