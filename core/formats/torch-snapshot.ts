// PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot`: a pickle of the dict `_snapshot()` returns;
// or `torch::cuda::_memory_snapshot_pickled()`, the same dict at protocol 2), read through the restricted
// unpickler (pickle.ts) so nothing in the file runs. Field names follow the writer,
// torch/csrc/cuda/memory_snapshot.cpp (`segmentInfoToDict`, `action_to_str`) and torch/cuda/memory.py:
//   segments: [{device, address, total_size, allocated_size, active_size, requested_size, stream, segment_type,
//               segment_pool_id, is_expandable, frames, blocks: [{address, size, requested_size, state, frames}]}]
//   device_traces: [[{action, addr | device_free (oom), size, stream, time_us, frames}]]  (one list per device)
//   allocator_settings: {...}; external_annotations: [{device, name, stage: START|END, time_us}]
// Frames are {filename, line, name}, innermost first. Per device this gives the state (reserved = segments,
// active blocks by their frames, pending-free and inactive bytes) and a timeline replayed from the trace:
// allocated (alloc … free_completed, as MemoryViz.js counts active memory) and reserved (segment_alloc/map …
// segment_free/unmap) bytes over time_us, with the oom entries marked. `torch.cuda.memory_snapshot()` returns the
// segment list alone (no trace); pickled, it is read as a snapshot of its segments.
//
// Bounds (issue 46): devices are c10::DeviceIndex (int8_t), so 0–127; a segment, block or trace size past 1 PiB
// (no device is near it) and sums past 2^53 are damage, skipped with a warning; time_us outside the dump-time
// bounds (limits.ts dateProblem: 1970 to a year past the reading) keeps its entry without a time, with a warning;
// blocks, segments and trace entries visited (a shared one at each reference) are at most MAX_VISITS, so a file
// whose memo references multiply them stops here with a message rather than in the heap.

import { dateProblem, MAX_COUNT, numberText } from './limits.js';
import { field, readPickle, type PickleValue } from './pickle.js';

export interface TorchFrame {
  name: string;
  filename: string;
  line: number | null;
}

export type BlockState = 'active_allocated' | 'active_pending_free' | 'inactive';

export interface TorchBlock {
  address: number;
  size: number;
  requestedSize: number;
  state: BlockState;
  /** innermost first; shared objects for frames the file shares */
  frames: TorchFrame[];
}

export interface TorchSegment {
  device: number;
  address: number;
  totalSize: number;
  segmentType: string;
  stream: string;
  blocks: TorchBlock[];
}

export interface TorchTraceEntry {
  action: string;
  /** `addr`, or for an oom entry the device's free bytes (`device_free`) */
  addr: number;
  size: number;
  stream: string;
  /** Unix-epoch µs (PyTorch ≥ 2.2); null in older files */
  timeUs: number | null;
  frames: TorchFrame[];
}

export interface TorchOom {
  timeUs: number | null;
  /** index into the device's trace */
  index: number;
  size: number;
  deviceFree: number;
  frames: TorchFrame[];
}

export interface TorchTimeline {
  /** one point per trace entry that changes a figure (an entry without a usable time at the last one's) */
  timeUs: number[];
  allocated: number[];
  reserved: number[];
  /** reserved but not allocated: what the caching allocator holds for reuse */
  cached: number[];
}

export interface TorchDevice {
  index: number;
  segments: TorchSegment[];
  trace: TorchTraceEntry[];
  reservedBytes: number;
  allocatedBytes: number;
  pendingFreeBytes: number;
  inactiveBytes: number;
  timeline: TorchTimeline;
  ooms: TorchOom[];
  /** free_completed entries of blocks the trace never allocated (the ring buffer lost their allocs) */
  freesBeforeAlloc: number;
  /** blocks live when the trace begins (initialState) */
  initialBlocks: TorchInitialBlock[];
}

export interface TorchInitialBlock {
  address: number;
  size: number;
  frames: TorchFrame[];
}

export interface TorchSpan {
  device: number;
  name: string;
  startUs: number;
  /** null when the END is missing (the snapshot was taken inside the span) */
  endUs: number | null;
}

