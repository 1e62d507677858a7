// Captures that are not jemalloc dumps but answer the same question — live bytes by stack over time — turned
// into the same model (ProcessSeries of Snapshots), so summary, top, growth, suspects and diffs work on them:
//   - bcc memleak / memleak.bt reports (core/formats/memleak.ts): one series per file, one snapshot per report;
//   - PyTorch memory snapshots (core/formats/torch-snapshot.ts): one series per CUDA device, snapshots of the
//     active blocks replayed from device_traces, then the snapshot's own state (its segments) as the last one.
// Frames these files name are interned as PYFRAMES pseudo-addresses and named by the series' frame table (Python
// frames as Python, native ones marked `native`); a memleak frame that was never named but has a return address
// keeps the real address, so a copy of /proc/<pid>/maps beside the file lets the symbolizer name it offline.

import type { InputFile } from '../formats/input-file.js';
import type { DumpRecord, ParsedDumpInfo } from '../formats/heap-dump.js';
import { PY_KIND_FRAME, type PyFrameEntry, type PyFrameTable } from '../formats/pyframes.js';
import type { MemleakFile, MemleakFrame } from '../formats/memleak.js';
import { readMemleakTask } from './memleak-task.js';
import type { TorchDevice, TorchFrame, TorchSnapshot, TorchSpan } from '../formats/torch-snapshot.js';
import type { Inflater } from '../formats/inflate.js';
import { isCPythonSource, torchAllocatorDepth } from '../frames/torch-frames.js';
import type { DumpTask, DumpTaskResult } from './dump-task.js';
import { readTorchTask } from './torch-task.js';
import { bareContext, type DumpContext } from '../formats/dump-context.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import type { LoadWarning, ProcessSeries, Snapshot } from '../model/model.js';
import { ProcessBuilder, type SnapshotMeta } from '../model/process-builder.js';

/** Largest PyTorch snapshot read whole (a 100,000-entry trace: well below); memleak logs are read as a stream. */
export const MAX_CAPTURE_BYTES = 1024 * 1024 * 1024;
/** Frames named per series (pseudo-address ids are 28 bits) */
const MAX_NAMED_FRAMES = 1 << 27;
/** Snapshots replayed from a device trace, besides its oom entries and its final state. */
const TRACE_SNAPSHOTS = 40;

export type CaptureKind = 'memleak' | 'torch-snapshot';

/** Interns named frames as pseudo-addresses (tag 0x7079, kind frame, id << 4) and keeps their names. */
class FrameNames {
  readonly frames = new Map<string, PyFrameEntry>();
  private readonly byKey = new Map<string, number>();
  private readonly keyOf = new WeakMap<object, number>();
  private next = 1;

  /** The (hi, lo) words of a named frame; null once the table is full. */
  words(key: string, entry: () => Omit<PyFrameEntry, 'addr'>): [number, number] | null {
    let id = this.byKey.get(key);
    if (id === undefined) {
      if (this.next >= MAX_NAMED_FRAMES) return null;
      id = this.next++;
      this.byKey.set(key, id);
      this.frames.set(pseudoHex(id), { addr: pseudoHex(id), ...entry() });
    }
    return [0x70790000 | (PY_KIND_FRAME << 12), id << 4];
  }

  /** Same, keyed by object identity (PyTorch's shared frame dicts). */
  objectWords(obj: object, key: () => string, entry: () => Omit<PyFrameEntry, 'addr'>): [number, number] | null {
    const id = this.keyOf.get(obj);
    if (id !== undefined) return [0x70790000 | (PY_KIND_FRAME << 12), id << 4];
    const w = this.words(key(), entry);
    if (w) this.keyOf.set(obj, w[1] >>> 4);
    return w;
  }

  table(pid: number | null, producer: string): PyFrameTable {
    return {
      version: 1,
      tagHex: '7079',
      kindShift: 44,
      idShift: 4,
      pid,
      python: null,
      token: null,
      granularity: 'line',
      header: { producer },
      stats: {},
      frames: this.frames,
      markers: new Map(),
      complete: true,
      declaredCount: this.frames.size,
      unknownRecords: 0,
      problems: [],
      source: 'text',
    };
  }
}

function pseudoHex(id: number): string {
  return '0x7079' + PY_KIND_FRAME.toString(16) + (id * 16).toString(16).padStart(11, '0');
}

