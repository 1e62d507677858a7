// Model + selection + notes → the report's data (report/data.ts). Pure. Per process: the timeline, the base and
// target snapshots, the top-N stacks by target bytes, by steady growth and by Δ, every stack a note points at, and
// the rest summed into "other" so totals stay whole. Sanitizing (directory paths → basenames; maps dropped) is
// applied here, before anything is interned, and reported as a preview of what it removes.

import type { LoadWarning, ProcessSeries } from '../analysis/model.js';
import { diffSnapshots } from '../analysis/diff.js';
import { rankGrowth, stackSeries } from '../analysis/growth.js';
import { isFileMapping } from '../parsers/proc-maps.js';
import { visible, type ExportFrame, type FrameSource } from '../export/frames.js';
import { emptySession, type Note, type NoteTarget, type Session, type SnapshotRef, type StackTarget } from '../session/schema.js';
import { resolveSnapshot, resolveStack } from '../session/notes.js';
import { REPORT_FORMAT, REPORT_VERSION, type ReportData, type ReportFrame, type ReportProcess, type ReportStack } from './data.js';
import { directoriesOf, scrubDirectories } from './scrub-dirs.js';

export interface ReportProcessInput {
  proc: ProcessSeries;
  /** frames of the process's stacks (export/frames.ts processFrameSource, or the CLI's describer) */
  frames: FrameSource;
  /** snapshot indices; default: the session's selection when it names this process, else first → last */
  base?: number;
  target?: number;
}

export interface SanitizeOptions {
  /** directory paths → basenames (dump files, process keys, source files, modules, session paths) */
  paths?: boolean;
  /** leave the maps out */
  maps?: boolean;
}

export interface BuildReportOptions {
  title?: string;
  createdAt?: Date;
  generator?: string;
  /** stacks per list (by target bytes, by growth, by Δ); default 50 */
  topN?: number;
  /** steadiest growers whose whole series is kept; default 20 */
  seriesN?: number;
  stackMode?: string;
  showAllocator?: boolean;
  /** whether the frames were symbolized (shown in the report) */
  symbolized?: boolean;
  session?: Session | null;
  warnings?: readonly LoadWarning[];
  sanitize?: SanitizeOptions;
}

/** What sanitizing removes, for the user to check before sharing. */
export interface SanitizePreview {
  /** each distinct path and what it becomes */
  paths: { from: string; to: string }[];
  /** maps left out, per process */
  maps: { process: string; mappings: number }[];
  /** notes are kept as written: their texts may still name paths */
  notesKeptAsWritten: number;
}

const MAX_WARNINGS = 200;

function basename(p: string): string {
  const t = p.endsWith('/') ? p.slice(0, -1) : p;
  const i = t.lastIndexOf('/');
  return i >= 0 ? t.slice(i + 1) : t;
}