export interface TorchSnapshot {
  /** `snapshot`: the dict `_snapshot()` returns; `segments`: the bare list `torch.cuda.memory_snapshot()` returns */
  shape: 'snapshot' | 'segments';
  devices: TorchDevice[];
  spans: TorchSpan[];
  /** allocator_settings as text (PYTORCH_CUDA_ALLOC_CONF, max_split_size, …) */
  settings: Record<string, string>;
  /** problems in the file's content (the reader still returns what it could read) */
  problems: string[];
}

export class TorchSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TorchSnapshotError';
  }
}

const MAX_PROBLEMS = 50;
/** c10::DeviceIndex is an int8_t */
export const MAX_DEVICE_INDEX = 127;
/** a segment, block or allocation larger than this is damage (the largest devices hold ~2^37 bytes) */
export const MAX_DEVICE_BYTES = 2 ** 50;
/**
 * blocks, segments and trace entries visited, a shared one at every reference (a 10^6-entry trace: 10^6); the
 * timeline keeps five numbers an entry, so this bounds it at ~170 MB
 */
export const MAX_VISITS = 1 << 22;
const STATES = new Set<string>(['active_allocated', 'active_pending_free', 'inactive']);

function num(v: PickleValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}
/** An address or stream: any 64-bit value, as a number (exact below 2^53; only compared for equality). */
const size = (v: PickleValue | undefined): number => {
  const n = num(v);
  return n !== null && n >= 0 && n <= Number.MAX_SAFE_INTEGER ? n : 0;
};
/** A byte count: a whole number up to MAX_DEVICE_BYTES, else null (damage). */
const bytesOf = (v: PickleValue | undefined): number | null => {
  const n = num(v);
  return n !== null && Number.isInteger(n) && n >= 0 && n <= MAX_DEVICE_BYTES ? n : null;
};
const shown = (v: PickleValue | undefined): string => {
  if (typeof v === 'bigint' || typeof v === 'number') return numberText(v);
  return typeof v;
};
const str = (v: PickleValue | undefined): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : '';
const list = (v: PickleValue | undefined): PickleValue[] => (Array.isArray(v) ? v : []);

/** A segment dict as `segmentInfoToDict` writes it. */
const isSegment = (v: PickleValue | undefined): boolean => v instanceof Map && v.has('total_size') && v.has('blocks');

/** True when `root` is a dict with the keys of a memory snapshot, or the bare segment list. */
export function isTorchSnapshot(root: PickleValue): boolean {
  if (Array.isArray(root)) return root.length > 0 && isSegment(root[0]);
  return root instanceof Map && (root.has('segments') || root.has('device_traces'));
}

