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
// segment_free/unmap) bytes over time_us, with the oom entries marked.

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
  /** one point per trace entry that changes a figure */
  timeUs: number[];
  allocated: number[];
  reserved: number[];
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
const STATES = new Set<string>(['active_allocated', 'active_pending_free', 'inactive']);

function num(v: PickleValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}
const size = (v: PickleValue | undefined): number => {
  const n = num(v);
  return n !== null && n >= 0 && n <= Number.MAX_SAFE_INTEGER ? n : 0;
};
const str = (v: PickleValue | undefined): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : '';
const list = (v: PickleValue | undefined): PickleValue[] => (Array.isArray(v) ? v : []);

/** True when `root` is a dict with the keys of a memory snapshot. */
export function isTorchSnapshot(root: PickleValue): boolean {
  return root instanceof Map && (root.has('segments') || root.has('device_traces'));
}

/** Reads a snapshot pickle; throws PickleError (the file is not plain data) or TorchSnapshotError (not a snapshot). */
export function readTorchSnapshot(bytes: Uint8Array): TorchSnapshot {
  const root = readPickle(bytes);
  if (!isTorchSnapshot(root))
    throw new TorchSnapshotError('a pickle, but not a PyTorch memory snapshot (no "segments" or "device_traces")');
  const problems: string[] = [];
  const problem = (m: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(m);
  };
  // frame dicts the file shares (memoized once) become one shared object: interning downstream is by identity
  const frameOf = new Map<PickleValue, TorchFrame>();
  const frames = (v: PickleValue | undefined): TorchFrame[] =>
    list(v).map((f) => {
      let t = frameOf.get(f);
      if (!t) {
        const line = num(field(f, 'line'));
        t = {
          name: str(field(f, 'name')) || '?',
          filename: str(field(f, 'filename')),
          line: line !== null && line > 0 ? line : null,
        };
        frameOf.set(f, t);
      }
      return t;
    });

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
        timeline: { timeUs: [], allocated: [], reserved: [] },
        ooms: [],
        freesBeforeAlloc: 0,
        initialBlocks: [],
      };
      devices.set(i, d);
    }
    return d;
  };

  for (const s of list(field(root, 'segments'))) {
    const dev = num(field(s, 'device'));
    if (dev === null || dev < 0 || !Number.isInteger(dev)) {
      problem('a segment without a device index was skipped');
      continue;
    }
    const seg: TorchSegment = {
      device: dev,
      address: size(field(s, 'address')),
      totalSize: size(field(s, 'total_size')),
      segmentType: str(field(s, 'segment_type')),
      stream: str(field(s, 'stream')),
      blocks: [],
    };
    for (const b of list(field(s, 'blocks'))) {
      const state = str(field(b, 'state'));
      const legacy = list(field(b, 'history'))[0]; // files before 2.1 keep the frames in history[0]
      seg.blocks.push({
        address: size(field(b, 'address')),
        size: size(field(b, 'size')),
        requestedSize: size(field(b, 'requested_size') ?? field(legacy, 'real_size')),
        state: STATES.has(state)
          ? (state as BlockState)
          : state === 'active_awaiting_free'
            ? 'active_pending_free'
            : 'inactive',
        frames: frames(field(b, 'frames') ?? field(legacy, 'frames')),
      });
      if (!STATES.has(state) && state !== 'active_awaiting_free')
        problem(`a block with the unknown state "${state}" was counted as inactive`);
    }
    const d = device(dev);
    d.segments.push(seg);
    d.reservedBytes += seg.totalSize;
    for (const b of seg.blocks) {
      if (b.state === 'active_allocated') d.allocatedBytes += b.size;
      else if (b.state === 'active_pending_free') d.pendingFreeBytes += b.size;
      else d.inactiveBytes += b.size;
    }
  }

  list(field(root, 'device_traces')).forEach((entries, dev) => {
    const es = list(entries);
    if (es.length === 0 && !devices.has(dev)) return;
    const d = device(dev);
    for (const e of es) {
      const action = str(field(e, 'action'));
      const t = num(field(e, 'time_us'));
      d.trace.push({
        action,
        addr: size(action === 'oom' ? field(e, 'device_free') : field(e, 'addr')),
        size: size(field(e, 'size')),
        stream: str(field(e, 'stream')),
        timeUs: t,
        frames: frames(field(e, 'frames')),
      });
    }
    replay(d, problem);
  });

  const spans: TorchSpan[] = [];
  const open = new Map<string, TorchSpan>();
  for (const a of list(field(root, 'external_annotations'))) {
    const dev = num(field(a, 'device')) ?? 0;
    const name = str(field(a, 'name'));
    const stage = str(field(a, 'stage'));
    const t = num(field(a, 'time_us'));
    if (t === null) continue;
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

  return { devices: [...devices.values()].sort((a, b) => a.index - b.index), spans, settings, problems };
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
  const tl = d.timeline;
  d.trace.forEach((e, i) => {
    if (e.timeUs !== null) {
      if (e.timeUs < lastTime) unordered++;
      lastTime = Math.max(lastTime, e.timeUs);
    }
    switch (e.action) {
      case 'alloc':
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
    tl.timeUs.push(e.timeUs ?? i);
    tl.allocated.push(allocated);
    tl.reserved.push(reserved);
  });
  if (d.freesBeforeAlloc > 0)
    problem(
      `device ${d.index}: ${d.freesBeforeAlloc} frees precede any alloc of theirs in the trace (the ring buffer, max_entries, dropped the older entries); those blocks are counted as live from the trace's start, with the size and frames of their free`,
    );
  if (unordered > 0) problem(`device ${d.index}: ${unordered} trace entries go back in time_us`);
}