export function buildReportData(inputs: readonly ReportProcessInput[], options: BuildReportOptions = {}): { data: ReportData; preview: SanitizePreview } {
  const topN = options.topN ?? 50;
  const seriesN = options.seriesN ?? 20;
  const showAllocator = options.showAllocator ?? false;
  const stripPaths = options.sanitize?.paths ?? false;
  const dropMaps = options.sanitize?.maps ?? false;
  const session = options.session ?? null;
  const notes: Note[] = session?.notes ?? [];

  // --- sanitizing: one mapping for every path-like string, recorded for the preview
  const removed = new Map<string, string>();
  const path = (p: string): string => {
    if (!stripPaths || !p.includes('/')) return p;
    const to = basename(p);
    if (to !== p) removed.set(p, to);
    return to;
  };
  const keyMap = new Map<string, string>();
  const usedKeys = new Set<string>();
  for (const { proc } of inputs) {
    let k = stripPaths ? basename(proc.key) : proc.key;
    if (usedKeys.has(k)) {
      let n = 2;
      while (usedKeys.has(`${k}~${n}`)) n++;
      k = `${k}~${n}`;
    }
    usedKeys.add(k);
    keyMap.set(proc.key, k);
    if (k !== proc.key) removed.set(proc.key, k);
  }
  const key = (k: string): string => keyMap.get(k) ?? path(k);
  const ref = (r: SnapshotRef): SnapshotRef => ({ file: path(r.file), seq: r.seq });
  const stackT = (t: StackTarget): StackTarget => ({ ...t, process: key(t.process) });
  const target = (t: NoteTarget): NoteTarget => {
    switch (t.kind) {
      case 'stack':
        return stackT(t);
      case 'frame':
        return { ...t, process: t.process === null ? null : key(t.process) };
      case 'snapshot':
        return { ...t, process: key(t.process), snapshot: ref(t.snapshot) };
      case 'span':
        return { ...t, process: key(t.process), from: ref(t.from), to: ref(t.to) };
      case 'diff':
        return { ...t, process: key(t.process), base: ref(t.base), target: ref(t.target) };
    }
  };

  // --- strings
  const strings: string[] = [''];
  const stringIds = new Map<string, number>([['', 0]]);
  const sid = (s: string | null | undefined): number => {
    if (s === null || s === undefined || s === '') return 0;
    let id = stringIds.get(s);
    if (id === undefined) {
      id = strings.length;
      strings.push(s);
      stringIds.set(s, id);
    }
    return id;
  };

  const mapsDropped: SanitizePreview['maps'] = [];
  const processes: ReportProcess[] = inputs.map((input) => {
    const { proc } = input;
    const n = proc.snapshots.length;
    const sel = session && session.selection.process === proc.key ? session.selection : null;
    let base = input.base ?? (sel?.base ? resolveSnapshot(proc, sel.base) : -1);
    let tgt = input.target ?? (sel?.target ? resolveSnapshot(proc, sel.target) : -1);
    if (base < 0 || base >= n) base = 0;
    if (tgt < 0 || tgt >= n) tgt = n - 1;

    const deltas = diffSnapshots(proc, base, tgt);
    const growth = n > 1 ? rankGrowth(proc) : [];
    const growthOf = new Map(growth.map((g) => [g.stackId, g] as const));
    const include = new Set<number>();
    [...deltas].sort((a, b) => b.targetBytes - a.targetBytes || a.stackId - b.stackId).slice(0, topN).forEach((d) => include.add(d.stackId));
    deltas.filter((d) => d.deltaBytes > 0).slice(0, topN).forEach((d) => include.add(d.stackId));
    const growers = growth.filter((g) => g.score > 0).slice(0, topN);
    growers.forEach((g) => include.add(g.stackId));
    const seriesIds = new Set(growers.slice(0, seriesN).map((g) => g.stackId));
    for (const note of notes) {
      if (note.target.kind !== 'stack') continue;
      const id = resolveStack(proc, note.target);
      if (id !== null) {
        include.add(id);
        seriesIds.add(id);
      }
    }
    const sel2 = session?.view.selectedStack;
    if (sel2) {
      const id = resolveStack(proc, sel2);
      if (id !== null) include.add(id);
    }

    const frames: ReportFrame[] = [];
    const frameIds = new Map<string, number>();
    const frameId = (f: ExportFrame): number => {
      const lines: [number, number, number][] =
        f.inlined && f.inlined.length > 0
          ? f.inlined.map((l) => [sid(l.function), sid(l.file ? path(l.file) : null), l.line ?? 0])
          : [[sid(f.function ?? null), sid(f.file ? path(f.file) : null), f.line ?? 0]];
      const rf: ReportFrame = { address: f.address, kind: f.kind, module: f.module ? sid(f.module) : -1, moduleOffset: f.moduleOffset, lines };
      const k = JSON.stringify(rf);
      let id = frameIds.get(k);
      if (id === undefined) {
        id = frames.length;
        frames.push(rf);
        frameIds.set(k, id);
      }
      return id;
    };

    const byId = new Map(deltas.map((d) => [d.stackId, d] as const));
    const ids = [...include].sort((a, b) => (byId.get(b)?.targetBytes ?? 0) - (byId.get(a)?.targetBytes ?? 0) || a - b);
    const seriesList = ids.filter((id) => seriesIds.has(id));
    const seriesRows = stackSeries(proc, seriesList);
    const seriesOf = new Map(seriesList.map((id, i) => [id, Array.from(seriesRows[i], (v) => Math.round(v))] as const));
    const { offsets, frames: addrIds } = proc.stacks;
    const stacks: ReportStack[] = ids.map((id) => {
      const d = byId.get(id);
      const g = growthOf.get(id);
      return {
        id,
        frames: visible(input.frames.frames(id), showAllocator).map(frameId),
        addresses: addrIds.slice(offsets[id], offsets[id + 1]).map((a) => proc.addresses.hex[a]),
        baseBytes: d?.baseBytes ?? 0,
        baseObjects: d?.baseObjects ?? 0,
        targetBytes: d?.targetBytes ?? 0,
        targetObjects: d?.targetObjects ?? 0,
        growth: g ? { slope: g.slopeBytesPerSnapshot, grew: g.growingFraction, r2: g.r2, delta: g.deltaBytes, score: g.score } : null,
        series: seriesOf.get(id) ?? null,
      };
    });
    const other = { baseBytes: 0, baseObjects: 0, targetBytes: 0, targetObjects: 0, stacks: 0 };
    for (const d of deltas) {
      if (include.has(d.stackId)) continue;
      other.baseBytes += d.baseBytes;
      other.baseObjects += d.baseObjects;
      other.targetBytes += d.targetBytes;
      other.targetObjects += d.targetObjects;
      other.stacks++;
    }
    const fileMaps = (proc.maps ?? []).filter(isFileMapping);
    if (dropMaps && fileMaps.length > 0) mapsDropped.push({ process: key(proc.key), mappings: fileMaps.length });
    return {
      key: key(proc.key),
      pid: proc.pid,
      prefix: proc.prefix,
      endedWithoutFinalDump: proc.endedWithoutFinalDump,
      snapshots: proc.snapshots.map((s) => ({
        file: path(s.file),
        seq: s.seq,
        trigger: s.trigger,
        liveBytes: s.live.bytes,
        liveObjects: s.live.objects,
        samplePeriod: s.samplePeriod,
        truncated: s.truncated !== null,
        mtimeMs: s.mtimeMs,
      })),
      base,
      target: tgt,
      frames,
      stacks,
      other,
      stackCount: proc.stacks.count,
      maps:
        dropMaps || !proc.maps
          ? null
          : fileMaps.map((m) => ({ start: '0x' + m.start.toString(16), end: '0x' + m.end.toString(16), offset: '0x' + m.offset.toString(16), path: path(m.path) })),
    };
  });

  const s = session ?? emptySession(options.generator ?? 'heaplens');
  const first = inputs[0]?.proc;
  const sessionOut: Omit<Session, 'notes'> = {
    format: s.format,
    schema: s.schema,
    savedAt: s.savedAt,
    writer: s.writer,
    files: s.files.map(path),
    symbols: { dirs: s.symbols.dirs.map(path), sysroot: s.symbols.sysroot === null ? null : path(s.symbols.sysroot), enabled: s.symbols.enabled },
    selection: session
      ? { process: s.selection.process === null ? null : key(s.selection.process), base: s.selection.base && ref(s.selection.base), target: s.selection.target && ref(s.selection.target) }
      : first
        ? { process: key(first.key), base: ref({ file: first.snapshots[processes[0].base].file, seq: first.snapshots[processes[0].base].seq }), target: ref({ file: first.snapshots[processes[0].target].file, seq: first.snapshots[processes[0].target].seq }) }
        : { process: null, base: null, target: null },
    view: { ...s.view, selectedStack: s.view.selectedStack ? stackT(s.view.selectedStack) : null },
    readOnly: s.readOnly,
    source: s.source,
  };

  const shownWarnings = (options.warnings ?? []).slice(0, MAX_WARNINGS);
  const dirs = stripPaths ? directoriesOf([...removed.keys(), ...shownWarnings.map((w) => w.file), ...inputs.flatMap(({ proc }) => [proc.key, ...proc.snapshots.map((s) => s.file), ...(proc.maps ?? []).map((m) => m.path)])]) : [];
  const warnings = shownWarnings.map((w) => {
    const o: ReportData['warnings'][number] = { file: path(w.file), message: stripPaths ? scrubDirectories(w.message, dirs) : w.message };
    if (w.line !== undefined) o.line = w.line;
    return o;
  });
  const data: ReportData = {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    title: options.title ?? 'heaplens report',
    createdAt: (options.createdAt ?? new Date()).toISOString(),
    generator: options.generator ?? 'heaplens',
    sanitized: { paths: stripPaths, maps: dropMaps },
    options: { topN, seriesN, stackMode: options.stackMode ?? 'merged', showAllocator, symbolized: options.symbolized ?? false },
    strings,
    processes,
    notes: notes.map((n) => ({ ...n, target: target(n.target) })),
    session: sessionOut,
    warnings,
    warningsOmitted: Math.max(0, (options.warnings?.length ?? 0) - MAX_WARNINGS),
  };
  const preview: SanitizePreview = {
    paths: [...removed.entries()].map(([from, to]) => ({ from, to })).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0)),
    maps: mapsDropped,
    notesKeptAsWritten: notes.length,
  };
  return { data, preview };
}