/** Reads a snapshot pickle; throws PickleError (the file is not plain data) or TorchSnapshotError (not a snapshot). */
export function readTorchSnapshot(bytes: Uint8Array, nowMs: number = Date.now()): TorchSnapshot {
  const root = readPickle(bytes);
  if (!isTorchSnapshot(root))
    throw new TorchSnapshotError(
      'a pickle, but not a PyTorch memory snapshot (no "segments" or "device_traces", nor a list of segments)',
    );
  const shape = Array.isArray(root) ? 'segments' : 'snapshot';
  const problems: string[] = [];
  const problem = (m: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(m);
  };
  // damage of one kind counted and said once, with its first example
  const counted = new Map<string, { n: number; example: string }>();
  const count = (kind: string, example: string) => {
    const c = counted.get(kind);
    if (c) c.n++;
    else counted.set(kind, { n: 1, example });
  };
  let visits = 0;
  const visit = (what: string): void => {
    if (++visits > MAX_VISITS)
      throw new TorchSnapshotError(
        `more than ${MAX_VISITS} ${what} once the file's shared references are followed (one segment, block or entry referenced again and again); refused`,
      );
  };
  /** a time_us as ms on the wall clock, or null (absent, or outside the dump-time bounds: counted) */
  const timeOf = (v: PickleValue | undefined, what: string): number | null => {
    const t = num(v);
    if (t === null) return null;
    const why = dateProblem(t / 1000, nowMs);
    if (why === null) return t;
    count(`time:${what}`, `${what} time_us ${shown(v)} (${why})`);
    return null;
  };
  // frame dicts the file shares (memoized once) become one shared object: interning downstream is by identity;
  // a frame list the file shares, one shared array
  const frameOf = new Map<PickleValue, TorchFrame>();
  const framesOf = new Map<PickleValue, TorchFrame[]>();
  const frames = (v: PickleValue | undefined): TorchFrame[] => {
    if (v === undefined) return [];
    const known = framesOf.get(v);
    if (known) return known;
    const out = list(v).map((f) => {
      let t = frameOf.get(f);
      if (!t) {
        const line = num(field(f, 'line'));
        t = {
          name: str(field(f, 'name')) || '?',
          filename: str(field(f, 'filename')),
          line: line !== null && line > 0 && line <= MAX_COUNT ? line : null,
        };
        frameOf.set(f, t);
      }
      return t;
    });
    framesOf.set(v, out);
    return out;
  };

  const devices = new Map<number, TorchDevice>();
  const device = (i: number): TorchDevice => {
    let d = devices.get(i);
    if (!d) {
      d = {
        index: i,
        segments: [],
        trace: [],
        reservedBytes: 0,
        allocatedBytes: 0,
        pendingFreeBytes: 0,
        inactiveBytes: 0,
        timeline: { timeUs: [], allocated: [], reserved: [], cached: [] },
        ooms: [],
        freesBeforeAlloc: 0,
        initialBlocks: [],
      };
      devices.set(i, d);
    }
    return d;
  };

  const deviceIndex = (v: PickleValue | undefined, what: string): number | null => {
    const dev = num(v);
    if (dev !== null && Number.isInteger(dev) && dev >= 0 && dev <= MAX_DEVICE_INDEX) return dev;
    count(`device:${what}`, `${what} on device ${shown(v)}`);
    return null;
  };
  const blockOf = new Map<PickleValue, TorchBlock | null>();
  const block = (b: PickleValue, segmentSize: number): TorchBlock | null => {
    visit('blocks');
    const known = blockOf.get(b);
    if (known !== undefined) return known;
    const state = str(field(b, 'state'));
    const legacy = list(field(b, 'history'))[0]; // files before 2.1 keep the frames in history[0]
    const bytes = bytesOf(field(b, 'size'));
    let out: TorchBlock | null = null;
    if (bytes === null || bytes > segmentSize)
      count('block-size', `a block of ${shown(field(b, 'size'))} bytes in a segment of ${segmentSize}`);
    else {
      out = {
        address: size(field(b, 'address')),
        size: bytes,
        requestedSize: bytesOf(field(b, 'requested_size') ?? field(legacy, 'real_size')) ?? 0,
        state: STATES.has(state)
          ? (state as BlockState)
          : state === 'active_awaiting_free'
            ? 'active_pending_free'
            : 'inactive',
        frames: frames(field(b, 'frames') ?? field(legacy, 'frames')),
      };
      if (!STATES.has(state) && state !== 'active_awaiting_free')
        problem(`a block with the unknown state "${state}" was counted as inactive`);
    }
    blockOf.set(b, out);
    return out;
  };

  for (const s of shape === 'segments' ? list(root) : list(field(root, 'segments'))) {
    visit('segments');
    const dev = deviceIndex(field(s, 'device'), 'a segment');
    if (dev === null) continue;
    const total = bytesOf(field(s, 'total_size'));
    if (total === null) {
      count('segment-size', `a segment of ${shown(field(s, 'total_size'))} bytes`);
      continue;
    }
    const seg: TorchSegment = {
      device: dev,
      address: size(field(s, 'address')),
      totalSize: total,
      segmentType: str(field(s, 'segment_type')),
      stream: str(field(s, 'stream')),
      blocks: [],
    };
    for (const b of list(field(s, 'blocks'))) {
      const blk = block(b, total);
      if (blk) seg.blocks.push(blk);
    }
    const d = device(dev);
    if (d.reservedBytes + seg.totalSize > MAX_COUNT) {
      count('sum', `cuda:${dev}'s segments adding up past 2^53 bytes`);
      continue;
    }
    d.segments.push(seg);
    d.reservedBytes += seg.totalSize;
    for (const b of seg.blocks) {
      if (b.state === 'active_allocated') d.allocatedBytes += b.size;
      else if (b.state === 'active_pending_free') d.pendingFreeBytes += b.size;
      else d.inactiveBytes += b.size;
    }
  }

  const entryOf = new Map<PickleValue, TorchTraceEntry | null>();
  const traces = list(field(root, 'device_traces'));
  if (traces.length > MAX_DEVICE_INDEX + 1)
    problem(`${traces.length} device traces: devices above cuda:${MAX_DEVICE_INDEX} (c10::DeviceIndex) were skipped`);
  traces.slice(0, MAX_DEVICE_INDEX + 1).forEach((entries, dev) => {
    const es = list(entries);
    if (es.length === 0 && !devices.has(dev)) return;
    const d = device(dev);
    for (const e of es) {
      visit('trace entries');
      // an entry the file shares is one object (its replay repeats it, as the file says)
      const known = entryOf.get(e);
      if (known !== undefined) {
        if (known) d.trace.push(known);
        continue;
      }
      entryOf.set(e, null);
      const action = str(field(e, 'action'));
      const bytes = bytesOf(field(e, 'size'));
      if (bytes === null) {
        count('entry-size', `a ${action || 'trace'} entry of ${shown(field(e, 'size'))} bytes`);
        continue;
      }
      const entry: TorchTraceEntry = {
        action,
        addr: action === 'oom' ? (bytesOf(field(e, 'device_free')) ?? 0) : size(field(e, 'addr')),
        size: bytes,
        stream: str(field(e, 'stream')),
        timeUs: timeOf(field(e, 'time_us'), action === 'oom' ? 'an oom entry' : 'a trace entry'),
        frames: frames(field(e, 'frames')),
      };
      entryOf.set(e, entry);
      d.trace.push(entry);
    }
    replay(d, problem);
  });

  const spans: TorchSpan[] = [];
  const open = new Map<string, TorchSpan>();
  for (const a of list(field(root, 'external_annotations'))) {
    visit('annotations');
    const dev = deviceIndex(field(a, 'device') ?? 0, 'an annotation');
    const name = str(field(a, 'name'));
    const stage = str(field(a, 'stage'));
    const t = timeOf(field(a, 'time_us'), 'an annotation');
    if (t === null || dev === null) continue;
    const key = `${dev}\u0000${name}`;
    if (stage === 'START') {
      const s = { device: dev, name, startUs: t, endUs: null };
      open.set(key, s);
      spans.push(s);
    } else if (stage === 'END') {
      const s = open.get(key);
      if (s) {
        s.endUs = t;
        open.delete(key);
      } else problem(`annotation "${name}" ends without a start`);
    }
  }

  const settings: Record<string, string> = Object.create(null) as Record<string, string>;
  const as = field(root, 'allocator_settings');
  if (as instanceof Map)
    for (const [k, v] of as)
      if (typeof k === 'string' && !(v instanceof Map) && !Array.isArray(v)) settings[k] = str(v);

  const said: Record<string, string> = {
    'device:a segment': 'segments on a device outside 0–127 (c10::DeviceIndex) were skipped',
    'device:an annotation': 'annotations on a device outside 0–127 were skipped',
    'segment-size': 'segments larger than 1 PiB (damage) were skipped',
    'block-size': 'blocks larger than 1 PiB or than their segment (damage) were skipped',
    'entry-size': 'trace entries larger than 1 PiB (damage) were skipped',
    sum: 'segments were skipped: their device’s reserved bytes would pass 2^53',
    'time:a trace entry': 'trace entries carry a time outside 1970 to a year from now: kept without a time',
    'time:an oom entry': 'out-of-memory entries carry a time outside 1970 to a year from now: kept without a date',
    'time:an annotation': 'annotations carry a time outside 1970 to a year from now: skipped',
  };
  for (const [kind, c] of counted) problem(`${c.n} ${said[kind] ?? kind} (the first: ${c.example})`);
  return { shape, devices: [...devices.values()].sort((a, b) => a.index - b.index), spans, settings, problems };
}

