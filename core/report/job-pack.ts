// A Job in a form small enough to embed in a report and complete enough for the app's own analysis to run on it
// in the page: per process, the kept stacks (core/report/build-report.ts picks them) with every snapshot's values,
// the other stacks summed into one "(N other stacks)" stack per snapshot (totals stay whole), its Python frame
// table's fields and the maps (or, sanitized, only the module ranges the kept addresses fall in). Frames and stacks
// are stored once per job (version 3): the job's frame table (an address with its symbols and its Python frame) and
// stack table (frame ids, leaf first), which each process's stacks refer to — a job of 1,000 processes sharing one
// code base keeps each of its frames once, not 1,000 times. The writer never emits what the reader's bounds
// (report-limits.ts) refuse: over them, the quietest kept stacks go into their process's "other" stack and the
// header's `leftOut` says so. Values are float32 columns, stack-major, snapshot indices delta-coded, all behind one
// JSON header, then deflated (pako, level 6). Pure: no Node, no DOM. Reading: job-unpack.ts.
//
// Layout of the bytes before deflate: u32 LE header length · header JSON (UTF-8) · zero padding to 4 · columns.

import { basename } from '../formats/dump-filename.js';
import { deflate } from 'pako';
import type { Counts, GpuSeriesInfo, ProcessSeries, Snapshot } from '../model/model.js';
import { gpuTimeline } from '../query/gpu-timeline.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import { decodePseudoAddress, type PyFrameEntry, type PyFrameTable, type PyMarkerKind } from '../formats/pyframes.js';
import { symbolEntry, type SymbolizedAddress } from '../model/symbol-table.js';
import type { Note, Session } from '../notes/schema.js';
import { ReportError } from './errors.js';
import { REPORT_LIMITS, type ReportLimits } from './report-limits.js';

export const REPORT_FORMAT = 'heaplens-report';
/**
 * 3: frames and stacks once per job (processes refer to the job's tables); 2 kept them per process; 1 was the
 * viewer's own data. This reader reads 3 only: older reports are shown by their own page.
 */
export const REPORT_VERSION = 3;
/** what the "other" stack's one frame is called (an address no dump has: below every mapping) */
export const OTHER_ADDRESS = '0x0';

export type Column = { o: number; n: number; t: 'u16' | 'u32' | 'f32' };

interface PackedSnapshot {
  file: string;
  seq: number | null;
  trigger: Snapshot['trigger'];
  triggerSeq: number | null;
  mtimeMs: number | null;
  /** the time a log gave the dump (absent without one, and in older reports) */
  logTime?: { ms: number; file: string; line: number };
  format: Snapshot['format'];
  samplePeriod: number;
  live: Counts;
  accumulated: Counts;
  header: { live: Counts; accumulated: Counts };
  hasAccumulated: boolean;
  truncated: { byteOffset: number; line: number } | null;
  complete: boolean;
  headerLiveBytes: number | null;
  mapsSource: Snapshot['mapsSource'];
  context: Snapshot['context'];
  /** a massif snapshot's time in its unit, its tree kind (the peak) and figures; absent in older reports */
  massif?: Snapshot['massif'];
}

/** a report keeps a PyTorch device's trace as its envelope (gpuTimeline's cut: every peak kept) of at most this */
export const GPU_REPORT_POINTS = 2000;
/** and at most this many record_function spans and OOM events (the first ones) */
export const GPU_REPORT_EVENTS = 10_000;

/** A process's Python frame table without its frames (they are in the job's frame table) */
export type PackedPyTable = Omit<PyFrameTable, 'frames' | 'markers' | 'contextRecords'> & {
  markers: [string, PyMarkerKind][];
};

