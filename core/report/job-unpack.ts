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
  REPORT_FORMAT,
  REPORT_VERSION,
  type Column,
  type PackedJob,
} from './job-pack.js';

/**
 * What a report may hold. A real report keeps a few hundred stacks per process (build-report.ts: top-N by four
 * rankings plus the noted ones), so the counts leave room for thousands of processes and snapshots; the
 * inflation ratio is what keeps the cost of any report proportional to its size (payloads measured inflate
 * 3–5×, see report.test.ts; deflate's ceiling is 1032×, reached only by runs such as zeros).
 */
export const REPORT_LIMITS = {
  inflateRatio: 32,
  /** inflated size always allowed, whatever the ratio */
  minInflatedBytes: 8 << 20,
  maxInflatedBytes: 1 << 30,
  /** the JSON header (snapshots, symbols, notes); the columns follow it */
  headerBytes: 256 << 20,
  processes: 10_000,
  /** summed over the report's processes */
  stacks: 1_000_000,
  frames: 4_000_000,
  snapshots: 200_000,
  cells: 4_000_000,
  addresses: 2_000_000,
  /** per process */
  maps: 100_000,
  /** per symbol entry: inlined frames */
  symbolFrames: 256,
  pythonFrames: 1_000_000,
  warnings: 10_000,
  /** the longest text field (a path, a function name) */
  textChars: 16_384,
} as const;

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
          `it inflates past ${fmt(limit)} bytes from ${fmt(deflated.length)} (at most ${REPORT_LIMITS.inflateRatio}× its size, and ${fmt(REPORT_LIMITS.maxInflatedBytes)} bytes)`,
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
        if (len > REPORT_LIMITS.headerBytes)
          fail('payload', `a header of ${fmt(len)} bytes, more than ${fmt(REPORT_LIMITS.headerBytes)}`);
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
  return Math.min(
    REPORT_LIMITS.maxInflatedBytes,
    Math.max(REPORT_LIMITS.minInflatedBytes, deflatedBytes * REPORT_LIMITS.inflateRatio),
  );
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
export function readPayload(deflated: Uint8Array): { job: PackedJob; cols: Uint8Array; declared: Declared[] } {
  let job: PackedJob | null = null;
  let declared: Declared[] = [];
  let colsAt = 0;
  const raw = inflateBounded(deflated, (head, len) => {
    const h = parseHeader(head, len);
    job = h;
    const d = checkCounts(arr(h.processes, 'processes', REPORT_LIMITS.processes));
    declared = d.declared;
    colsAt = 4 + len + ((4 - ((4 + len) % 4)) % 4);
    return colsAt + d.end;
  });
  if (job === null) fail('payload', 'no header');
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

interface Declared {
  p: Obj;
  stacks: number;
}

/**
 * Step 2: the counts every process declares, summed, before anything is allocated for them or any column
 * inflated; and where the last column ends.
 */
function checkCounts(processes: unknown[]): { declared: Declared[]; end: number } {
  const total = { stacks: 0, frames: 0, snapshots: 0, cells: 0, addresses: 0, pythonFrames: 0 };
  const out: Declared[] = [];
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
    if (total[what] > REPORT_LIMITS[what])
      fail(
        at,
        `${fmt(total[what])} ${what} in the report so far, more than the ${fmt(REPORT_LIMITS[what])} a report holds`,
      );
  };
  processes.forEach((v, i) => {
    const at = `processes[${i}]`;
    const p = obj(v, at);
    const offsets = col(p.offsets, `${at}.offsets`, 'u32', REPORT_LIMITS.stacks + 1);
    const stacks = offsets.n - 1;
    if (stacks < 0) fail(`${at}.offsets`, 'empty');
    over('stacks', `${at}.offsets`, stacks);
    const frames = col(p.frames, `${at}.frames`, 'u32', REPORT_LIMITS.frames);
    if (frames.n > stacks * MAX_FRAMES_PER_STACK)
      fail(
        `${at}.frames`,
        `${fmt(frames.n)} frames for ${fmt(stacks)} stacks (at most ${MAX_FRAMES_PER_STACK} a stack)`,
      );
    over('frames', `${at}.frames`, frames.n);
    over('snapshots', `${at}.snapshots`, arr(p.snapshots, `${at}.snapshots`, REPORT_LIMITS.snapshots).length);
    over('cells', `${at}.cellBytes`, col(p.cellBytes, `${at}.cellBytes`, 'f32', REPORT_LIMITS.cells).n);
    col(p.cellCounts, `${at}.cellCounts`, 'u32', REPORT_LIMITS.stacks);
    const cellT = obj(p.cellSnapshots, `${at}.cellSnapshots`).t === 'u32' ? 'u32' : 'u16';
    col(p.cellSnapshots, `${at}.cellSnapshots`, cellT, REPORT_LIMITS.cells);
    col(p.cellObjects, `${at}.cellObjects`, 'f32', REPORT_LIMITS.cells);
    col(p.cellVar, `${at}.cellVar`, 'f32', REPORT_LIMITS.cells);
    over('addresses', `${at}.addresses`, arr(p.addresses, `${at}.addresses`, REPORT_LIMITS.addresses).length);
    const py = p.pythonFrames;
    if (py !== null && py !== undefined)
      over(
        'pythonFrames',
        `${at}.pythonFrames.frames`,
        arr(obj(py, `${at}.pythonFrames`).frames, `${at}.pythonFrames.frames`, REPORT_LIMITS.pythonFrames).length,
      );
    out.push({ p, stacks });
  });
  // the columns lie one after another (job-pack.ts): none ends past all of them together
  if (end > sum) fail(endAt, `the column ends at byte ${fmt(end)}, past the ${fmt(sum)} bytes all columns take`);
  return { declared: out, end };
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
    frames: arr(o.frames, `${at}.frames`, REPORT_LIMITS.symbolFrames).map((f, k) =>
      symbolFrame(f, `${at}.frames[${k}]`),
    ),
    status: oneOf(o.status, `${at}.status`, STATUSES),
    binary: oneOfOrNull(o.binary, `${at}.binary`, BINARY),
    ...(o.python === undefined ? {} : { python: bool(o.python, `${at}.python`) }),
  };
}