function info(records: number, truncated: ParsedDumpInfo['truncated']): ParsedDumpInfo {
  return {
    format: null,
    sampling: { kind: 'none' },
    header: null,
    headerThreads: [],
    recordCount: records,
    mapsText: null,
    mapsFirstLine: 0,
    mapsComplete: false,
    trailerText: null,
    truncated,
    fatal: null,
    problems: [],
    problemsOmitted: 0,
    skippedLeadingLines: 0,
    goRuntime: false,
    bytes: 0,
    lines: 0,
  };
}

function context(timeMs: number, pid: number | null, command: string | null): DumpContext {
  return {
    ...bareContext(timeMs, pid ?? 0),
    comm: command ? (command.split(/\s+/)[0].split('/').pop() ?? null) : null,
    cmdline: command ? command.split(/\s+/) : null,
  };
}

interface Row {
  words: number[];
  bytes: number;
  objects: number;
}

/** One snapshot of exact (unsampled) live bytes/objects by stack. */
function addSnapshot(
  builder: ProcessBuilder,
  meta: SnapshotMeta,
  rows: readonly Row[],
  format: Snapshot['format'],
  extra: { complete: boolean; truncated: ParsedDumpInfo['truncated']; context: DumpContext | null },
): void {
  const sb = builder.snapshotBuilder();
  for (const r of rows) {
    const rec: DumpRecord = {
      frameWords: Uint32Array.from(r.words),
      counts: { liveObjects: r.objects, liveBytes: r.bytes, accumObjects: 0, accumBytes: 0 },
      threads: [],
      line: 0,
    };
    sb.add(rec, { kind: 'none' });
  }
  const s = sb.build(meta, info(rows.length, extra.truncated), null);
  s.format = format;
  s.complete = extra.complete;
  s.headerLiveBytes = null;
  s.header = { live: { ...s.live }, accumulated: { objects: 0, bytes: 0 } };
  if (extra.context) s.context = extra.context;
  builder.snapshots.push(s);
}

const meta = (file: string, seq: number, mtimeMs: number | null, last: boolean): SnapshotMeta => ({
  file,
  seq,
  trigger: last ? 'final' : 'interval',
  triggerSeq: seq,
  mtimeMs,
});

// ---- memleak ---------------------------------------------------------------------------------------------

/**
 * Report times as ms since the epoch: memleak.bt's `# date:` line, else the stamps on the file's mtime date. A
 * report printed without its header line has no stamp: it is placed at the file's modification time.
 */
function memleakTimes(
  m: MemleakFile,
  mtimeMs: number | null,
  file: string,
  warnings: LoadWarning[],
): (number | null)[] {
  const stamped = m.reports.filter((r) => r.secondsOfDay !== null);
  const secs = m.reports.map((r) =>
    r.secondsOfDay === null ? null : r.day * 86400 + (r.preciseSecondsOfDay ?? r.secondsOfDay),
  );
  if (stamped.length === 0) return m.reports.map(() => (m.reports.length === 1 ? mtimeMs : null));
  if (m.date) {
    const midnight = Date.parse(`${m.date.day}T00:00:00Z`) - (m.date.offsetMinutes ?? 0) * 60_000;
    if (Number.isFinite(midnight)) return secs.map((s) => (s === null ? null : midnight + s * 1000));
  }
  if (mtimeMs === null) {
    warnings.push({
      file,
      message:
        'memleak reports carry only a time of day ([HH:MM:SS]) and the file has no modification time: the reports are ordered but not placed on the wall clock',
    });
    return secs.map(() => null);
  }
  // bcc stamps local time of day; the copy's mtime (UTC) fixes the day: the last report is the latest
  // stamp at or before the mtime (the time zone of the traced machine is not in the file)
  let base = Math.floor(mtimeMs / 86_400_000) * 86_400_000; // midnight of the mtime's UTC day
  const last = secs.filter((s): s is number => s !== null).pop() ?? 0;
  if (base + last * 1000 > mtimeMs + 60_000) base -= 86_400_000;
  warnings.push({
    file,
    message: `memleak reports carry only a time of day: placed on ${new Date(base).toISOString().slice(0, 10)} (the file's modification date), read as UTC`,
  });
  return secs.map((s) => (s === null ? null : base + s * 1000));
}

