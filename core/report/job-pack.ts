// A Job in a form small enough to embed in a report and complete enough for the app's own analysis to run on it
// in the page: per process, the kept stacks (core/report/build-report.ts picks them) with every snapshot's values,
// the other stacks summed into one "(N other stacks)" stack per snapshot (totals stay whole), the addresses
// they use, the symbols of those addresses, the Python frame table and the maps (or, sanitized, only the
// module ranges the kept addresses fall in). Values are float32 columns, stack-major, snapshot indices
// delta-coded, all behind one JSON header, then deflated (pako). Pure: no Node, no DOM. Reading: job-unpack.ts.
//
// Layout of the bytes before deflate: u32 LE header length · header JSON (UTF-8) · zero padding to 4 · columns.

import { basename } from '../formats/dump-filename.js';
import { deflate } from 'pako';
import type { Counts, GpuSeriesInfo, ProcessSeries, Snapshot } from '../model/model.js';
import { gpuTimeline } from '../query/gpu-timeline.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import type { PyFrameEntry, PyFrameTable, PyMarkerKind } from '../formats/pyframes.js';
import type { SymbolizedAddress } from '../symbolize/symbolize.js';
import type { Note, Session } from '../notes/schema.js';

export const REPORT_FORMAT = 'heaplens-report';
/** 2: the packed job (the app runs on it); 1 was the viewer's own data, no longer read */
export const REPORT_VERSION = 2;
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
  /** the kept stacks' ids in the loaded job (for the reader; not stable across loads) */
  sourceIds: number[];
  /** the report's base and target snapshots of this process (indices) */
  base: number;
  target: number;
  snapshots: PackedSnapshot[];
  addresses: string[];
  allocatorDepth: number[];
  /** stack s has frames[offsets[s] .. offsets[s+1]) (address ids, leaf first) */
  offsets: Column;
  frames: Column;
  /** cells per stack, then per cell: snapshot index delta (from the stack's previous cell), bytes, objects */
  cellCounts: Column;
  cellSnapshots: Column;
  cellBytes: Column;
  cellObjects: Column;
  /** sampling variance of each cell (core/model/sampling-error.ts), summed like the values */
  cellVar: Column;
  maps: { start: string; end: string; offset: string; perms: string; path: string }[] | null;
  /** per address id: [leaf, caller] symbol entries (null: none) */
  symbols: [SymbolizedAddress | null, SymbolizedAddress | null][] | null;
  pythonFrames:
    (Omit<PyFrameTable, 'frames' | 'markers'> & { frames: PyFrameEntry[]; markers: [string, PyMarkerKind][] }) | null;
  /** the role a job log gave the process (its name in every view); absent without one, and in older reports */
  role?: { name: string; file: string; line: number };
  /** a PyTorch snapshot's device (its timeline cut to GPU_REPORT_POINTS); absent for dumps and in older reports */
  gpu?: GpuSeriesInfo;
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
  processes: PackedProcess[];
  notes: Note[];
  /** the session the report was made from (files, symbols, selection, view); notes are in `notes` */
  session: Omit<Session, 'notes'>;
  warnings: { file: string; line?: number; message: string }[];
  warningsOmitted: number;
  /** why the job died, as computed where the report was made (core/query/postmortem-view.ts; checked when
   *  read back by reopen.ts); absent from reports made before it */
  postmortem?: unknown;
}

