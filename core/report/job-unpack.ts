// Reading a report's payload (job-pack.ts writes it) as untrusted input: a report is a file anyone may hand over,
// and the page and the app draw whatever the model holds. So, in this order and before any model is built:
//   1. inflation is bounded (bytes out per byte in, and absolutely): a small file cannot become gigabytes;
//   2. every count the header declares (processes, stacks, frames per stack, snapshots, cells, addresses,
//      symbols) is bounded, summed over the report, from the columns' declared lengths alone;
//   3. every field a view reads is checked (types, finite, non-negative, ids in range) and the model is built
//      from the checked values only.
// Any failure is one ReportError "the report's data is damaged: <where>: <what>": the page shows only that.

import { Inflate } from 'pako';
import { checkDumpContext } from '../formats/dump-context-shape.js';
import type { DumpFormat, Trigger } from '../formats/dump-types.js';
import { MAX_COUNT, MAX_FRAMES_PER_STACK, MAX_SAMPLE_PERIOD } from '../formats/limits.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import type { PyFrameEntry, PyFrameTable, PyMarkerKind } from '../formats/pyframes.js';
import {
  arr,
  bool,
  describe,
  num,
  numberRecord,
  numOrNull,
  obj,
  oneOf,
  oneOfOrNull,
  ShapeError,
  size,
  sizeOrNull,
  str,
  strOrNull,
  textRecord,
  whole,
  wholeOrNull,
  type Obj,
} from '../formats/shape.js';
import type { Counts, GpuSeriesInfo, Job, ProcessSeries, Snapshot } from '../model/model.js';
import type { SymbolFrame, SymbolizedAddress, SymbolTable } from '../model/symbol-table.js';
import { ReportError } from './errors.js';
import {
  GPU_REPORT_EVENTS,
  GPU_REPORT_POINTS,
  OTHER_ADDRESS,
  REPORT_FORMAT,
  REPORT_VERSION,
  type Column,
  type PackedJob,
} from './job-pack.js';
import { REPORT_LIMITS, type ReportLimits } from './report-limits.js';

export { REPORT_LIMITS };

/**
 * The bounds in force for the read under way: REPORT_LIMITS, or a test's smaller ones (readPayload, unpackJob).
 * Module state, set and restored around each synchronous read, so every check below reads one table.
 */
let L: ReportLimits = REPORT_LIMITS;

function withLimits<R>(limits: ReportLimits, read: () => R): R {
  const before = L;
  L = limits;
  try {
    return read();
  } finally {
    L = before;
  }
}

const TRIGGERS: readonly Trigger[] = ['interval', 'manual', 'high-water', 'final', 'unknown'];
const FORMATS: readonly DumpFormat[] = ['heap_v2', 'heap_profile', 'memleak', 'torch-snapshot', 'pprof', 'massif'];
const MARKERS: readonly PyMarkerKind[] = ['entry', 'unmerged', 'truncated', 'unknown'];
const STATUSES: readonly SymbolizedAddress['status'][] = ['symbolized', 'symbol-only', 'unresolved', 'no-binary'];
const BINARY: readonly NonNullable<SymbolizedAddress['binary']>[] = ['verified', 'unverified', 'mismatch'];
const HEX = /^0x[0-9a-f]{1,16}$/;
const T = REPORT_LIMITS.textChars;

function damaged(at: string, what: string): ReportError {
  return new ReportError(`the report's data is damaged: ${at}: ${what}`);
}