function memleakFrameWords(f: MemleakFrame, names: FrameNames): [number, number] | null {
  // a frame never named (the reader lends names across reports) keeps its return address for the symbolizer
  if (f.symbol === null && f.address !== null) {
    const v = BigInt(f.address);
    return [Number(v >> 32n), Number(v & 0xffffffffn)];
  }
  return names.words(f.address ?? 'text:' + f.text, () => ({
    function: f.text,
    file: '',
    line: null,
    firstLine: null,
    native: true,
    module: f.module,
  }));
}

export function memleakSeries(
  file: InputFile,
  m: MemleakFile,
  warnings: LoadWarning[],
  mapsFiles: readonly { pid: number | null; dir: string; entries: MapsEntry[] }[],
): ProcessSeries | null {
  const shown = m.problems.slice(0, 20);
  for (const p of shown) warnings.push({ file: file.path, line: p.line, message: p.message });
  const more = m.problems.length - shown.length + m.problemsOmitted;
  if (more > 0) warnings.push({ file: file.path, message: `and ${more} more problem(s) like these` });
  if (m.reports.length === 0) return null;
  const names = new FrameNames();
  const times = memleakTimes(m, file.mtimeMs, file.path, warnings);
  const builder = new ProcessBuilder();
  m.reports.forEach((r, i) => {
    const rows: Row[] = [];
    for (const s of r.stacks) {
      if (s.bytes === 0 && s.allocations === 0) continue;
      const words: number[] = [];
      for (const f of s.frames) {
        const w = memleakFrameWords(f, names);
        if (w) words.push(w[0], w[1]);
      }
      rows.push({ words, bytes: s.bytes, objects: Math.max(s.allocations, s.bytes > 0 ? 1 : 0) });
    }
    const t = times[i];
    const last = i === m.reports.length - 1;
    addSnapshot(builder, meta(`${file.path}#${i + 1}`, i + 1, t, last), rows, 'memleak', {
      complete: r.complete,
      truncated: r.complete
        ? null
        : { byteOffset: r.byteOffset, line: r.line, reason: 'report cut', fileBytes: file.size },
      context: t !== null ? context(t, m.pid, m.command) : null,
    });
  });
  const dir = file.path.includes('/') ? file.path.slice(0, file.path.lastIndexOf('/')) : '';
  const maps =
    mapsFiles.find((x) => x.pid !== null && x.pid === m.pid) ?? mapsFiles.find((x) => x.pid === null && x.dir === dir);
  const series = builder.finish(
    `${file.path}${m.pid !== null ? ':' + m.pid : ''}`,
    { pid: m.pid, pidNamespace: null, prefix: 'memleak' },
    maps?.entries ?? null,
  );
  if (maps) for (const s of series.snapshots) s.mapsSource = 'file';
  else if (m.reports.some((r) => r.stacks.some((s) => s.frames.some((f) => f.address !== null && f.symbol === null))))
    warnings.push({
      file: file.path,
      message: `some frames were printed as [unknown]: copy /proc/${m.pid ?? '<pid>'}/maps beside the file as ${m.pid ?? '<pid>'}.maps (while the process runs) so heaplens can name them from the binaries`,
    });
  series.pythonFrames = names.table(
    m.pid,
    m.mode === 'bpftrace' ? 'memleak.bt' : m.mode === 'libbpf' ? 'libbpf-tools memleak' : 'bcc memleak',
  );
  const top = m.reports.find((r) => r.top !== null)?.top ?? null;
  if (top !== null && m.mode !== 'libbpf' && m.reports.some((r) => r.stacks.length >= top))
    warnings.push({
      file: file.path,
      message: `memleak printed only its top ${top} stacks per report: totals are of those stacks`,
    });
  return series;
}

// ---- PyTorch ---------------------------------------------------------------------------------------------

const isPythonFile = (filename: string): boolean => filename.endsWith('.py') || filename.startsWith('<');

/**
 * What a block without frames is: the allocator records a stack only while `_record_memory_history` runs, so a
 * live block without one was allocated before recording began (or recording kept no stacks: context=None).
 */
function framelessFrame(snap: TorchSnapshot): TorchFrame {
  const anyFrames =
    snap.devices.some((d) => d.trace.some((e) => e.frames.length > 0)) ||
    snap.devices.some((d) => d.segments.some((s) => s.blocks.some((b) => b.frames.length > 0)));
  return {
    name: anyFrames
      ? '(allocated before recording began)'
      : '(no stack recorded: _record_memory_history without context)',
    filename: '',
    line: null,
  };
}

