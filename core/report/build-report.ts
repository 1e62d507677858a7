// Model + selection + notes → the report's payload (core/report/job-pack.ts): per process the stacks worth keeping
// (top-N at target, by growth base → target, by steady growth over the series, by peak, every noted and the
// selected stack), the rest summed into one "other" stack per snapshot so totals stay whole. The app's own
// analysis runs on it in the page. Pure. Sanitizing (directory paths → basenames; maps reduced to the module
// ranges of kept frames) is applied here, and reported as a preview of what it removes.

import { basename } from '../formats/dump-filename.js';
import type { LoadWarning, ProcessSeries } from '../model/model.js';
import { diffSnapshots } from '../stats/diff.js';
import { rankGrowth } from '../stats/growth.js';
import { defaultSnapshot, seriesEndIndex } from '../model/series-end.js';
import { isFileMapping } from '../formats/proc-maps.js';
import {
  emptySession,
  type Note,
  type NoteTarget,
  type Session,
  type SnapshotRef,
  type StackTarget,
} from '../notes/schema.js';
import { resolveSnapshot, resolveStack } from '../notes/notes.js';
import { packJob, type PackedJob, type PackInput } from './job-pack.js';
import { directoriesOf, scrubDirectories } from './scrub-dirs.js';
import { viewForProcesses, type PostmortemView } from '../query/postmortem-view.js';
import { REPORT_LIMITS, type ReportLimits } from './report-limits.js';

export interface ReportProcessInput {
  /** with its symbols (proc.symbols), null when not symbolized */
  proc: ProcessSeries;
  /** snapshot indices; default: the session's selection when it names this process, else first → last */
  base?: number;
  target?: number;
}

export interface SanitizeOptions {
  /** directory paths → basenames (dump files, process keys, source files, modules, session paths) */
  paths?: boolean;
  /** leave the maps out (frames keep their module basename and offset) */
  maps?: boolean;
}