function fail(at: string, what: string): never {
  throw damaged(at, what);
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/**
 * Inflates the payload in steps, so that nothing past what the header declares is ever made: at most
 * `inflateLimit` bytes in all, and once the header is whole, `onHeader` (given the bytes so far and the
 * header's length) checks it and returns the payload's declared length: inflation stops with a ReportError past it.
 */
function inflateBounded(deflated: Uint8Array, onHeader: (raw: Uint8Array, len: number) => number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  let limit = inflateLimit(deflated.length);
  let declared = false;
  let len = -1;
  let declaredBytes = Infinity;
  const beyond = (): ReportError =>
    declaredBytes <= limit
      ? damaged('payload', `more data than its header declares (${fmt(limit)} bytes)`)
      : damaged(
          'payload',
          `it inflates past ${fmt(limit)} bytes from ${fmt(deflated.length)} (at most ${L.inflateRatio}× its size, and ${fmt(L.maxInflatedBytes)} bytes)`,
        );
  const z = new Inflate({ chunkSize: 1 << 20 });
  z.onData = (c: Uint8Array) => {
    total += c.length;
    // thrown from inside pako's loop: it stops there, before the next megabyte is made
    if (total > limit) throw beyond();
    parts.push(c);
  };
  const joined = (): Uint8Array => {
    if (parts.length === 1) return parts[0];
    const out = new Uint8Array(total);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    parts.splice(0, parts.length, out);
    return out;
  };
  const ended = (): boolean => (z as Inflate & { ended: boolean }).ended;
  // small steps while the header is read (1 KiB of input makes at most ~1 MB: deflate's ceiling is 1032×), so
  // the declared length bounds what comes out soon after the header ends; then the rest at once
  for (
    let at = 0, step = 1024;
    at < deflated.length && !ended();
    at += step, step = declared ? deflated.length : len < 0 ? 1024 : 16 * 1024
  ) {
    z.push(deflated.subarray(at, at + step), at + step >= deflated.length);
    if (z.err) fail('payload', `not a deflate stream (${z.msg})`);
    if (!declared && total >= 4) {
      if (len < 0) {
        const first = parts[0].length >= 4 ? parts[0] : joined();
        len = new DataView(first.buffer, first.byteOffset, first.byteLength).getUint32(0, true);
        if (len > L.headerBytes) fail('payload', `a header of ${fmt(len)} bytes, more than ${fmt(L.headerBytes)}`);
      }
      if (total >= 4 + len) {
        declared = true;
        declaredBytes = onHeader(joined(), len);
        limit = Math.min(limit, declaredBytes);
        if (total > limit) throw beyond();
      }
    }
  }
  if (!ended()) fail('payload', 'the deflate stream ends early');
  if (!declared) fail('payload', total < 4 ? 'too short' : 'header longer than the data');
  return joined();
}

export function inflateLimit(deflatedBytes: number): number {
  return Math.min(L.maxInflatedBytes, Math.max(L.minInflatedBytes, deflatedBytes * L.inflateRatio));
}

function parseHeader(raw: Uint8Array, len: number): PackedJob {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder().decode(raw.subarray(4, 4 + len)));
  } catch (e) {
    throw new ReportError(`the report's data is damaged (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof v !== 'object' || v === null || (v as { format?: unknown }).format !== REPORT_FORMAT)
    throw new ReportError('not a heaplens report');
  const version = (v as { version?: unknown }).version;
  if (typeof version !== 'number' || !Number.isInteger(version)) throw new ReportError('report without a version');
  if (version > REPORT_VERSION)
    throw new ReportError(
      `this report was written by a newer heaplens (report version ${version}); this one reads up to ${REPORT_VERSION}`,
    );
  if (version < REPORT_VERSION)
    throw new ReportError(
      `this report was written by an older heaplens (report version ${version}), whose reports only its own page shows; open the report in a browser`,
    );
  return v as PackedJob;
}

/**
 * The header of a payload (format, version and every declared count checked before the columns are inflated),
 * its column bytes, and the processes' declared counts.
 */
export function readPayload(
  deflated: Uint8Array,
  limits: ReportLimits = REPORT_LIMITS,
): { job: PackedJob; cols: Uint8Array; declared: Declared } {
  return withLimits(limits, () => readPayloadIn(deflated));
}

function readPayloadIn(deflated: Uint8Array): { job: PackedJob; cols: Uint8Array; declared: Declared } {
  let job: PackedJob | null = null;
  let declared: Declared | null = null;
  let colsAt = 0;
  const raw = inflateBounded(deflated, (head, len) => {
    const h = parseHeader(head, len);
    job = h;
    const d = checkCounts(h as unknown as Obj);
    declared = d.declared;
    colsAt = 4 + len + ((4 - ((4 + len) % 4)) % 4);
    return colsAt + d.end;
  });
  if (job === null || declared === null) fail('payload', 'no header');
  return { job, cols: raw.subarray(colsAt), declared };
}

/** A column's declared place and length, checked against the data when given (nothing read yet). */
function columnOf(cols: Uint8Array | null, c: unknown, at: string, t: Column['t'], max: number): Column {
  const x = obj(c, at);
  if (x.t !== t) fail(at, `expected a ${t} column, found ${describe(x.t)}`);
  const o = whole(x.o, `${at}.o`);
  const n = whole(x.n, `${at}.n`);
  if (o % 4 !== 0) fail(`${at}.o`, 'not aligned to 4 bytes');
  if (n > max) fail(at, `${fmt(n)} entries, more than the ${fmt(max)} a report holds`);
  const bytes = t === 'u16' ? 2 : 4;
  if (cols && o + n * bytes > cols.length) fail(at, 'column beyond the data');
  return { o, n, t };
}

function values(cols: Uint8Array, c: Column): Uint16Array | Uint32Array | Float32Array {
  const bytes = c.t === 'u16' ? 2 : 4;
  // copied: the columns' offsets are 4-aligned within the data, not within the inflated buffer
  const buf = cols.buffer.slice(cols.byteOffset + c.o, cols.byteOffset + c.o + c.n * bytes);
  return c.t === 'u16' ? new Uint16Array(buf) : c.t === 'u32' ? new Uint32Array(buf) : new Float32Array(buf);
}

function hex(v: unknown, at: string): bigint {
  if (typeof v !== 'string' || !HEX.test(v)) fail(at, `expected a hex address, found ${describe(v)}`);
  return BigInt(v);
}

/** Bytes and objects; `signed` for a pprof delta profile's (negative: what its window freed, as pprof keeps it). */
const counts = (v: unknown, at: string, signed = false): Counts => {
  const o = obj(v, at);
  const f = (x: unknown, w: string) => (signed ? num(x, w, -MAX_COUNT, MAX_COUNT) : size(x, w));
  return { bytes: f(o.bytes, `${at}.bytes`), objects: f(o.objects, `${at}.objects`) };
};

/** What step 2 read: the job's tables' sizes and each process's stack count. */
interface Declared {
  frames: Obj;
  stacks: Obj;
  nFrames: number;
  nStacks: number;
  processes: { p: Obj; stacks: number }[];
}

/**
 * Step 2: the counts the header declares (the job's frame and stack tables; per process its stacks, snapshots,
 * cells; summed), before anything is allocated for them or any column inflated; and where the last column ends.
 */
function checkCounts(h: Obj): { declared: Declared; end: number } {
  const total = { processStacks: 0, snapshots: 0, cells: 0 };
  let end = 0;
  let sum = 0;
  let endAt = 'processes';
  const col = (c: unknown, at: string, t: Column['t'], max: number): Column => {
    const x = columnOf(null, c, at, t, max);
    const bytes = x.n * (t === 'u16' ? 2 : 4);
    if (x.o + bytes > end) {
      end = x.o + bytes;
      endAt = at;
    }
    sum += bytes + ((4 - (bytes % 4)) % 4);
    return x;
  };
  const over = (what: keyof typeof total, at: string, n: number): void => {
    total[what] += n;
    if (total[what] > L[what])
      fail(at, `${fmt(total[what])} ${what} in the report so far, more than the ${fmt(L[what])} a report holds`);
  };
  // the job's frame table: one entry per frame in each of its columns
  const fr = obj(h.frames, 'frames');
  const nFrames = arr(fr.addresses, 'frames.addresses', L.addresses).length;
  arr(fr.symbols, 'frames.symbols', L.symbols);
  arr(fr.python, 'frames.python', L.pythonFrames);
  for (const k of ['leaf', 'caller', 'py'])
    if (col(fr[k], `frames.${k}`, 'u32', L.addresses).n !== nFrames)
      fail(`frames.${k}`, `expected ${fmt(nFrames)} entries, one per frame`);
  // the job's stack table
  const st = obj(h.stacks, 'stacks');
  const nStacks = col(st.offsets, 'stacks.offsets', 'u32', L.stacks + 1).n - 1;
  if (nStacks < 0) fail('stacks.offsets', 'empty');
  const frames = col(st.frames, 'stacks.frames', 'u32', L.frames);
  if (frames.n > nStacks * MAX_FRAMES_PER_STACK)
    fail(
      'stacks.frames',
      `${fmt(frames.n)} frames for ${fmt(nStacks)} stacks (at most ${MAX_FRAMES_PER_STACK} a stack)`,
    );
  if (col(st.allocatorDepth, 'stacks.allocatorDepth', 'u32', L.stacks).n !== nStacks)
    fail('stacks.allocatorDepth', `expected ${fmt(nStacks)} entries, one per stack`);
  const out: Declared['processes'] = [];
  arr(h.processes, 'processes', L.processes).forEach((v, i) => {
    const at = `processes[${i}]`;
    const p = obj(v, at);
    const stacks = col(p.stacks, `${at}.stacks`, 'u32', L.processStacks).n;
    over('processStacks', `${at}.stacks`, stacks + 1);
    over('snapshots', `${at}.snapshots`, arr(p.snapshots, `${at}.snapshots`, L.snapshots).length);
    over('cells', `${at}.cellBytes`, col(p.cellBytes, `${at}.cellBytes`, 'f32', L.cells).n);
    col(p.cellCounts, `${at}.cellCounts`, 'u32', L.processStacks + 1);
    const cellT = obj(p.cellSnapshots, `${at}.cellSnapshots`).t === 'u32' ? 'u32' : 'u16';
    col(p.cellSnapshots, `${at}.cellSnapshots`, cellT, L.cells);
    col(p.cellObjects, `${at}.cellObjects`, 'f32', L.cells);
    col(p.cellVar, `${at}.cellVar`, 'f32', L.cells);
    out.push({ p, stacks });
  });
  // the columns lie one after another (job-pack.ts): none ends past all of them together
  if (end > sum) fail(endAt, `the column ends at byte ${fmt(end)}, past the ${fmt(sum)} bytes all columns take`);
  return { declared: { frames: fr, stacks: st, nFrames, nStacks, processes: out }, end };
}

function symbolFrame(v: unknown, at: string): SymbolFrame {
  const o = obj(v, at);
  return {
    function: strOrNull(o.function, `${at}.function`, T),
    file: strOrNull(o.file, `${at}.file`, T),
    line: wholeOrNull(o.line, `${at}.line`, 2 ** 31),
    ...(o.column === undefined ? {} : { column: whole(o.column, `${at}.column`, 2 ** 31) }),
  };
}

function symbolEntry(v: unknown, at: string): SymbolizedAddress | undefined {
  if (v === null || v === undefined) return undefined;
  const o = obj(v, at);
  return {
    address: str(o.address, `${at}.address`, 64),
    module: strOrNull(o.module, `${at}.module`, T),
    modulePath: strOrNull(o.modulePath, `${at}.modulePath`, T),
    moduleOffset: strOrNull(o.moduleOffset, `${at}.moduleOffset`, 64),
    frames: arr(o.frames, `${at}.frames`, L.symbolFrames).map((f, k) => symbolFrame(f, `${at}.frames[${k}]`)),
    status: oneOf(o.status, `${at}.status`, STATUSES),
    binary: oneOfOrNull(o.binary, `${at}.binary`, BINARY),
    ...(o.python === undefined ? {} : { python: bool(o.python, `${at}.python`) }),
  };
}

/** One of the job's Python frame entries. */
function pyEntry(x: unknown, a: string): PyFrameEntry {
  const f = obj(x, a);
  return {
    addr: str(f.addr, `${a}.addr`, 64),
    function: str(f.function, `${a}.function`, T),
    file: str(f.file, `${a}.file`, T),
    line: wholeOrNull(f.line, `${a}.line`, 2 ** 31),
    firstLine: wholeOrNull(f.firstLine, `${a}.firstLine`, 2 ** 31),
    ...(f.native === undefined ? {} : { native: bool(f.native, `${a}.native`) }),
    ...(f.module === undefined ? {} : { module: strOrNull(f.module, `${a}.module`, T) }),
  };
}

/** A process's Python frame table: its fields, and `frames` (the job's entries its stacks use). */
function pythonFrames(v: unknown, at: string, frames: Map<string, PyFrameEntry>): PyFrameTable | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, at);
  const markers = new Map<string, PyMarkerKind>();
  arr(o.markers, `${at}.markers`, L.pythonFrames).forEach((x, k) => {
    const m = arr(x, `${at}.markers[${k}]`, 2);
    markers.set(str(m[0], `${at}.markers[${k}][0]`, 64), oneOf(m[1], `${at}.markers[${k}][1]`, MARKERS));
  });
  const tagHex = str(o.tagHex, `${at}.tagHex`, 4);
  if (!/^[0-9a-f]{4}$/.test(tagHex)) fail(`${at}.tagHex`, `expected 4 hex digits, found ${describe(tagHex)}`);
  return {
    version: whole(o.version, `${at}.version`, 1000),
    tagHex,
    kindShift: whole(o.kindShift, `${at}.kindShift`, 63),
    idShift: whole(o.idShift, `${at}.idShift`, 63),
    pid: wholeOrNull(o.pid, `${at}.pid`, 2 ** 32),
    python: strOrNull(o.python, `${at}.python`, 256),
    token: strOrNull(o.token, `${at}.token`, 256),
    granularity: oneOf(o.granularity, `${at}.granularity`, ['line', 'function'] as const),
    header: textRecord(o.header, `${at}.header`, 256),
    stats: numberRecord(o.stats, `${at}.stats`, 256),
    frames,
    markers,
    complete: bool(o.complete, `${at}.complete`),
    declaredCount: wholeOrNull(o.declaredCount, `${at}.declaredCount`),
    unknownRecords: whole(o.unknownRecords, `${at}.unknownRecords`),
    problems: arr(o.problems, `${at}.problems`, 100).map((x, k) => {
      const q = obj(x, `${at}.problems[${k}]`);
      return {
        line: whole(q.line, `${at}.problems[${k}].line`),
        message: str(q.message, `${at}.problems[${k}].message`, T),
      };
    }),
    source: oneOf(o.source, `${at}.source`, ['sidecar', 'dump', 'text'] as const),
  };
}

function maps(v: unknown, at: string): MapsEntry[] | null {
  if (v === null || v === undefined) return null;
  let prev = -1n;
  return arr(v, at, L.maps).map((x, i) => {
    const a = `${at}[${i}]`;
    const m = obj(x, a);
    const start = hex(m.start, `${a}.start`);
    const end = hex(m.end, `${a}.end`);
    if (end <= start) fail(`${a}.end`, 'not after its start');
    // lookups search the maps by start address
    if (start < prev) fail(`${a}.start`, 'before the previous mapping (the maps are sorted by address)');
    prev = start;
    return {
      start,
      end,
      offset: hex(m.offset, `${a}.offset`),
      perms: str(m.perms, `${a}.perms`, 8),
      dev: '00:00',
      inode: 0,
      path: str(m.path, `${a}.path`, T),
      deleted: false,
    };
  });
}

type SnapshotFields = Omit<
  Snapshot,
  'stackIds' | 'liveBytes' | 'liveObjects' | 'liveVarBytes' | 'accumBytes' | 'accumObjects' | 'threads'
>;

function snapshotFields(v: unknown, at: string): SnapshotFields {
  const x = obj(v, at);
  const h = obj(x.header, `${at}.header`);
  const tr = x.truncated === null || x.truncated === undefined ? null : obj(x.truncated, `${at}.truncated`);
  const format = oneOf(x.format, `${at}.format`, FORMATS);
  const signed = format === 'pprof';
  return {
    file: str(x.file, `${at}.file`, T),
    seq: wholeOrNull(x.seq, `${at}.seq`),
    trigger: oneOf(x.trigger, `${at}.trigger`, TRIGGERS),
    triggerSeq: wholeOrNull(x.triggerSeq, `${at}.triggerSeq`),
    mtimeMs: numOrNull(x.mtimeMs, `${at}.mtimeMs`, -MAX_COUNT, MAX_COUNT),
    ...(x.logTime !== undefined ? { logTime: logTime(x.logTime, `${at}.logTime`) } : {}),
    format,
    samplePeriod: num(x.samplePeriod, `${at}.samplePeriod`, 0, MAX_SAMPLE_PERIOD),
    live: counts(x.live, `${at}.live`, signed),
    accumulated: counts(x.accumulated, `${at}.accumulated`, signed),
    header: {
      live: counts(h.live, `${at}.header.live`, signed),
      accumulated: counts(h.accumulated, `${at}.header.accumulated`, signed),
    },
    hasAccumulated: bool(x.hasAccumulated, `${at}.hasAccumulated`),
    truncated: tr
      ? { byteOffset: whole(tr.byteOffset, `${at}.truncated.byteOffset`), line: whole(tr.line, `${at}.truncated.line`) }
      : null,
    // reports before this field were all of complete snapshots
    complete: x.complete === undefined ? true : bool(x.complete, `${at}.complete`),
    headerLiveBytes: sizeOrNull(x.headerLiveBytes, `${at}.headerLiveBytes`),
    mapsSource: oneOfOrNull(x.mapsSource, `${at}.mapsSource`, ['dump', 'file'] as const),
    context: checkDumpContext(x.context, `${at}.context`),
    ...(x.massif !== undefined ? { massif: massif(x.massif, `${at}.massif`) } : {}),
  };
}

/** A massif snapshot's own figures (older reports have none). */
function massif(v: unknown, at: string): NonNullable<Snapshot['massif']> {
  const o = obj(v, at);
  return {
    time: num(o.time, `${at}.time`, 0, MAX_COUNT),
    timeUnit: str(o.timeUnit, `${at}.timeUnit`, 16),
    heapExtraBytes: size(o.heapExtraBytes, `${at}.heapExtraBytes`),
    stacksBytes: size(o.stacksBytes, `${at}.stacksBytes`),
    ...(o.tree !== undefined ? { tree: oneOf(o.tree, `${at}.tree`, ['empty', 'detailed', 'peak'] as const) } : {}),
    // what the tree does not explain; below 0 where massif's tree sums past its total (--pages-as-heap)
    ...(o.unexplainedBytes !== undefined
      ? { unexplainedBytes: num(o.unexplainedBytes, `${at}.unexplainedBytes`, -MAX_COUNT, MAX_COUNT) }
      : {}),
    ...(o.cmd !== undefined ? { cmd: str(o.cmd, `${at}.cmd`, T) } : {}),
  };
}

/** A PyTorch device's figures and its (cut) trace, spans and OOMs (older reports have none). */
function gpu(v: unknown, at: string, snapshots: number): GpuSeriesInfo {
  const o = obj(v, at);
  const tl = obj(o.timeline, `${at}.timeline`);
  const column = (k: 'timeMs' | 'allocated' | 'reserved' | 'cached'): number[] =>
    arr(tl[k], `${at}.timeline.${k}`, GPU_REPORT_POINTS * 2 + 1).map((x, i) =>
      k === 'timeMs'
        ? num(x, `${at}.timeline.${k}[${i}]`, -MAX_COUNT, MAX_COUNT)
        : size(x, `${at}.timeline.${k}[${i}]`),
    );
  const timeline = {
    timeMs: column('timeMs'),
    allocated: column('allocated'),
    reserved: column('reserved'),
    cached: column('cached'),
  };
  const n = timeline.timeMs.length;
  if (timeline.allocated.length !== n || timeline.reserved.length !== n || timeline.cached.length !== n)
    fail(`${at}.timeline`, 'columns of different lengths');
  for (let i = 1; i < n; i++)
    if (timeline.timeMs[i] < timeline.timeMs[i - 1]) fail(`${at}.timeline.timeMs[${i}]`, 'before the one before it');
  const peak = o.peakSnapshot === undefined ? undefined : whole(o.peakSnapshot, `${at}.peakSnapshot`);
  if (peak !== undefined && peak >= snapshots) fail(`${at}.peakSnapshot`, `not one of the ${snapshots} snapshots`);
  return {
    device: whole(o.device, `${at}.device`, 1 << 16),
    reservedBytes: size(o.reservedBytes, `${at}.reservedBytes`),
    allocatedBytes: size(o.allocatedBytes, `${at}.allocatedBytes`),
    pendingFreeBytes: size(o.pendingFreeBytes, `${at}.pendingFreeBytes`),
    inactiveBytes: size(o.inactiveBytes, `${at}.inactiveBytes`),
    segments: whole(o.segments, `${at}.segments`),
    timeline,
    ooms: arr(o.ooms, `${at}.ooms`, GPU_REPORT_EVENTS).map((x, i) => {
      const e = obj(x, `${at}.ooms[${i}]`);
      return {
        timeMs: numOrNull(e.timeMs, `${at}.ooms[${i}].timeMs`, -MAX_COUNT, MAX_COUNT),
        size: size(e.size, `${at}.ooms[${i}].size`),
        deviceFree: size(e.deviceFree, `${at}.ooms[${i}].deviceFree`),
      };
    }),
    spans: arr(o.spans, `${at}.spans`, GPU_REPORT_EVENTS).map((x, i) => {
      const e = obj(x, `${at}.spans[${i}]`);
      const startMs = num(e.startMs, `${at}.spans[${i}].startMs`, -MAX_COUNT, MAX_COUNT);
      const endMs = numOrNull(e.endMs, `${at}.spans[${i}].endMs`, startMs, MAX_COUNT);
      return { name: str(e.name, `${at}.spans[${i}].name`, T), startMs, endMs };
    }),
    settings: textRecord(o.settings ?? {}, `${at}.settings`, 1000),
    ...(o.source !== undefined ? { source: oneOf(o.source, `${at}.source`, ['snapshot', 'segments'] as const) } : {}),
    ...(peak !== undefined ? { peakSnapshot: peak } : {}),
  };
}

/** The job's frame and stack tables, every entry checked (step 3, before any process). */
interface JobTables {
  hex: string[];
  leaf: (SymbolizedAddress | undefined)[];
  caller: (SymbolizedAddress | undefined)[];
  py: (PyFrameEntry | undefined)[];
  offsets: Uint32Array;
  frames: Uint32Array;
  depth: Uint32Array;
}

function jobTables(d: Declared, cols: Uint8Array): JobTables {
  const fr = d.frames;
  const hexes = (fr.addresses as unknown[]).map((h, i) => {
    hex(h, `frames.addresses[${i}]`);
    return h as string;
  });
  const symbols = (fr.symbols as unknown[]).map((x, i) => symbolEntry(x, `frames.symbols[${i}]`) ?? null);
  const python = (fr.python as unknown[]).map((x, i) => pyEntry(x, `frames.python[${i}]`));
  const ref = <E>(k: string, list: (E | null)[]): (E | undefined)[] => {
    const v = values(cols, columnOf(cols, fr[k], `frames.${k}`, 'u32', L.addresses));
    return Array.from(v, (x, i) => {
      if (x > list.length) fail(`frames.${k}[${i}]`, `expected an entry up to ${list.length}`);
      if (x > 0 && list[x - 1] === null) fail(`frames.${k}[${i}]`, `entry ${x - 1} is null`);
      return x === 0 ? undefined : (list[x - 1] ?? undefined);
    });
  };
  const leaf = ref('leaf', symbols);
  const caller = ref('caller', symbols);
  const py = ref('py', python);
  const st = d.stacks;
  const offsets = values(cols, columnOf(cols, st.offsets, 'stacks.offsets', 'u32', L.stacks + 1));
  const frames = values(cols, columnOf(cols, st.frames, 'stacks.frames', 'u32', L.frames));
  const depth = values(cols, columnOf(cols, st.allocatorDepth, 'stacks.allocatorDepth', 'u32', L.stacks));
  if (offsets[0] !== 0) fail('stacks.offsets[0]', 'expected 0');
  for (let i = 1; i < offsets.length; i++) {
    if (offsets[i] < offsets[i - 1] || offsets[i] > frames.length) fail(`stacks.offsets[${i}]`, 'out of order');
    if (offsets[i] - offsets[i - 1] > MAX_FRAMES_PER_STACK)
      fail(
        `stacks.offsets[${i}]`,
        `a stack of ${fmt(offsets[i] - offsets[i - 1])} frames (at most ${MAX_FRAMES_PER_STACK})`,
      );
    if (depth[i - 1] > offsets[i] - offsets[i - 1])
      fail(`stacks.allocatorDepth[${i - 1}]`, `${depth[i - 1]} is outside 0…${offsets[i] - offsets[i - 1]}`);
  }
  if (offsets[d.nStacks] !== frames.length) fail(`stacks.offsets[${d.nStacks}]`, `expected ${frames.length}`);
  for (let i = 0; i < frames.length; i++)
    if (frames[i] >= d.nFrames) fail(`stacks.frames[${i}]`, `expected an index below ${d.nFrames}`);
  return {
    hex: hexes,
    leaf,
    caller,
    py,
    offsets: offsets as Uint32Array,
    frames: frames as Uint32Array,
    depth: depth as Uint32Array,
  };
}

/** Step 3: one process, every field checked, into the model (its stacks and addresses from the job's tables). */
function unpackProcess(
  { p, stacks: nKept }: Declared['processes'][number],
  t: JobTables,
  jobStacks: Uint32Array,
  cols: Uint8Array,
  at: string,
  stamp: { gen: number; seen: Uint32Array; local: Uint32Array },
): ProcessSeries {
  const key = str(p.key, `${at}.key`, T);
  const otherStacks = whole(p.otherStacks, `${at}.otherStacks`);
  if (p.trimmedStacks !== undefined) whole(p.trimmedStacks, `${at}.trimmedStacks`, otherStacks);
  const count = nKept + (otherStacks > 0 ? 1 : 0);
  // the process's addresses: the job's frames its stacks use, in the order they are first used
  const gen = ++stamp.gen;
  const addresses: string[] = [];
  const source: number[] = [];
  const index = new Map<string, number>();
  // sized once (a report of 1,000 processes lays out millions of frames: growing arrays left most of it to the GC)
  let laid = otherStacks > 0 ? 1 : 0;
  for (let k = 0; k < nKept; k++) laid += t.offsets[jobStacks[k] + 1] - t.offsets[jobStacks[k]];
  const offsets: number[] = new Array<number>(count + 1);
  const frames = new Uint32Array(laid);
  const allocatorDepth: number[] = new Array<number>(count);
  offsets[0] = 0;
  let at0 = 0;
  for (let k = 0; k < nKept; k++) {
    const s = jobStacks[k];
    for (let f = t.offsets[s]; f < t.offsets[s + 1]; f++) {
      const fr = t.frames[f];
      if (stamp.seen[fr] !== gen) {
        stamp.seen[fr] = gen;
        const h = t.hex[fr];
        // one process gives an address one set of symbols: two frames of one address cannot both be its
        if (index.has(h))
          fail(`${at}.stacks[${k}]`, `two frames of address ${h} (frames ${source[index.get(h)!]} and ${fr})`);
        stamp.local[fr] = addresses.length;
        index.set(h, addresses.length);
        addresses.push(h);
        source.push(fr);
      }
      frames[at0++] = stamp.local[fr];
    }
    offsets[k + 1] = at0;
    allocatorDepth[k] = t.depth[s];
  }
  let otherAddr = -1;
  if (otherStacks > 0) {
    if (index.has(OTHER_ADDRESS)) fail(`${at}.stacks`, `the address ${OTHER_ADDRESS} is the "other" stack's own`);
    otherAddr = addresses.length;
    index.set(OTHER_ADDRESS, otherAddr);
    addresses.push(OTHER_ADDRESS);
    source.push(-1);
    frames[at0++] = otherAddr;
    offsets[nKept + 1] = at0;
    allocatorDepth[nKept] = 0;
  }
  const nAddr = addresses.length;

  const perStack = values(cols, columnOf(cols, p.cellCounts, `${at}.cellCounts`, 'u32', L.processStacks + 1));
  if (perStack.length !== count) fail(`${at}.cellCounts`, `expected ${count} entries`);
  const cellT = obj(p.cellSnapshots, `${at}.cellSnapshots`).t === 'u32' ? 'u32' : 'u16';
  const snapCol = values(cols, columnOf(cols, p.cellSnapshots, `${at}.cellSnapshots`, cellT, L.cells));
  const bytes = values(cols, columnOf(cols, p.cellBytes, `${at}.cellBytes`, 'f32', L.cells));
  const objects = values(cols, columnOf(cols, p.cellObjects, `${at}.cellObjects`, 'f32', L.cells));
  const variance = values(cols, columnOf(cols, p.cellVar, `${at}.cellVar`, 'f32', L.cells));
  let cells = 0;
  for (let i = 0; i < perStack.length; i++) cells += perStack[i];
  if (snapCol.length !== cells || bytes.length !== cells || objects.length !== cells || variance.length !== cells)
    fail(`${at}.cells`, `columns of different lengths (the stacks declare ${fmt(cells)} cells)`);

  const fields = (p.snapshots as unknown[]).map((x, si) => snapshotFields(x, `${at}.snapshots[${si}]`));
  const n = fields.length;
  // where each cell goes (snapshot index), and how many each snapshot gets: two passes, typed arrays only
  const cellSnap = new Uint32Array(cells);
  const inSnap = new Uint32Array(n);
  let c = 0;
  for (let s = 0; s < count; s++) {
    let si = 0;
    for (let k = 0; k < perStack[s]; k++, c++) {
      si += snapCol[c];
      if (si >= n) fail(`${at}.cellSnapshots[${c}]`, `expected a snapshot below ${n}`);
      if (k > 0 && snapCol[c] === 0) fail(`${at}.cellSnapshots[${c}]`, 'a second cell of the same stack and snapshot');
      const b = bytes[c];
      const o = objects[c];
      const v = variance[c];
      // float32 holds NaN, ±Infinity and ±3.4e38: none is a heap figure (a pprof delta profile's may be negative)
      const lo = fields[si].format === 'pprof' ? -MAX_COUNT : 0;
      if (!(b >= lo && b <= MAX_COUNT)) fail(`${at}.cellBytes[${c}]`, `${describe(b)} is not a size`);
      if (!(o >= lo && o <= MAX_COUNT)) fail(`${at}.cellObjects[${c}]`, `${describe(o)} is not a count`);
      if (!(v >= 0 && v < Infinity)) fail(`${at}.cellVar[${c}]`, `${describe(v)} is not a variance`);
      // every allocation is at least one byte (float32 rounds both alike)
      if (b >= 0 && o > b * (1 + 1e-6) + 1e-3) fail(`${at}.cellObjects[${c}]`, `${o} objects in ${b} bytes`);
      cellSnap[c] = si;
      inSnap[si]++;
    }
  }
  const snapshots: Snapshot[] = fields.map((f, si) => ({
    ...f,
    threads: [],
    stackIds: new Uint32Array(inSnap[si]),
    liveBytes: new Float64Array(inSnap[si]),
    liveObjects: new Float64Array(inSnap[si]),
    liveVarBytes: new Float64Array(inSnap[si]),
    accumBytes: null,
    accumObjects: null,
  }));
  const fill = new Uint32Array(n);
  c = 0;
  for (let s = 0; s < count; s++)
    for (let k = 0; k < perStack[s]; k++, c++) {
      const snap = snapshots[cellSnap[c]];
      const j = fill[cellSnap[c]]++;
      snap.stackIds[j] = s;
      snap.liveBytes[j] = bytes[c];
      snap.liveObjects[j] = objects[c];
      snap.liveVarBytes[j] = variance[c];
    }

  const symbolized = bool(p.symbolized, `${at}.symbolized`);
  let symbols: SymbolTable | null = null;
  if (symbolized || otherAddr >= 0) {
    const leaf: (SymbolizedAddress | undefined)[] = new Array(nAddr);
    const caller: (SymbolizedAddress | undefined)[] = new Array(nAddr);
    if (symbolized)
      source.forEach((fr, i) => {
        if (fr < 0) return;
        leaf[i] = t.leaf[fr];
        caller[i] = t.caller[fr];
      });
    if (otherAddr >= 0) {
      const entry: SymbolizedAddress = {
        address: OTHER_ADDRESS,
        module: null,
        modulePath: null,
        moduleOffset: null,
        frames: [{ function: `(${otherStacks.toLocaleString('en-US')} other stacks)`, file: null, line: null }],
        status: 'symbol-only',
        binary: null,
      };
      leaf[otherAddr] = entry;
      caller[otherAddr] = entry;
    }
    symbols = { leaf, caller, modules: [] };
  }
  // the Python frames of the job's frames this process uses
  const pyFrames = new Map<string, PyFrameEntry>();
  for (const fr of source) {
    const e = fr < 0 ? undefined : t.py[fr];
    if (e) pyFrames.set(e.addr, e);
  }
  const base = whole(p.base, `${at}.base`);
  const target = whole(p.target, `${at}.target`);
  if (n > 0 && (base >= n || target >= n))
    fail(`${at}.base`, `base ${base} or target ${target} is not one of the ${n} snapshots`);
  whole(p.stackCount, `${at}.stackCount`);
  arr(p.sourceIds, `${at}.sourceIds`, nKept).forEach((id, i) => whole(id, `${at}.sourceIds[${i}]`));
  // older reports have no host: the context's hostname still names it (core/model/process-host.ts)
  const host = p.host === undefined ? null : strOrNull(p.host, `${at}.host`, 256);
  return {
    key,
    pid: wholeOrNull(p.pid, `${at}.pid`, 2 ** 32),
    pidNamespace: wholeOrNull(p.pidNamespace, `${at}.pidNamespace`),
    ...(host !== null ? { host } : {}),
    prefix: str(p.prefix, `${at}.prefix`, T),
    snapshots,
    stacks: { count, offsets, frames, allocatorDepth },
    addresses: { hex: addresses, index },
    maps: maps(p.maps, `${at}.maps`),
    endedWithoutFinalDump: bool(p.endedWithoutFinalDump, `${at}.endedWithoutFinalDump`),
    symbols,
    pythonFrames: pythonFrames(p.pythonFrames, `${at}.pythonFrames`, pyFrames),
    ...(p.role !== undefined ? { role: role(p.role, `${at}.role`) } : {}),
    ...(p.gpu !== undefined ? { gpu: gpu(p.gpu, `${at}.gpu`, n) } : {}),
  };
}