export interface PackedProcess {
  key: string;
  pid: number | null;
  pidNamespace: number | null;
  /** the top folder its dumps came from when it named the host (ProcessSeries.host); absent in older reports */
  host?: string | null;
  prefix: string;
  endedWithoutFinalDump: boolean;
  /** stacks of the process before packing */
  stackCount: number;
  /** stacks summed into the last packed stack (0: nothing was left out, no "other" stack) */
  otherStacks: number;
  /** of those, the stacks build-report kept that the report's bounds moved there (header `leftOut`) */
  trimmedStacks: number;
  /** the kept stacks' ids in the loaded job (for the reader; not stable across loads) */
  sourceIds: number[];
  /** the report's base and target snapshots of this process (indices) */
  base: number;
  target: number;
  snapshots: PackedSnapshot[];
  /** its stacks (kept, in sourceIds order): ids in the job's stack table; the "other" stack follows them */
  stacks: Column;
  /** whether the process was symbolized (its frames' symbol entries are in the job's frame table) */
  symbolized: boolean;
  /** cells per stack, then per cell: snapshot index delta (from the stack's previous cell), bytes, objects */
  cellCounts: Column;
  cellSnapshots: Column;
  cellBytes: Column;
  cellObjects: Column;
  /** sampling variance of each cell (core/model/sampling-error.ts), summed like the values */
  cellVar: Column;
  maps: { start: string; end: string; offset: string; perms: string; path: string }[] | null;
  pythonFrames: PackedPyTable | null;
  /** the role a job log gave the process (its name in every view); absent without one, and in older reports */
  role?: { name: string; file: string; line: number };
  /** a PyTorch snapshot's device (its timeline cut to GPU_REPORT_POINTS); absent for dumps and in older reports */
  gpu?: GpuSeriesInfo;
}

/** The job's frames: an address with its symbol entries and Python frame; one per distinct such triple. */
export interface PackedFrames {
  /** per frame (an address repeats where processes give it other symbols) */
  addresses: string[];
  /** distinct symbol entries */
  symbols: SymbolizedAddress[];
  /** per frame: its entry looked up as a leaf, as a caller (index in `symbols` + 1; 0: none) */
  leaf: Column;
  caller: Column;
  /** distinct Python frame entries */
  python: PyFrameEntry[];
  /** per frame: its Python frame entry (index in `python` + 1; 0: none) */
  py: Column;
}

/** The job's stacks: stack s has frames[offsets[s] .. offsets[s+1]) (frame ids, leaf first). */
export interface PackedStacks {
  offsets: Column;
  frames: Column;
  /** leading frames of each stack in the allocator (core/model/model.ts StackTable) */
  allocatorDepth: Column;
}

/** What the report's bounds made the writer leave out, and why (shown by the page and the CLI). */
export interface LeftOut {
  /** one sentence: the bound, and what went */
  reason: string;
  /** kept stacks moved into their process's "other" stack */
  stacks: number;
  /** processes that lost some */
  processesTrimmed: number;
  /** processes left out whole (build-report.ts: more processes or snapshots than a report holds) */
  processes: number;
}

/** The header of a report's payload (everything but the columns). */
export interface PackedJob {
  format: typeof REPORT_FORMAT;
  version: number;
  title: string;
  /** ISO 8601 */
  createdAt: string;
  generator: string;
  sanitized: { paths: boolean; maps: boolean };
  options: { topN: number; stackMode: string; showAllocator: boolean; symbolized: boolean };
  frames: PackedFrames;
  stacks: PackedStacks;
  processes: PackedProcess[];
  notes: Note[];
  /** the session the report was made from (files, symbols, selection, view); notes are in `notes` */
  session: Omit<Session, 'notes'>;
  warnings: { file: string; line?: number; message: string }[];
  warningsOmitted: number;
  /** why the job died, as computed where the report was made (core/query/postmortem-view.ts; checked when
   *  read back by reopen.ts); absent from reports made before it */
  postmortem?: unknown;
  /** what the report's bounds left out (absent: nothing) */
  leftOut?: LeftOut;
}

/** One process to pack: the kept stacks (ids in `proc`), and how strings leave it (sanitizing). */
export interface PackInput {
  /** with its symbols (proc.symbols) */
  proc: ProcessSeries;
  keep: number[];
  /** per kept stack, its rank (0: the top of a list; lower is kept longer when the bounds trim); default its index */
  rank?: number[];
  base: number;
  target: number;
}