/**
 * The blocks live when the trace begins (its ring buffer, max_entries, dropped their allocs), as MemoryViz.js
 * `process_alloc_data` adds them: a block freed before any alloc of its address (its size and frames from the
 * free entry), and a block active in the recorded state whose address the trace never allocates. Segments alike.
 */
function initialState(d: TorchDevice): { blocks: TorchInitialBlock[]; reserved: number } {
  const allocated = new Set<number>();
  const blocks: TorchInitialBlock[] = [];
  const segs = new Set<number>();
  let reserved = 0;
  for (const e of d.trace) {
    if (e.action === 'alloc') allocated.add(e.addr);
    else if (e.action === 'free_completed' && !allocated.has(e.addr)) {
      allocated.add(e.addr); // once
      blocks.push({ address: e.addr, size: e.size, frames: e.frames });
      d.freesBeforeAlloc++;
    } else if (e.action === 'segment_alloc' || e.action === 'segment_map') segs.add(e.addr);
    else if ((e.action === 'segment_free' || e.action === 'segment_unmap') && !segs.has(e.addr)) {
      segs.add(e.addr);
      reserved += e.size;
    }
  }
  for (const seg of d.segments) {
    if (!segs.has(seg.address)) reserved += seg.totalSize;
    for (const b of seg.blocks)
      if (b.state !== 'inactive' && !allocated.has(b.address))
        blocks.push({ address: b.address, size: b.size, frames: b.frames });
  }
  return { blocks, reserved };
}