/** The time a log gave a dump (older reports have none). */
function logTime(v: unknown, at: string): { ms: number; file: string; line: number } {
  const o = obj(v, at);
  return {
    ms: num(o.ms, `${at}.ms`, -MAX_COUNT, MAX_COUNT),
    file: str(o.file, `${at}.file`, T),
    line: whole(o.line, `${at}.line`),
  };
}

/** The role a job log gave a process (older reports have none). */
function role(v: unknown, at: string): { name: string; file: string; line: number } {
  const o = obj(v, at);
  return { name: str(o.name, `${at}.name`, T), file: str(o.file, `${at}.file`, T), line: whole(o.line, `${at}.line`) };
}

/** The header fields the page reads besides the processes (notes and session: core/notes/validate.ts). */
function checkHeader(h: PackedJob): void {
  const o = h as unknown as Obj;
  str(o.title, 'title', T);
  str(o.createdAt, 'createdAt', 64);
  str(o.generator, 'generator', 256);
  const s = obj(o.sanitized, 'sanitized');
  bool(s.paths, 'sanitized.paths');
  bool(s.maps, 'sanitized.maps');
  const opt = obj(o.options, 'options');
  whole(opt.topN, 'options.topN');
  str(opt.stackMode, 'options.stackMode', 64);
  bool(opt.showAllocator, 'options.showAllocator');
  bool(opt.symbolized, 'options.symbolized');
  whole(o.warningsOmitted ?? 0, 'warningsOmitted');
  if (o.leftOut !== undefined) {
    const l = obj(o.leftOut, 'leftOut');
    str(l.reason, 'leftOut.reason', T);
    whole(l.stacks, 'leftOut.stacks');
    whole(l.processesTrimmed, 'leftOut.processesTrimmed');
    whole(l.processes, 'leftOut.processes');
  }
}