function pythonFrames(v: unknown, at: string): PyFrameTable | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, at);
  const frames = new Map<string, PyFrameEntry>();
  arr(o.frames, `${at}.frames`, REPORT_LIMITS.pythonFrames).forEach((x, k) => {
    const a = `${at}.frames[${k}]`;
    const f = obj(x, a);
    const addr = str(f.addr, `${a}.addr`, 64);
    frames.set(addr, {
      addr,
      function: str(f.function, `${a}.function`, T),
      file: str(f.file, `${a}.file`, T),
      line: wholeOrNull(f.line, `${a}.line`, 2 ** 31),
      firstLine: wholeOrNull(f.firstLine, `${a}.firstLine`, 2 ** 31),
      ...(f.native === undefined ? {} : { native: bool(f.native, `${a}.native`) }),
      ...(f.module === undefined ? {} : { module: strOrNull(f.module, `${a}.module`, T) }),
    });
  });
  const markers = new Map<string, PyMarkerKind>();
  arr(o.markers, `${at}.markers`, REPORT_LIMITS.pythonFrames).forEach((x, k) => {
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
  return arr(v, at, REPORT_LIMITS.maps).map((x, i) => {
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

/** Step 3: one process, every field checked, into the model. */
function unpackProcess({ p, stacks: count }: Declared, cols: Uint8Array, at: string): ProcessSeries {
  const key = str(p.key, `${at}.key`, T);
  const addresses = (p.addresses as unknown[]).map((h, i) => {
    hex(h, `${at}.addresses[${i}]`);
    return h as string;
  });
  const nAddr = addresses.length;
  const index = new Map<string, number>();
  addresses.forEach((h, i) => {
    if (index.has(h)) fail(`${at}.addresses[${i}]`, `${h} repeats`);
    index.set(h, i);
  });
  const offsets = values(cols, columnOf(cols, p.offsets, `${at}.offsets`, 'u32', REPORT_LIMITS.stacks + 1));
  const frames = values(cols, columnOf(cols, p.frames, `${at}.frames`, 'u32', REPORT_LIMITS.frames));
  if (offsets[0] !== 0) fail(`${at}.offsets[0]`, 'expected 0');
  for (let i = 1; i < offsets.length; i++) {
    if (offsets[i] < offsets[i - 1] || offsets[i] > frames.length) fail(`${at}.offsets[${i}]`, 'out of order');
    if (offsets[i] - offsets[i - 1] > MAX_FRAMES_PER_STACK)
      fail(
        `${at}.offsets[${i}]`,
        `a stack of ${fmt(offsets[i] - offsets[i - 1])} frames (at most ${MAX_FRAMES_PER_STACK})`,
      );
  }
  if (offsets[count] !== frames.length) fail(`${at}.offsets[${count}]`, `expected ${frames.length}`);
  for (let i = 0; i < frames.length; i++)
    if (frames[i] >= nAddr) fail(`${at}.frames[${i}]`, `expected an index below ${nAddr}`);
  const depths = arr(p.allocatorDepth, `${at}.allocatorDepth`, count);
  if (depths.length !== count) fail(`${at}.allocatorDepth`, `expected ${count} entries`);
  const allocatorDepth = depths.map((d, i) => whole(d, `${at}.allocatorDepth[${i}]`, offsets[i + 1] - offsets[i]));

  const perStack = values(cols, columnOf(cols, p.cellCounts, `${at}.cellCounts`, 'u32', REPORT_LIMITS.stacks));
  if (perStack.length !== count) fail(`${at}.cellCounts`, `expected ${count} entries`);
  const cellT = obj(p.cellSnapshots, `${at}.cellSnapshots`).t === 'u32' ? 'u32' : 'u16';
  const snapCol = values(cols, columnOf(cols, p.cellSnapshots, `${at}.cellSnapshots`, cellT, REPORT_LIMITS.cells));
  const bytes = values(cols, columnOf(cols, p.cellBytes, `${at}.cellBytes`, 'f32', REPORT_LIMITS.cells));
  const objects = values(cols, columnOf(cols, p.cellObjects, `${at}.cellObjects`, 'f32', REPORT_LIMITS.cells));
  const variance = values(cols, columnOf(cols, p.cellVar, `${at}.cellVar`, 'f32', REPORT_LIMITS.cells));
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

  let symbols: SymbolTable | null = null;
  if (p.symbols !== null && p.symbols !== undefined) {
    const entries = arr(p.symbols, `${at}.symbols`, nAddr);
    if (entries.length !== nAddr) fail(`${at}.symbols`, `expected ${nAddr} entries`);
    const leaf: (SymbolizedAddress | undefined)[] = [];
    const caller: (SymbolizedAddress | undefined)[] = [];
    entries.forEach((e, i) => {
      const pair = arr(e, `${at}.symbols[${i}]`, 2);
      leaf.push(symbolEntry(pair[0], `${at}.symbols[${i}][0]`));
      caller.push(symbolEntry(pair[1], `${at}.symbols[${i}][1]`));
    });
    symbols = { leaf, caller, modules: [] };
  }
  const base = whole(p.base, `${at}.base`);
  const target = whole(p.target, `${at}.target`);
  if (n > 0 && (base >= n || target >= n))
    fail(`${at}.base`, `base ${base} or target ${target} is not one of the ${n} snapshots`);
  whole(p.stackCount, `${at}.stackCount`);
  arr(p.sourceIds, `${at}.sourceIds`, count).forEach((id, i) => whole(id, `${at}.sourceIds[${i}]`));
  // older reports have no host: the context's hostname still names it (core/model/process-host.ts)
  const host = p.host === undefined ? null : strOrNull(p.host, `${at}.host`, 256);
  return {
    key,
    pid: wholeOrNull(p.pid, `${at}.pid`, 2 ** 32),
    pidNamespace: wholeOrNull(p.pidNamespace, `${at}.pidNamespace`),
    ...(host !== null ? { host } : {}),
    prefix: str(p.prefix, `${at}.prefix`, T),
    snapshots,
    stacks: { count, offsets: Array.from(offsets), frames: Array.from(frames), allocatorDepth },
    addresses: { hex: addresses, index },
    maps: maps(p.maps, `${at}.maps`),
    endedWithoutFinalDump: bool(p.endedWithoutFinalDump, `${at}.endedWithoutFinalDump`),
    symbols,
    pythonFrames: pythonFrames(p.pythonFrames, `${at}.pythonFrames`),
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
}

/** A payload back into a Job the app's analysis runs on, its processes with their symbols. */
export function unpackJob(deflated: Uint8Array): { header: PackedJob; job: Job } {
  try {
    const { job: header, cols, declared } = readPayload(deflated);
    checkHeader(header);
    const out = declared.map((d, i) => unpackProcess(d, cols, `processes[${i}]`));
    const warnings = arr(header.warnings ?? [], 'warnings', REPORT_LIMITS.warnings).map((v, i) => {
      const w = obj(v, `warnings[${i}]`);
      return {
        file: str(w.file, `warnings[${i}].file`, T),
        message: str(w.message, `warnings[${i}].message`, T),
        ...(w.line === undefined ? {} : { line: whole(w.line, `warnings[${i}].line`) }),
      };
    });
    return { header, job: { processes: out, warnings, ignoredFiles: [] } };
  } catch (e) {
    if (e instanceof ReportError) throw e;
    if (e instanceof ShapeError) throw damaged(e.at, e.what);
    // a shape the checks above did not foresee is still damage, named, never a crash of the reader
    throw new ReportError(`the report's data is damaged: ${e instanceof Error ? e.message : String(e)}`);
  }
}