function torchFrameWords(f: TorchFrame, names: FrameNames): [number, number] | null {
  return names.objectWords(
    f,
    () => `${f.filename}\u0000${f.line ?? ''}\u0000${f.name}`,
    () =>
      // Python frames are .py files or <…> pseudo-files; the rest come from stacks="all" (C++)
      isPythonFile(f.filename)
        ? { function: f.name, file: f.filename, line: f.line, firstLine: null }
        : {
            function: f.name,
            file: f.filename,
            line: f.line,
            firstLine: null,
            native: true,
            // CPython's own frames read as libpython's, so the Python-first view folds them as it folds the
            // interpreter's frames of a native stack
            module: isCPythonSource(f.filename)
              ? 'libpython3'
              : f.filename
                ? f.filename.slice(f.filename.lastIndexOf('/') + 1)
                : null,
          },
  );
}

interface TorchRows {
  names: FrameNames;
  /** the one frame list of blocks without frames */
  framelessList: TorchFrame[];
  /** words of each frame list (the reader shares one array per list the file shares), and their key */
  words: WeakMap<TorchFrame[], { words: number[]; key: string }>;
  /** each stack's leading PyTorch frames, by its words */
  depth: Map<string, number>;
}

function rowsOf(blocks: Iterable<{ size: number; frames: TorchFrame[] }>, t: TorchRows): Row[] {
  const byStack = new Map<string, Row>();
  for (const b of blocks) {
    const frames = b.frames.length > 0 ? b.frames : t.framelessList;
    let known = t.words.get(frames);
    if (!known) {
      const words: number[] = [];
      for (const f of frames) {
        const w = torchFrameWords(f, t.names);
        if (w) words.push(w[0], w[1]);
      }
      known = { words, key: words.join(',') };
      t.words.set(frames, known);
      if (!t.depth.has(known.key))
        t.depth.set(known.key, torchAllocatorDepth(frames.map((f) => ({ ...f, python: isPythonFile(f.filename) }))));
    }
    const { words, key } = known;
    const r = byStack.get(key);
    if (r) {
      r.bytes += b.size;
      r.objects++;
    } else byStack.set(key, { words, bytes: b.size, objects: 1 });
  }
  return [...byStack.values()].filter((r) => r.bytes > 0);
}

/**
 * Where a trace's iterations end, from its record_function spans: the most frequent name (digits aside:
 * `ProfilerStep#12`, `step 3`) among the spans no other span holds, when it recurs; its closed spans' ends, in µs.
 * 'one step' when spans were recorded but none recurs (the trace is one iteration: its rise and fall within the step
 * is what the step did, not growth); null without spans (nothing tells the iterations: snapshots evenly spaced).
 */
function iterationEnds(spans: readonly TorchSpan[]): number[] | 'one step' | null {
  if (spans.length === 0) return null;
  const sorted = [...spans].sort((a, b) => a.startUs - b.startUs);
  const top: TorchSpan[] = [];
  let openUntil = -Infinity;
  for (const x of sorted) {
    if (x.startUs < openUntil) continue;
    top.push(x);
    openUntil = x.endUs ?? Infinity;
  }
  const byName = new Map<string, TorchSpan[]>();
  for (const x of top) {
    const k = x.name.replace(/\d+/g, '#');
    byName.set(k, [...(byName.get(k) ?? []), x]);
  }
  const most = [...byName.values()].reduce((a, b) => (b.length > a.length ? b : a));
  if (most.length < 2) return 'one step';
  return most.flatMap((x) => (x.endUs !== null ? [x.endUs] : []));
}