export interface BuildReportOptions {
  title?: string;
  createdAt?: Date;
  generator?: string;
  /** stacks per list (at target, by growth, by steady growth, by peak); default 50 */
  topN?: number;
  /** the view the report opens with */
  stackMode?: string;
  showAllocator?: boolean;
  /** whether the frames were symbolized (shown in the report) */
  symbolized?: boolean;
  session?: Session | null;
  warnings?: readonly LoadWarning[];
  sanitize?: SanitizeOptions;
  /** why the job died over the whole loaded job and its logs (the report opens with its verdict) */
  postmortem?: PostmortemView | null;
  /** what a report may hold (default REPORT_LIMITS; tests give smaller ones) */
  limits?: ReportLimits;
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

/** The stacks a report keeps for one process (ids), best first. */
export function keptStacks(
  proc: ProcessSeries,
  base: number,
  target: number,
  topN: number,
  notes: readonly Note[],
  selected: StackTarget | null,
): number[] {
  return [...keptStacksRanked(proc, base, target, topN, notes, selected).keys()];
}

/**
 * The stacks a report keeps for one process, each with its rank: its best place in the four lists (0: the top of
 * one), -1 for a noted or the selected stack. When the report's bounds trim (job-pack.ts), the highest ranks go first.
 */
export function keptStacksRanked(
  proc: ProcessSeries,
  base: number,
  target: number,
  topN: number,
  notes: readonly Note[],
  selected: StackTarget | null,
): Map<number, number> {
  const include = new Map<number, number>();
  const add = (id: number, rank: number): void => {
    const r = include.get(id);
    if (r === undefined || rank < r) include.set(id, rank);
  };
  const n = proc.snapshots.length;
  if (n === 0) return include;
  const deltas = diffSnapshots(proc, base, target);
  [...deltas]
    .sort((x, y) => y.targetBytes - x.targetBytes || x.stackId - y.stackId)
    .slice(0, topN)
    .forEach((d, i) => add(d.stackId, i));
  deltas
    .filter((d) => d.deltaBytes > 0)
    .slice(0, topN)
    .forEach((d, i) => add(d.stackId, i));
  if (n > 1)
    // steady growth up to the series' end (an exit dump after teardown would read as a fall)
    rankGrowth(proc, { to: Math.max(0, seriesEndIndex(proc)) })
      .filter((g) => g.steadiness > 0)
      .slice(0, topN)
      .forEach((g, i) => add(g.stackId, i));
  // peak over the series (the timeline's stacked areas)
  const peak = new Float64Array(proc.stacks.count);
  for (const snap of proc.snapshots)
    for (let j = 0; j < snap.stackIds.length; j++)
      if (snap.liveBytes[j] > peak[snap.stackIds[j]]) peak[snap.stackIds[j]] = snap.liveBytes[j];
  Array.from(peak.keys())
    .sort((x, y) => peak[y] - peak[x] || x - y)
    .slice(0, topN)
    .forEach((id, i) => add(id, i));
  for (const note of notes) {
    if (note.target.kind !== 'stack') continue;
    const id = resolveStack(proc, note.target);
    if (id !== null) add(id, -1);
  }
  if (selected) {
    const id = resolveStack(proc, selected);
    if (id !== null) add(id, -1);
  }
  return include;
}

/** The growth of a process from its first dump to its series' end (bytes). */
function growthOf(proc: ProcessSeries): number {
  const sn = proc.snapshots;
  return sn.length > 0 ? sn[Math.max(0, seriesEndIndex(proc))].live.bytes - sn[0].live.bytes : 0;
}

/**
 * The processes a report can hold (REPORT_LIMITS: processes, snapshots summed): all of them, or the selected one and
 * then those that grew most, with the sentence saying what went.
 */
function fitProcesses(
  inputs: readonly ReportProcessInput[],
  selected: string | null,
  limits: ReportLimits,
): { kept: number[]; reason: string | null } {
  const snaps = inputs.reduce((a, i) => a + i.proc.snapshots.length, 0);
  const all = inputs.map((_, i) => i);
  if (inputs.length <= limits.processes && snaps <= limits.snapshots) return { kept: all, reason: null };
  const growth = inputs.map((i) => growthOf(i.proc));
  const order = all.sort(
    (a, b) =>
      Number(inputs[b].proc.key === selected) - Number(inputs[a].proc.key === selected) ||
      growth[b] - growth[a] ||
      a - b,
  );
  const kept: number[] = [];
  let n = 0;
  for (const i of order) {
    const s = inputs[i].proc.snapshots.length;
    if (kept.length >= limits.processes || n + s > limits.snapshots) continue;
    kept.push(i);
    n += s;
  }
  kept.sort((a, b) => a - b);
  const f = (x: number): string => x.toLocaleString('en-US');
  return {
    kept,
    reason:
      `a report holds at most ${f(limits.processes)} processes and ${f(limits.snapshots)} snapshots ` +
      `(the job has ${f(inputs.length)} and ${f(snaps)}): the ${f(inputs.length - kept.length)} processes that grew least are left out`,
  };
}

export function buildReport(
  allInputs: readonly ReportProcessInput[],
  options: BuildReportOptions = {},
): { job: PackedJob; bytes: Uint8Array; preview: SanitizePreview } {
  const topN = options.topN ?? 50;
  const showAllocator = options.showAllocator ?? false;
  const stripPaths = options.sanitize?.paths ?? false;
  const dropMaps = options.sanitize?.maps ?? false;
  const session = options.session ?? null;
  const notes: Note[] = session?.notes ?? [];
  const limits = options.limits ?? REPORT_LIMITS;
  const fit = fitProcesses(allInputs, session?.selection.process ?? null, limits);
  const inputs = fit.reason ? fit.kept.map((i) => allInputs[i]) : allInputs;
  const postmortem =
    options.postmortem && fit.reason ? viewForProcesses(options.postmortem, fit.kept) : options.postmortem;
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

  const mapsDropped: SanitizePreview['maps'] = [];
  const packInputs: PackInput[] = [];
  const bases: { base: number; target: number }[] = [];
  for (const input of inputs) {
    const { proc } = input;
    const n = proc.snapshots.length;
    const sel = session && session.selection.process === proc.key ? session.selection : null;
    let base = input.base ?? (sel?.base ? resolveSnapshot(proc, sel.base) : -1);
    let tgt = input.target ?? (sel?.target ? resolveSnapshot(proc, sel.target) : -1);
    if (base < 0 || base >= n) base = 0;
    // default target: the series' end (core/model/series-end.ts: a killed process's cut dump would report frees
    // that never happened, an exit dump after teardown the interpreter's frees at exit), a massif snapshot with a tree
    if (tgt < 0 || tgt >= n) tgt = Math.max(0, defaultSnapshot(proc));
    bases.push({ base, target: tgt });
    const ranked = keptStacksRanked(proc, base, tgt, topN, notes, session?.view.selectedStack ?? null);
    packInputs.push({ proc, keep: [...ranked.keys()], rank: [...ranked.values()], base, target: tgt });
    const fileMaps = (proc.maps ?? []).filter(isFileMapping);
    if (dropMaps && fileMaps.length > 0) mapsDropped.push({ process: key(proc.key), mappings: fileMaps.length });
    // paths that go out through the maps and symbols are recorded for the preview
    if (!dropMaps) for (const m of fileMaps) path(m.path);
  }

  const s = session ?? emptySession(options.generator ?? 'heaplens');
  // without a session the report opens on the process that grew the most
  let fi = 0;
  for (let k = 1; k < inputs.length; k++) if (growthOf(inputs[k].proc) > growthOf(inputs[fi].proc)) fi = k;
  const first = inputs[fi]?.proc;
  const firstSel = bases[fi];
  const sessionOut: Omit<Session, 'notes'> = {
    format: s.format,
    schema: s.schema,
    savedAt: s.savedAt,
    writer: s.writer,
    files: s.files.map(path),
    symbols: {
      dirs: s.symbols.dirs.map(path),
      sysroot: s.symbols.sysroot === null ? null : path(s.symbols.sysroot),
      enabled: s.symbols.enabled,
    },
    selection:
      session && s.selection.process !== null
        ? {
            process: s.selection.process === null ? null : key(s.selection.process),
            base: s.selection.base && ref(s.selection.base),
            target: s.selection.target && ref(s.selection.target),
          }
        : first && firstSel
          ? {
              process: key(first.key),
              base: ref({ file: first.snapshots[firstSel.base].file, seq: first.snapshots[firstSel.base].seq }),
              target: ref({ file: first.snapshots[firstSel.target].file, seq: first.snapshots[firstSel.target].seq }),
            }
          : { process: null, base: null, target: null },
    view: session
      ? { ...s.view, selectedStack: s.view.selectedStack ? stackT(s.view.selectedStack) : null }
      : {
          ...s.view,
          stackMode: (['merged', 'python', 'native'] as const).find((m) => m === options.stackMode) ?? s.view.stackMode,
          showAllocator,
        },
    readOnly: s.readOnly,
    source: s.source,
  };

  const shownWarnings = (options.warnings ?? []).slice(0, MAX_WARNINGS);
  const dirs = stripPaths
    ? directoriesOf([
        ...removed.keys(),
        ...shownWarnings.map((w) => w.file),
        ...(postmortem?.logsRead.map((l) => l.file) ?? []),
        ...inputs.flatMap(({ proc }) => [
          proc.key,
          ...proc.snapshots.map((s) => s.file),
          ...(proc.maps ?? []).map((m) => m.path),
        ]),
      ])
    : [];
  const scrub = (t: string): string => (stripPaths ? scrubDirectories(t, dirs) : t);
  const warnings = shownWarnings.map((w) => {
    const o: PackedJob['warnings'][number] = {
      file: path(w.file),
      message: stripPaths ? scrubDirectories(w.message, dirs) : w.message,
    };
    if (w.line !== undefined) o.line = w.line;
    return o;
  });
  const { job, bytes } = packJob(
    {
      title: options.title ?? 'heaplens report',
      createdAt: (options.createdAt ?? new Date()).toISOString(),
      generator: options.generator ?? 'heaplens',
      sanitized: { paths: stripPaths, maps: dropMaps },
      options: {
        topN,
        stackMode: options.stackMode ?? 'merged',
        showAllocator,
        symbolized: options.symbolized ?? false,
      },
      notes: notes.map((n) => ({ ...n, target: target(n.target) })),
      session: sessionOut,
      warnings,
      warningsOmitted: Math.max(0, (options.warnings?.length ?? 0) - MAX_WARNINGS),
      ...(postmortem ? { postmortem: sanitizePostmortem(postmortem, path, scrub) } : {}),
      ...(fit.reason ? { processesLeftOut: { count: allInputs.length - inputs.length, reason: fit.reason } } : {}),
    },
    packInputs,
    { path, key, keepMaps: !dropMaps },
    limits,
  );
  const preview: SanitizePreview = {
    paths: [...removed.entries()]
      .map(([from, to]) => ({ from, to }))
      .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0)),
    maps: mapsDropped,
    notesKeptAsWritten: notes.length,
  };
  return { job, bytes, preview };
}

/** The post-mortem as it goes into the report: the log files' paths and any path in its texts shortened. */
function sanitizePostmortem(
  pm: PostmortemView,
  path: (p: string) => string,
  scrub: (t: string) => string,
): PostmortemView {
  return {
    ...pm,
    verdict: scrub(pm.verdict),
    kill: pm.kill
      ? {
          ...pm.kill,
          evidence: pm.kill.evidence
            ? { ...pm.kill.evidence, file: path(pm.kill.evidence.file), text: scrub(pm.kill.evidence.text) }
            : null,
        }
      : null,
    limit: pm.limit ? { ...pm.limit, source: scrub(pm.limit.source) } : null,
    processes: pm.processes.map((p) => ({
      ...p,
      memory: { ...p.memory, source: p.memory.source === null ? null : scrub(p.memory.source) },
      // each process's fate evidence names its file (a log, or the dumps) as the kill's does
      ...(p.evidence ? { evidence: { ...p.evidence, file: path(p.evidence.file), text: scrub(p.evidence.text) } } : {}),
    })),
    culprits: pm.culprits.map((c) => ({ ...c, site: scrub(c.site) })),
    logsRead: pm.logsRead.map((l) => ({ file: path(l.file), gave: scrub(l.gave) })),
  };
}