/** A payload back into a Job the app's analysis runs on, its processes with their symbols. */
export function unpackJob(deflated: Uint8Array, limits: ReportLimits = REPORT_LIMITS): { header: PackedJob; job: Job } {
  return withLimits(limits, () => unpackJobIn(deflated));
}

function unpackJobIn(deflated: Uint8Array): { header: PackedJob; job: Job } {
  try {
    const { job: header, cols, declared } = readPayloadIn(deflated);
    checkHeader(header);
    const t = jobTables(declared, cols);
    // each process's stacks: ids in the job's table, and what the page lays out for them, bounded before any is
    const lists = declared.processes.map(({ p }, i) => {
      const at = `processes[${i}].stacks`;
      const ids = values(cols, columnOf(cols, p.stacks, at, 'u32', L.processStacks)) as Uint32Array;
      return ids;
    });
    let laid = 0;
    lists.forEach((ids, i) => {
      for (let k = 0; k < ids.length; k++) {
        if (ids[k] >= declared.nStacks)
          fail(`processes[${i}].stacks[${k}]`, `expected an index below ${declared.nStacks}`);
        laid += t.offsets[ids[k] + 1] - t.offsets[ids[k]];
      }
      laid++;
      if (laid > L.processFrames)
        fail(
          `processes[${i}].stacks`,
          `${fmt(laid)} processFrames in the report so far, more than the ${fmt(L.processFrames)} a report holds`,
        );
    });
    const stamp = { gen: 0, seen: new Uint32Array(declared.nFrames), local: new Uint32Array(declared.nFrames) };
    const out = declared.processes.map((d, i) => unpackProcess(d, t, lists[i], cols, `processes[${i}]`, stamp));
    const warnings = arr(header.warnings ?? [], 'warnings', L.warnings).map((v, i) => {
      const w = obj(v, `warnings[${i}]`);
      return {
        file: str(w.file, `warnings[${i}].file`, T),
        message: str(w.message, `warnings[${i}].message`, T),
        ...(w.line === undefined ? {} : { line: whole(w.line, `warnings[${i}].line`) }),
      };
    });
    // what the writer left out to fit the bounds is said where the job's warnings are shown too
    if (header.leftOut) warnings.unshift({ file: 'report', message: `left out: ${header.leftOut.reason}` });
    return { header, job: { processes: out, warnings, ignoredFiles: [] } };
  } catch (e) {
    if (e instanceof ReportError) throw e;
    if (e instanceof ShapeError) throw damaged(e.at, e.what);
    // a shape the checks above did not foresee is still damage, named, never a crash of the reader
    throw new ReportError(`the report's data is damaged: ${e instanceof Error ? e.message : String(e)}`);
  }
}