function deviceSeries(
  file: InputFile,
  snap: TorchSnapshot,
  d: TorchDevice,
  endUs: number | null,
  warnings: LoadWarning[],
): ProcessSeries {
  const rows: TorchRows = {
    names: new FrameNames(),
    framelessList: [framelessFrame(snap)],
    words: new WeakMap(),
    depth: new Map(),
  };
  const builder = new ProcessBuilder();
  const usToMs = (us: number | null): number | null => (us === null ? null : us / 1000);
  // trace indices where a snapshot is taken: evenly spaced, every oom, the end; plus the state before the first
  // entry (the blocks live when recording began), so a series starts where the trace does
  const trace = d.trace;
  const at = new Set<number>();
  const steps = iterationEnds(snap.spans.filter((x) => x.device === d.index));
  if (trace.length > 0) {
    if (steps === null)
      for (let k = 1; k <= TRACE_SNAPSHOTS; k++)
        at.add(Math.min(trace.length - 1, Math.round((k * trace.length) / TRACE_SNAPSHOTS) - 1));
    else if (steps !== 'one step') {
      // the last entry at or before each iteration's end: growth is what an iteration leaves behind
      let i = 0;
      for (const end of steps) {
        while (i + 1 < trace.length && (trace[i + 1].timeUs ?? -Infinity) <= end) i++;
        if ((trace[i].timeUs ?? Infinity) <= end) at.add(i);
      }
      at.add(trace.length - 1);
    }
    for (const o of d.ooms) at.add(Math.max(0, o.index - 1));
  }
  const live = new Map<number, { size: number; frames: TorchFrame[] }>();
  for (const b of d.initialBlocks) live.set(b.address, { size: b.size, frames: b.frames });
  // the entry after which the most bytes are live: a snapshot there too, the one views open on
  let peakAt = -1;
  {
    const sizes = new Map<number, number>();
    let bytes = 0;
    let most = -1;
    for (const [a, b] of live) {
      sizes.set(a, b.size);
      bytes += b.size;
    }
    trace.forEach((e, i) => {
      if (e.action === 'alloc') {
        bytes += e.size - (sizes.get(e.addr) ?? 0);
        sizes.set(e.addr, e.size);
      } else if (e.action === 'free_completed' && sizes.has(e.addr)) {
        bytes -= sizes.get(e.addr)!;
        sizes.delete(e.addr);
      }
      if (bytes > most) [most, peakAt] = [bytes, i];
    });
    if (peakAt >= 0) at.add(peakAt);
  }
  let peakSnapshot: number | null = null;
  let seq = 0;
  const hasTime = trace.some((e) => e.timeUs !== null);
  // an entry without a usable time (damage) takes the last one's, as the timeline does
  let lastUs: number | null = trace.find((e) => e.timeUs !== null)?.timeUs ?? null;
  const snapshotAt = (label: string, us: number | null) => {
    const t = hasTime ? usToMs(us) : null;
    addSnapshot(
      builder,
      meta(`${file.path}#cuda:${d.index}${label}`, ++seq, t, false),
      rowsOf(live.values(), rows),
      'torch-snapshot',
      {
        complete: true,
        truncated: null,
        context: t !== null ? context(t, null, null) : null,
      },
    );
  };
  if (trace.length > 0 && live.size > 0) snapshotAt('@start', lastUs);
  trace.forEach((e, i) => {
    if (e.timeUs !== null) lastUs = e.timeUs;
    if (e.action === 'alloc') live.set(e.addr, { size: e.size, frames: e.frames });
    else if (e.action === 'free_completed') live.delete(e.addr);
    if (at.has(i)) {
      if (i === peakAt) peakSnapshot = builder.snapshots.length;
      snapshotAt(`@${i}`, lastUs);
    }
  });
  // the state the snapshot recorded: active (allocated and pending-free) blocks by their frames, taken on request
  // (a 'manual' dump: the process went on, or not — the file does not say) at one moment for every device, just
  // after the last entry of any device's trace
  const tEnd = endUs !== null ? endUs / 1000 + 0.001 : null;
  const active = d.segments.flatMap((s) => s.blocks.filter((b) => b.state !== 'inactive'));
  addSnapshot(
    builder,
    { ...meta(`${file.path}#cuda:${d.index}`, ++seq, tEnd, true), trigger: 'manual' },
    rowsOf(active, rows),
    'torch-snapshot',
    {
      complete: true,
      truncated: null,
      context: tEnd !== null ? context(tEnd, null, null) : null,
    },
  );
  const series = builder.finish(
    `${file.path}#cuda:${d.index}`,
    { pid: null, pidNamespace: null, prefix: `cuda:${d.index}` },
    null,
  );
  // PyTorch's capture, allocator and dispatcher frames fold as jemalloc's own do (core/frames/torch-frames.ts)
  const { offsets, frames, allocatorDepth } = series.stacks;
  for (let s = 0; s < series.stacks.count; s++) {
    const key: string[] = [];
    for (let k = offsets[s]; k < offsets[s + 1]; k++) {
      const hex = series.addresses.hex[frames[k]];
      const v = BigInt(hex);
      key.push(String(Number(v >> 32n)), String(Number(v & 0xffffffffn)));
    }
    allocatorDepth[s] = rows.depth.get(key.join(',')) ?? 0;
  }
  series.pythonFrames = rows.names.table(null, 'pytorch memory snapshot');
  const tl = d.timeline;
  series.gpu = {
    device: d.index,
    reservedBytes: d.reservedBytes,
    allocatedBytes: d.allocatedBytes,
    pendingFreeBytes: d.pendingFreeBytes,
    inactiveBytes: d.inactiveBytes,
    segments: d.segments.length,
    timeline: {
      timeMs: tl.timeUs.map((u) => (hasTime ? u / 1000 : u)),
      allocated: tl.allocated,
      reserved: tl.reserved,
      cached: tl.cached,
    },
    ooms: d.ooms.map((o) => ({ timeMs: usToMs(o.timeUs), size: o.size, deviceFree: o.deviceFree })),
    spans: snap.spans
      .filter((s) => s.device === d.index)
      .map((s) => ({ name: s.name, startMs: s.startUs / 1000, endMs: usToMs(s.endUs) })),
    settings: snap.settings,
    source: snap.shape,
    ...(peakSnapshot !== null ? { peakSnapshot } : {}),
  };
  for (const o of d.ooms)
    warnings.push({
      file: file.path,
      message: `cuda:${d.index} ran out of memory${o.timeUs !== null ? ' at ' + new Date(o.timeUs / 1000).toISOString() : ' (its time is unusable)'}: ${o.size} bytes asked, ${o.deviceFree} free on the device, ${d.reservedBytes} reserved`,
    });
  return series;
}