/** Replays a device's trace: allocated and reserved bytes over time, ooms, the blocks live before it began. */
function replay(d: TorchDevice, problem: (m: string) => void): void {
  const init = initialState(d);
  d.initialBlocks = init.blocks;
  const live = new Map<number, number>(); // addr → size of the blocks live now
  let allocated = 0;
  for (const b of init.blocks) {
    live.set(b.address, b.size);
    allocated += b.size;
  }
  let reserved = init.reserved;
  let lastTime = -Infinity;
  let unordered = 0;
  let pastSum = 0;
  const tl = d.timeline;
  // an entry without a usable time is placed at the last one's (the first one's before any)
  const timed = d.trace.some((e) => e.timeUs !== null);
  let at: number | null = d.trace.find((e) => e.timeUs !== null)?.timeUs ?? null;
  d.trace.forEach((e, i) => {
    if (e.timeUs !== null) {
      if (e.timeUs < lastTime) unordered++;
      lastTime = Math.max(lastTime, e.timeUs);
      at = e.timeUs;
    }
    switch (e.action) {
      case 'alloc':
        if (allocated + e.size > MAX_COUNT) {
          pastSum++;
          return;
        }
        allocated += e.size - (live.get(e.addr) ?? 0);
        live.set(e.addr, e.size);
        break;
      case 'free_completed': {
        const s = live.get(e.addr);
        if (s === undefined) return;
        live.delete(e.addr);
        allocated -= s;
        break;
      }
      case 'segment_alloc':
      case 'segment_map':
        if (reserved + e.size > MAX_COUNT) {
          pastSum++;
          return;
        }
        reserved += e.size;
        break;
      case 'segment_free':
      case 'segment_unmap':
        reserved = Math.max(0, reserved - e.size);
        break;
      case 'oom':
        d.ooms.push({ timeUs: e.timeUs, index: i, size: e.size, deviceFree: e.addr, frames: e.frames });
        break;
      default:
        return;
    }
    tl.timeUs.push(timed ? (at as number) : i);
    tl.allocated.push(allocated);
    tl.reserved.push(reserved);
    tl.cached.push(Math.max(0, reserved - allocated));
  });
  if (d.freesBeforeAlloc > 0)
    problem(
      `device ${d.index}: ${d.freesBeforeAlloc} frees precede any alloc of theirs in the trace (the ring buffer, max_entries, dropped the older entries); those blocks are counted as live from the trace's start, with the size and frames of their free`,
    );
  if (unordered > 0) problem(`device ${d.index}: ${unordered} trace entries go back in time_us`);
  if (pastSum > 0) problem(`device ${d.index}: ${pastSum} trace entries skipped: they would take its bytes past 2^53`);
}