/** One process to pack: the kept stacks (ids in `proc`), and how strings leave it (sanitizing). */
export interface PackInput {
  /** with its symbols (proc.symbols) */
  proc: ProcessSeries;
  keep: number[];
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

function packProcess(input: PackInput, s: PackStrings, w: ColumnWriter): PackedProcess {
  const { proc } = input;
  const symbols = proc.symbols;
  const keep = [...new Set(input.keep)].filter((id) => id >= 0 && id < proc.stacks.count).sort((a, b) => a - b);
  const local = new Map<number, number>();
  keep.forEach((id, i) => local.set(id, i));
  const otherStacks = proc.stacks.count - keep.length;
  const stackTotal = keep.length + (otherStacks > 0 ? 1 : 0);

  // addresses of the kept stacks (+ the "other" frame)
  const addrLocal = new Map<number, number>();
  const addresses: string[] = [];
  const addrSource: number[] = [];
  const offsets: number[] = [0];
  const frames: number[] = [];
  const allocatorDepth: number[] = [];
  for (const id of keep) {
    for (let f = proc.stacks.offsets[id]; f < proc.stacks.offsets[id + 1]; f++) {
      const a = proc.stacks.frames[f];
      let l = addrLocal.get(a);
      if (l === undefined) {
        l = addresses.length;
        addrLocal.set(a, l);
        addresses.push(proc.addresses.hex[a]);
        addrSource.push(a);
      }
      frames.push(l);
    }
    offsets.push(frames.length);
    allocatorDepth.push(proc.stacks.allocatorDepth[id] ?? 0);
  }
  let otherAddr = -1;
  if (otherStacks > 0) {
    otherAddr = addresses.length;
    addresses.push(OTHER_ADDRESS);
    addrSource.push(-1);
    frames.push(otherAddr);
    offsets.push(frames.length);
    allocatorDepth.push(0);
  }

  // cells, stack-major
  const n = proc.snapshots.length;
  const bytesOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const objectsOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const varOf = Array.from({ length: stackTotal }, () => new Float64Array(n));
  const present = Array.from({ length: stackTotal }, () => new Uint8Array(n));
  proc.snapshots.forEach((snap, si) => {
    for (let j = 0; j < snap.stackIds.length; j++) {
      const l = local.get(snap.stackIds[j]) ?? (otherStacks > 0 ? stackTotal - 1 : -1);
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

  // symbols of the kept addresses, paths as they go out
  const symOut = (x: SymbolizedAddress | undefined): SymbolizedAddress | null =>
    x
      ? {
          ...x,
          modulePath: x.modulePath === null ? null : s.path(x.modulePath),
          frames: x.frames.map((f) => ({ ...f, file: f.file === null ? null : s.path(f.file) })),
        }
      : null;
  let syms: PackedProcess['symbols'] = null;
  if (symbols || otherAddr >= 0) {
    syms = addrSource.map((a) =>
      a < 0 ? [null, null] : symbols ? [symOut(symbols.leaf[a]), symOut(symbols.caller[a])] : [null, null],
    );
    if (otherAddr >= 0) {
      const label = `(${otherStacks.toLocaleString('en-US')} other stacks)`;
      const entry: SymbolizedAddress = {
        address: OTHER_ADDRESS,
        module: null,
        modulePath: null,
        moduleOffset: null,
        frames: [{ function: label, file: null, line: null }],
        status: 'symbol-only',
        binary: null,
      };
      syms[otherAddr] = [entry, entry];
    }
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
      const used = new Map<MapsEntry, { lo: bigint; hi: bigint }>();
      for (const h of addresses) {
        if (h === OTHER_ADDRESS) continue;
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
  const pythonFrames: PackedProcess['pythonFrames'] = py
    ? {
        ...py,
        frames: [...py.frames.values()].map((f) => ({ ...f, file: s.path(f.file) })),
        markers: [...py.markers.entries()],
        problems: py.problems.slice(0, 20),
      }
    : null;

  return {
    key: s.key(proc.key),
    pid: proc.pid,
    pidNamespace: proc.pidNamespace,
    host: proc.host ?? null,
    prefix: proc.prefix,
    endedWithoutFinalDump: proc.endedWithoutFinalDump,
    stackCount: proc.stacks.count,
    otherStacks,
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
    addresses,
    allocatorDepth,
    offsets: w.add('u32', offsets),
    frames: w.add('u32', frames),
    cellCounts: w.add('u32', counts),
    // u16 holds the deltas of any series up to 65,535 snapshots
    cellSnapshots: w.add(n > 0xffff ? 'u32' : 'u16', cellSnap),
    cellBytes: w.add('f32', cellBytes),
    cellObjects: w.add('f32', cellObjects),
    cellVar: w.add('f32', cellVar),
    maps,
    symbols: syms,
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

/** The header and the packed processes → the payload's bytes (deflated). */
export function packJob(
  header: Omit<PackedJob, 'processes' | 'format' | 'version'>,
  inputs: readonly PackInput[],
  strings: PackStrings,
): { job: PackedJob; bytes: Uint8Array } {
  const w = new ColumnWriter();
  const processes = inputs.map((i) => packProcess(i, strings, w));
  const job: PackedJob = { format: REPORT_FORMAT, version: REPORT_VERSION, ...header, processes };
  const json = new TextEncoder().encode(JSON.stringify(job));
  const cols = w.concat();
  const pad = (4 - ((4 + json.length) % 4)) % 4;
  const raw = new Uint8Array(4 + json.length + pad + cols.length);
  new DataView(raw.buffer).setUint32(0, json.length, true);
  raw.set(json, 4);
  raw.set(cols, 4 + json.length + pad);
  return { job, bytes: deflate(raw, { level: 9 }) };
}