export function torchSeries(file: InputFile, snap: TorchSnapshot, warnings: LoadWarning[]): ProcessSeries[] {
  for (const p of snap.problems) warnings.push({ file: file.path, message: p });
  if (snap.shape === 'segments')
    warnings.push({
      file: file.path,
      message:
        'a bare segment list (torch.cuda.memory_snapshot()): the recorded state only, without a trace over time; torch.cuda.memory._dump_snapshot() keeps the trace',
    });
  if (snap.devices.length === 0) warnings.push({ file: file.path, message: 'the PyTorch snapshot holds no device' });
  // when the snapshot was taken: after the last timed entry of any device
  let endUs: number | null = null;
  for (const d of snap.devices)
    for (const e of d.trace) if (e.timeUs !== null && (endUs === null || e.timeUs > endUs)) endUs = e.timeUs;
  return snap.devices.map((d) => deviceSeries(file, snap, d, endUs, warnings));
}

/** Reads a memleak log as a stream of lines (any size), a PyTorch snapshot whole (bounded), into series; in the host's
 * reader worker when it gives one (`run`: its heap limit holds what a hostile file makes). */
export async function loadCapture(
  file: InputFile,
  kind: CaptureKind,
  warnings: LoadWarning[],
  mapsFiles: readonly { pid: number | null; dir: string; entries: MapsEntry[] }[],
  options: {
    /** the host's dump runner (load-job.ts DumpRunner): its reader worker reads the pickle */
    run?: (task: DumpTask, onBytes: (n: number) => void, signal?: AbortSignal) => Promise<DumpTaskResult>;
    signal?: AbortSignal;
    inflate?: Inflater | null;
  } = {},
): Promise<ProcessSeries[]> {
  if (kind === 'torch-snapshot') {
    let snap: TorchSnapshot | null;
    if (options.run) {
      // the host's reader worker (its heap limit holds what a hostile pickle makes), as pprof and massif are read
      const r = await options.run(
        { kind: 'torch-snapshot', file, meta: meta(file.path, 0, file.mtimeMs, true) },
        () => undefined,
        options.signal,
      );
      warnings.push(...r.warnings);
      snap = r.torch ?? null;
    } else
      snap = await readTorchTask(file, warnings, {
        ...(options.signal ? { signal: options.signal } : {}),
        inflate: options.inflate ?? null,
      });
    return snap ? torchSeries(file, snap, warnings) : [];
  }
  // a memleak log: a stream of lines, any size, in the host's reader worker when it has one
  let m: MemleakFile;
  if (options.run) {
    const r = await options.run(
      { kind: 'memleak', file, meta: meta(file.path, 0, file.mtimeMs, true) },
      () => undefined,
      options.signal,
    );
    warnings.push(...r.warnings);
    if (!r.memleak) return [];
    m = r.memleak;
  } else m = await readMemleakTask(file, warnings, { inflate: options.inflate ?? null });
  const s = memleakSeries(file, m, warnings, mapsFiles);
  return s ? [s] : [];
}