export interface PackStrings {
  /** a path (dump file, source file, module path) as it goes into the report */
  path(p: string): string;
  /** a process key as it goes into the report */
  key(k: string): string;
  /** false: leave the maps out (only the module ranges the kept addresses fall in stay, by basename) */
  keepMaps: boolean;
}

class ColumnWriter {
  private parts: Uint8Array[] = [];
  private size = 0;
  add(t: Column['t'], values: ArrayLike<number>): Column {
    const arr =
      t === 'u16' ? Uint16Array.from(values) : t === 'u32' ? Uint32Array.from(values) : Float32Array.from(values);
    const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    const pad = (4 - (bytes.length % 4)) % 4;
    const c: Column = { o: this.size, n: values.length, t };
    this.parts.push(bytes, new Uint8Array(pad));
    this.size += bytes.length + pad;
    return c;
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

const hex = (v: bigint): string => '0x' + v.toString(16);
const fmt = (n: number): string => n.toLocaleString('en-US');

/**
 * The job's frame and stack tables, interned as the processes are read: a frame is an address with its symbol
 * entries and Python frame as they go out (paths sanitized), compared by value, so processes that share code share
 * frames; a stack is its frames and allocator depth.
 */
class JobTables {
  readonly frameHex: string[] = [];
  readonly frameLeaf: number[] = [];
  readonly frameCaller: number[] = [];
  readonly framePy: number[] = [];
  readonly symbols: SymbolizedAddress[] = [];
  readonly python: PyFrameEntry[] = [];
  readonly stackOffsets: number[] = [0];
  readonly stackFrames: number[] = [];
  readonly stackDepth: number[] = [];
  private frameIds = new Map<string, number>();
  private stackIds = new Map<string, number>();
  private symById = new Map<SymbolizedAddress, number>();
  private symByText = new Map<string, number>();
  private pyById = new Map<PyFrameEntry, number>();
  private pyByText = new Map<string, number>();

  constructor(private readonly s: PackStrings) {}

  /** entry + 1 (0: none) */
  private symbol(x: SymbolizedAddress | undefined): number {
    if (!x) return 0;
    const known = this.symById.get(x);
    if (known !== undefined) return known;
    const out: SymbolizedAddress = {
      ...x,
      modulePath: x.modulePath === null ? null : this.s.path(x.modulePath),
      frames: x.frames.map((f) => ({ ...f, file: f.file === null ? null : this.s.path(f.file) })),
    };
    const text = JSON.stringify(out);
    let id = this.symByText.get(text);
    if (id === undefined) {
      id = this.symbols.push(out);
      this.symByText.set(text, id);
    }
    this.symById.set(x, id);
    return id;
  }

  private pyEntry(e: PyFrameEntry | undefined): number {
    if (!e) return 0;
    const known = this.pyById.get(e);
    if (known !== undefined) return known;
    const out: PyFrameEntry = { ...e, file: this.s.path(e.file) };
    const text = JSON.stringify(out);
    let id = this.pyByText.get(text);
    if (id === undefined) {
      id = this.python.push(out);
      this.pyByText.set(text, id);
    }
    this.pyById.set(e, id);
    return id;
  }

  /** The job frame of address `a` of `proc`. */
  frame(proc: ProcessSeries, a: number): number {
    const h = proc.addresses.hex[a];
    const leaf = this.symbol(symbolEntry(proc, a, false));
    const caller = this.symbol(symbolEntry(proc, a, true));
    const table = proc.pythonFrames ?? null;
    let py = 0;
    if (table && table.frames.size > 0) {
      const pa = decodePseudoAddress(h, table);
      if (pa) py = this.pyEntry(table.frames.get(pa.addr));
    }
    const key = `${h} ${leaf} ${caller} ${py}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frameHex.push(h) - 1;
      this.frameLeaf.push(leaf);
      this.frameCaller.push(caller);
      this.framePy.push(py);
      this.frameIds.set(key, id);
    }
    return id;
  }

  stack(frames: number[], depth: number): number {
    const key = `${frames.join(',')};${depth}`;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stackDepth.push(depth) - 1;
      for (const f of frames) this.stackFrames.push(f);
      this.stackOffsets.push(this.stackFrames.length);
      this.stackIds.set(key, id);
    }
    return id;
  }
}

/** A kept stack of a process, as the trimming sees it. */
interface Kept {
  proc: number;
  /** id in the process */
  id: number;
  jobStack: number;
  rank: number;
  peak: number;
  cells: number;
}

type Bound = 'stacks' | 'frames' | 'addresses' | 'pythonFrames' | 'processStacks' | 'processFrames' | 'cells';
const BOUND_WHAT: Record<Bound, string> = {
  stacks: 'distinct stacks',
  frames: 'frames in its stack table',
  addresses: 'distinct frames',
  pythonFrames: 'distinct Python frames',
  processStacks: "stacks over all processes' lists",
  processFrames: "frames over all processes' stacks",
  cells: 'values (stack × snapshot)',
};

/**
 * How many of the quietest kept stacks must go for the report to fit the bounds (0 when it fits), and the bounds
 * that made them go. `order` is quietest first. Counts are upper bounds: every process is counted with an "other"
 * stack in every snapshot, so the count never grows as more go (the search below relies on it).
 */
function trimCount(
  kept: readonly Kept[],
  order: Uint32Array,
  t: JobTables,
  snapshotsOf: readonly number[],
  limits: ReportLimits,
): { drop: number; over: { bound: Bound; need: number }[] } {
  const nStacks = t.stackDepth.length;
  const stackStamp = new Uint32Array(nStacks);
  const frameStamp = new Uint32Array(t.frameHex.length);
  const pyStamp = new Uint32Array(t.python.length + 1);
  const otherCells = snapshotsOf.reduce((a, n) => a + n, 0);
  let gen = 0;
  const counts = (drop: number): Record<Bound, number> => {
    gen++;
    const c: Record<Bound, number> = {
      stacks: 0,
      frames: 0,
      addresses: 0,
      pythonFrames: 0,
      processStacks: snapshotsOf.length,
      processFrames: snapshotsOf.length,
      cells: otherCells,
    };
    for (let k = drop; k < order.length; k++) {
      const p = kept[order[k]];
      const s = p.jobStack;
      const len = t.stackOffsets[s + 1] - t.stackOffsets[s];
      c.processStacks++;
      c.processFrames += len;
      c.cells += p.cells;
      if (stackStamp[s] === gen) continue;
      stackStamp[s] = gen;
      c.stacks++;
      c.frames += len;
      for (let f = t.stackOffsets[s]; f < t.stackOffsets[s + 1]; f++) {
        const id = t.stackFrames[f];
        if (frameStamp[id] === gen) continue;
        frameStamp[id] = gen;
        c.addresses++;
        const py = t.framePy[id];
        if (py > 0 && pyStamp[py] !== gen) {
          pyStamp[py] = gen;
          c.pythonFrames++;
        }
      }
    }
    return c;
  };
  const overOf = (c: Record<Bound, number>): { bound: Bound; need: number }[] =>
    (Object.keys(c) as Bound[]).filter((b) => c[b] > limits[b]).map((b) => ({ bound: b, need: c[b] }));
  const over = overOf(counts(0));
  if (over.length === 0) return { drop: 0, over };
  // the fewest to drop: binary search over a count that never grows as more go
  let lo = 1;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (overOf(counts(mid)).length === 0) hi = mid;
    else lo = mid + 1;
  }
  return { drop: lo, over };
}

/** Per kept stack of a process: the snapshots it has a value in, and its peak (bytes). */
function keptStats(proc: ProcessSeries, keep: readonly number[]): { cells: Uint32Array; peak: Float64Array } {
  const local = new Int32Array(proc.stacks.count).fill(-1);
  keep.forEach((id, i) => (local[id] = i));
  const cells = new Uint32Array(keep.length);
  const peak = new Float64Array(keep.length);
  for (const snap of proc.snapshots) {
    const seen = new Uint8Array(keep.length);
    for (let j = 0; j < snap.stackIds.length; j++) {
      const l = local[snap.stackIds[j]];
      if (l < 0) continue;
      if (!seen[l]) {
        seen[l] = 1;
        cells[l]++;
      }
      if (snap.liveBytes[j] > peak[l]) peak[l] = snap.liveBytes[j];
    }
  }
  return { cells, peak };
}

function packProcess(
  input: PackInput,
  keep: number[],
  jobStacks: number[],
  trimmed: number,
  s: PackStrings,
  w: ColumnWriter,
): PackedProcess {
  const { proc } = input;
  const local = new Int32Array(proc.stacks.count).fill(-1);
  keep.forEach((id, i) => (local[id] = i));
  const otherStacks = proc.stacks.count - keep.length;
  const stackTotal = keep.length + (otherStacks > 0 ? 1 : 0);

  // cells, stack-major
  const n = proc.snapshots.length;
  const bytesOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const objectsOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const varOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const present = Array.from({ length: stackTotal }, () => new Uint8Array(n));
  proc.snapshots.forEach((snap, si) => {
    for (let j = 0; j < snap.stackIds.length; j++) {
      let l = local[snap.stackIds[j]];
      if (l < 0) l = otherStacks > 0 ? stackTotal - 1 : -1;
      if (l < 0) continue;
      bytesOf[l][si] += snap.liveBytes[j];
      objectsOf[l][si] += snap.liveObjects[j];
      varOf[l][si] += snap.liveVarBytes[j];
      present[l][si] = 1;
    }
  });
  const counts: number[] = [];
  const cellSnap: number[] = [];
  const cellBytes: number[] = [];
  const cellObjects: number[] = [];
  const cellVar: number[] = [];
  for (let l = 0; l < stackTotal; l++) {
    let c = 0;
    let prev = 0;
    for (let si = 0; si < n; si++) {
      if (!present[l][si]) continue;
      cellSnap.push(si - prev);
      prev = si;
      cellBytes.push(bytesOf[l][si]);
      cellObjects.push(objectsOf[l][si]);
      cellVar.push(varOf[l][si]);
      c++;
    }
    counts.push(c);
  }

  // maps: all (paths as they go out), or only the kept addresses' module ranges
  let maps: PackedProcess['maps'] = null;
  if (proc.maps) {
    if (s.keepMaps)
      maps = proc.maps.map((m) => ({
        start: hex(m.start),
        end: hex(m.end),
        offset: hex(m.offset),
        perms: m.perms,
        path: s.path(m.path),
      }));
    else {
      const addresses = new Set<string>();
      for (const id of keep)
        for (let f = proc.stacks.offsets[id]; f < proc.stacks.offsets[id + 1]; f++)
          addresses.add(proc.addresses.hex[proc.stacks.frames[f]]);
      const used = new Map<MapsEntry, { lo: bigint; hi: bigint }>();
      for (const h of addresses) {
        let v: bigint;
        try {
          v = BigInt(h);
        } catch {
          continue;
        }
        const m = proc.maps.find((x) => v >= x.start && v < x.end);
        if (!m || !m.path) continue;
        const r = used.get(m);
        if (!r) used.set(m, { lo: v, hi: v });
        else {
          if (v < r.lo) r.lo = v;
          if (v > r.hi) r.hi = v;
        }
      }
      maps = [...used.entries()]
        .sort((a, b) => (a[1].lo < b[1].lo ? -1 : 1))
        .map(([m, r]) => ({
          start: hex(r.lo),
          end: hex(r.hi + 1n),
          offset: hex(m.offset + (r.lo - m.start)),
          perms: m.perms,
          path: basename(m.path),
        }));
    }
  }

  const py = proc.pythonFrames ?? null;
  let pythonFrames: PackedProcess['pythonFrames'] = null;
  if (py) {
    // the frames are in the job's frame table; the capture's own context records are read from the snapshots
    const { frames: _frames, markers, contextRecords: _records, ...rest } = py;
    pythonFrames = { ...rest, markers: [...markers.entries()], problems: py.problems.slice(0, 20) };
  }

  return {
    key: s.key(proc.key),
    pid: proc.pid,
    pidNamespace: proc.pidNamespace,
    host: proc.host ?? null,
    prefix: proc.prefix,
    endedWithoutFinalDump: proc.endedWithoutFinalDump,
    stackCount: proc.stacks.count,
    otherStacks,
    trimmedStacks: trimmed,
    sourceIds: keep,
    base: input.base,
    target: input.target,
    snapshots: proc.snapshots.map((x) => ({
      file: s.path(x.file),
      seq: x.seq,
      trigger: x.trigger,
      triggerSeq: x.triggerSeq,
      mtimeMs: x.mtimeMs,
      ...(x.logTime ? { logTime: { ...x.logTime, file: s.path(x.logTime.file) } } : {}),
      format: x.format,
      samplePeriod: x.samplePeriod,
      live: x.live,
      accumulated: x.accumulated,
      header: x.header,
      hasAccumulated: x.hasAccumulated,
      truncated: x.truncated,
      complete: x.complete,
      headerLiveBytes: x.headerLiveBytes,
      mapsSource: x.mapsSource,
      ...(x.massif
        ? {
            massif: {
              ...x.massif,
              ...(x.massif.cmd !== undefined ? { cmd: pathsIn(x.massif.cmd, s) } : {}),
            },
          }
        : {}),
      context: x.context
        ? {
            ...x.context,
            cmdline: x.context.cmdline?.map((c) => (c.includes('/') ? s.path(c) : c)) ?? null,
            cgroup: x.context.cgroup
              ? { ...x.context.cgroup, path: x.context.cgroup.path === null ? null : s.path(x.context.cgroup.path) }
              : null,
          }
        : null,
    })),
    stacks: w.add('u32', jobStacks),
    symbolized: proc.symbols !== null,
    cellCounts: w.add('u32', counts),
    // u16 holds the deltas of any series up to 65,535 snapshots
    cellSnapshots: w.add(n > 0xffff ? 'u32' : 'u16', cellSnap),
    cellBytes: w.add('f32', cellBytes),
    cellObjects: w.add('f32', cellObjects),
    cellVar: w.add('f32', cellVar),
    maps,
    pythonFrames,
    ...(proc.role ? { role: { name: proc.role.name, file: s.path(proc.role.file), line: proc.role.line } } : {}),
    ...(proc.gpu ? { gpu: packGpu(proc) } : {}),
  };
}

/** A command line as it goes out: each word that is a path sanitized as paths are. */
function pathsIn(cmd: string, s: PackStrings): string {
  return cmd
    .split(' ')
    .map((w) => (w.includes('/') ? s.path(w) : w))
    .join(' ');
}

/** A device's figures, its trace cut to its envelope (gpuTimeline: no peak lost), its first spans and OOMs. */
function packGpu(proc: ProcessSeries): GpuSeriesInfo {
  const g = proc.gpu!;
  const t = gpuTimeline(proc, GPU_REPORT_POINTS)!;
  return {
    ...g,
    timeline: { timeMs: t.timeMs, allocated: t.allocated, reserved: t.reserved, cached: t.cached },
    ooms: g.ooms.slice(0, GPU_REPORT_EVENTS),
    spans: g.spans.slice(0, GPU_REPORT_EVENTS),
  };
}

/** The kept stacks of every process (ids, and in the job's tables), the quietest left out where the bounds say. */
function internAndTrim(
  inputs: readonly PackInput[],
  t: JobTables,
  limits: ReportLimits,
): { keeps: { ids: number[]; jobStacks: number[] }[]; trimmed: number[]; leftOut: Omit<LeftOut, 'processes'> | null } {
  const kept: Kept[] = [];
  const keeps: { ids: number[]; jobStacks: number[] }[] = [];
  inputs.forEach((input, pi) => {
    const { proc } = input;
    const rankOf = new Map<number, number>();
    input.keep.forEach((id, i) => {
      if (Number.isInteger(id) && id >= 0 && id < proc.stacks.count && !rankOf.has(id))
        rankOf.set(id, input.rank?.[i] ?? i);
    });
    const ids = [...rankOf.keys()].sort((a, b) => a - b);
    const { cells, peak } = keptStats(proc, ids);
    const frameOf = new Map<number, number>();
    const jobStacks = ids.map((id, i) => {
      const frames: number[] = [];
      for (let f = proc.stacks.offsets[id]; f < proc.stacks.offsets[id + 1]; f++) {
        const a = proc.stacks.frames[f];
        let j = frameOf.get(a);
        if (j === undefined) {
          j = t.frame(proc, a);
          frameOf.set(a, j);
        }
        frames.push(j);
      }
      const jobStack = t.stack(frames, proc.stacks.allocatorDepth[id] ?? 0);
      kept.push({ proc: pi, id, jobStack, rank: rankOf.get(id)!, peak: peak[i], cells: cells[i] });
      return jobStack;
    });
    keeps.push({ ids, jobStacks });
  });
  const trimmed = inputs.map(() => 0);
  // quietest first: the lowest in their lists, then the smallest peak
  const order = Uint32Array.from(kept.keys()).sort(
    (a, b) => kept[b].rank - kept[a].rank || kept[a].peak - kept[b].peak || a - b,
  );
  const { drop, over } = trimCount(
    kept,
    order,
    t,
    inputs.map((i) => i.proc.snapshots.length),
    limits,
  );
  if (drop === 0) return { keeps, trimmed, leftOut: null };
  const gone = inputs.map(() => new Set<number>());
  for (let k = 0; k < drop; k++) {
    const g = kept[order[k]];
    gone[g.proc].add(g.id);
    trimmed[g.proc]++;
  }
  const out = keeps.map(({ ids, jobStacks }, pi) => {
    const stay = ids.map((id) => !gone[pi].has(id));
    return { ids: ids.filter((_, i) => stay[i]), jobStacks: jobStacks.filter((_, i) => stay[i]) };
  });
  const processesTrimmed = trimmed.filter((n) => n > 0).length;
  const bounds = over
    .map((o) => `${fmt(limits[o.bound])} ${BOUND_WHAT[o.bound]} (the kept stacks need ${fmt(o.need)})`)
    .join(' and ');
  return {
    keeps: out,
    trimmed,
    leftOut: {
      reason:
        `a report holds at most ${bounds}: the ${fmt(drop)} quietest kept stacks (lowest in the top-N lists, then ` +
        `smallest peak) of ${fmt(processesTrimmed)} processes are summed into each one's "other" stack`,
      stacks: drop,
      processesTrimmed,
    },
  };
}

/** The header and the packed processes → the payload's bytes (deflated). */
export function packJob(
  header: Omit<PackedJob, 'processes' | 'format' | 'version' | 'frames' | 'stacks' | 'leftOut'> & {
    /** processes build-report left out (more than a report holds), with the sentence saying why */
    processesLeftOut?: { count: number; reason: string };
  },
  inputs: readonly PackInput[],
  strings: PackStrings,
  limits: ReportLimits = REPORT_LIMITS,
): { job: PackedJob; bytes: Uint8Array } {
  const all = new JobTables(strings);
  const { keeps, trimmed, leftOut: trim } = internAndTrim(inputs, all, limits);
  // the tables as written: only what the kept stacks use, in the order the processes first use it
  const w = new ColumnWriter();
  const stackNew = new Int32Array(all.stackDepth.length).fill(-1);
  const frameNew = new Int32Array(all.frameHex.length).fill(-1);
  const offsets = [0];
  const frames: number[] = [];
  const depth: number[] = [];
  const hexOut: string[] = [];
  const leaf: number[] = [];
  const caller: number[] = [];
  const pyOut: number[] = [];
  const symNew = new Int32Array(all.symbols.length + 1).fill(-1);
  symNew[0] = 0;
  const symbols: SymbolizedAddress[] = [];
  const pyNew = new Int32Array(all.python.length + 1).fill(-1);
  pyNew[0] = 0;
  const python: PyFrameEntry[] = [];
  const sym = (i: number): number => {
    if (symNew[i] < 0) symNew[i] = symbols.push(all.symbols[i - 1]);
    return symNew[i];
  };
  const pyE = (i: number): number => {
    if (pyNew[i] < 0) pyNew[i] = python.push(all.python[i - 1]);
    return pyNew[i];
  };
  // job stack → its id as written, its frames (and their symbols and Python frames) numbered as first used
  const written = (s: number): number => {
    if (stackNew[s] < 0) {
      stackNew[s] = depth.length;
      depth.push(all.stackDepth[s]);
      for (let f = all.stackOffsets[s]; f < all.stackOffsets[s + 1]; f++) {
        const fr = all.stackFrames[f];
        if (frameNew[fr] < 0) {
          frameNew[fr] = hexOut.length;
          hexOut.push(all.frameHex[fr]);
          leaf.push(sym(all.frameLeaf[fr]));
          caller.push(sym(all.frameCaller[fr]));
          pyOut.push(pyE(all.framePy[fr]));
        }
        frames.push(frameNew[fr]);
      }
      offsets.push(frames.length);
    }
    return stackNew[s];
  };
  const processes = inputs.map((input, pi) =>
    packProcess(input, keeps[pi].ids, keeps[pi].jobStacks.map(written), trimmed[pi], strings, w),
  );
  const { processesLeftOut, ...rest } = header;
  const leftOut: LeftOut | null =
    trim || processesLeftOut
      ? {
          reason: [processesLeftOut?.reason, trim?.reason].filter((x) => x).join('; '),
          stacks: trim?.stacks ?? 0,
          processesTrimmed: trim?.processesTrimmed ?? 0,
          processes: processesLeftOut?.count ?? 0,
        }
      : null;
  const job: PackedJob = {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    ...rest,
    frames: {
      addresses: hexOut,
      symbols,
      leaf: w.add('u32', leaf),
      caller: w.add('u32', caller),
      python,
      py: w.add('u32', pyOut),
    },
    stacks: { offsets: w.add('u32', offsets), frames: w.add('u32', frames), allocatorDepth: w.add('u32', depth) },
    processes,
    ...(leftOut ? { leftOut } : {}),
  };
  const json = new TextEncoder().encode(JSON.stringify(job));
  if (json.length > limits.headerBytes)
    throw new ReportError(
      `the report's header would take ${fmt(json.length)} bytes, more than the ${fmt(limits.headerBytes)} a report holds: report fewer processes (--pid)`,
    );
  const cols = w.concat();
  const pad = (4 - ((4 + json.length) % 4)) % 4;
  const raw = new Uint8Array(4 + json.length + pad + cols.length);
  new DataView(raw.buffer).setUint32(0, json.length, true);
  raw.set(json, 4);
  raw.set(cols, 4 + json.length + pad);
  // level 6, not 9: on a report's repetitive columns level 9's long match chains took 8.2 s where 6 takes 1.7 s, for
  // a payload 1.7% smaller (160 processes of the 1,000-process job: 2.86 vs 2.91 MB of 10.9 MB)
  const bytes = deflate(raw, { level: 6 });
  // the reader's inflation bounds (job-unpack.ts inflateLimit): a payload that inflates past them is refused there
  const limit = Math.min(
    limits.maxInflatedBytes,
    Math.max(limits.minInflatedBytes, bytes.length * limits.inflateRatio),
  );
  if (raw.length > limit)
    throw new ReportError(
      `the report's data would inflate to ${fmt(raw.length)} bytes from ${fmt(bytes.length)}, more than a report may (at most ${limits.inflateRatio}× its size and ${fmt(limits.maxInflatedBytes)} bytes): report fewer processes (--pid)`,
    );
  return { job, bytes };
}
