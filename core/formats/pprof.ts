// pprof's protobuf profiles (profile.proto: what `go tool pprof`, Go's runtime/pprof with debug=0, pyroscope,
// Parca and the jemalloc_pprof crate write), decoded by pprof-format (Datadog's, the project's dependency).
// The top-level framing is walked here first, so a bad varint or a length past the end is a warning with its
// byte offset and the fields before it are still read; pprof-format only ever sees whole fields.
//
// Heap sample types map onto the model's columns: inuse_space/inuse_objects (or space/objects, gperftools'
// converted profiles) are live, alloc_space/alloc_objects accumulated; every other declared type travels beside
// them per record (DumpRecord.extra), selectable by its name like the four (core/model/sample-type.ts). Values are as written: Go's runtime
// scales its samples before writing (runtime/pprof protomem.go), so no unsampling is applied.

import { Profile } from 'pprof-format';
import type { DumpRecord, ParsedDumpInfo, ParseProblem } from './heap-dump.js';
import type { ProfileFrame } from './dump-types.js';
import { dateProblem, MAX_FRAMES_PER_STACK, numberText } from './limits.js';

/** Largest decoded profile held in memory (it is decoded whole): far beyond real heap profiles (a few MB). */
export const MAX_PPROF_BYTES = 512 * 1024 * 1024;

export interface PprofSampleType {
  type: string;
  unit: string;
}

export interface PprofMapping {
  id: number;
  start: bigint;
  limit: bigint;
  offset: bigint;
  file: string;
  buildId: string;
}

export interface PprofLocation {
  id: number;
  address: bigint;
  mappingId: number;
  /** innermost inlined frame first, as profile.proto orders Location.line */
  frames: ProfileFrame[];
}

export interface PprofSample {
  /** location ids, leaf first */
  locationIds: number[];
  values: number[];
  labels: { key: string; str: string | null; num: number | null; unit: string | null }[];
}

export interface PprofProfile {
  sampleTypes: PprofSampleType[];
  /** the type the file asks viewers to show first (default_sample_type), else null (pprof then shows the last) */
  defaultSampleType: string | null;
  samples: PprofSample[];
  locations: Map<number, PprofLocation>;
  mappings: Map<number, PprofMapping>;
  timeNanos: number | null;
  durationNanos: number | null;
  periodType: PprofSampleType | null;
  period: number;
  comments: string[];
}

export interface PprofResult {
  profile: PprofProfile | null;
  problems: ParseProblem[];
}

const PROFILE_LEN_FIELDS = new Set([1, 2, 3, 4, 5, 6, 11, 13]);
const PROFILE_VARINT_FIELDS = new Set([7, 8, 9, 10, 12, 13, 14, 15]);

/** Reads a varint at `i`; null when it runs past `end` or past 10 bytes. */
function varint(b: Uint8Array, i: number, end: number): { v: number; next: number } | null {
  let v = 0;
  let mul = 1;
  for (let k = 0; k < 10; k++) {
    if (i + k >= end) return null;
    const byte = b[i + k];
    v += (byte & 0x7f) * mul;
    mul *= 128;
    if ((byte & 0x80) === 0) return { v, next: i + k + 1 };
  }
  return null;
}

/**
 * The fields of profile.proto's messages, by message: 'v' a varint (or a packed run of them, wire type 2), a
 * message name for a nested message, 's' bytes (strings). pprof-format reads a tag as one byte and trusts every
 * length, in nested messages as at the top level: every field of every message is checked before it decodes.
 */
type FieldKind = 'v' | 's' | 'ValueType' | 'Sample' | 'Label' | 'Mapping' | 'Location' | 'Line' | 'Function';
const MESSAGES: Record<string, Record<number, FieldKind>> = {
  Profile: {
    1: 'ValueType',
    2: 'Sample',
    3: 'Mapping',
    4: 'Location',
    5: 'Function',
    6: 's',
    7: 'v',
    8: 'v',
    9: 'v',
    10: 'v',
    11: 'ValueType',
    12: 'v',
    13: 'v',
    14: 'v',
    15: 'v',
  },
  ValueType: { 1: 'v', 2: 'v' },
  Sample: { 1: 'v', 2: 'v', 3: 'Label' },
  Label: { 1: 'v', 2: 'v', 3: 'v', 4: 'v' },
  Mapping: { 1: 'v', 2: 'v', 3: 'v', 4: 'v', 5: 'v', 6: 'v', 7: 'v', 8: 'v', 9: 'v', 10: 'v' },
  Location: { 1: 'v', 2: 'v', 3: 'v', 4: 'Line', 5: 'v' },
  Line: { 1: 'v', 2: 'v', 3: 'v' },
  Function: { 1: 'v', 2: 'v', 3: 'v', 4: 'v', 5: 'v' },
};
const ARTICLE: Record<string, string> = {
  ValueType: 'a',
  Sample: 'a',
  Label: 'a',
  Mapping: 'a',
  Location: 'a',
  Line: 'a',
  Function: 'a',
};

/** Where message `name` in b[from, to) is damaged (null when every field is whole). Nested messages recurse. */
function messageDamage(b: Uint8Array, from: number, to: number, name: string, depth = 0): ParseProblem | null {
  const fields = MESSAGES[name];
  const where = depth === 0 ? '' : ` in ${ARTICLE[name] ?? 'a'} ${name}`;
  const fail = (at: number, message: string): ParseProblem => ({ line: 0, byteOffset: at, message: message + where });
  let i = from;
  while (i < to) {
    const at = i;
    const tag = varint(b, i, to);
    if (!tag) return fail(at, 'protobuf field tag is a bad varint');
    const field = Math.floor(tag.v / 8);
    const wire = tag.v % 8;
    const kind = fields[field];
    if (tag.next - at !== 1 || kind === undefined)
      return fail(at, `protobuf field ${field} (wire type ${wire}) is not a field of pprof's ${name}`);
    if (wire === 0 && kind === 'v') {
      const v = varint(b, tag.next, to);
      if (!v) return fail(at, `protobuf field ${field} is a bad varint`);
      i = v.next;
    } else if (wire === 2) {
      const len = varint(b, tag.next, to);
      if (!len) return fail(at, `length of protobuf field ${field} is a bad varint`);
      if (len.next + len.v > to)
        return fail(
          at,
          `protobuf field ${field} says ${len.v} bytes but ${depth === 0 ? 'the file has' : 'its message has'} ${to - len.next} left: cut off or damaged`,
        );
      const end = len.next + len.v;
      if (kind === 'v') {
        // packed varints: whole ones, to the field's end
        for (let k = len.next; k < end;) {
          const v = varint(b, k, end);
          if (!v) return fail(k, `packed protobuf field ${field} ends inside a varint`);
          k = v.next;
        }
      } else if (kind !== 's') {
        const inner = messageDamage(b, len.next, end, kind, depth + 1);
        if (inner) return inner;
      }
      i = end;
    } else return fail(at, `protobuf field ${field} (wire type ${wire}) is not a field of pprof's ${name}`);
  }
  return null;
}

/**
 * The length of the prefix of `b` made of whole, well-formed Profile fields, and the problem that ends it.
 * pprof-format reads a tag as one byte and trusts every length: it must be given only this prefix.
 */
export function wellFormedPrefix(b: Uint8Array): { end: number; problem: ParseProblem | null } {
  let i = 0;
  while (i < b.length) {
    const at = i;
    const tag = varint(b, i, b.length);
    if (!tag) return { end: at, problem: { line: 0, byteOffset: at, message: 'protobuf field tag is a bad varint' } };
    const field = Math.floor(tag.v / 8);
    const wire = tag.v % 8;
    const fail = (message: string) => ({ end: at, problem: { line: 0, byteOffset: at, message } });
    if (tag.next - at !== 1) return fail(`protobuf field ${field} is not a field of pprof's Profile`);
    if (wire === 2 && PROFILE_LEN_FIELDS.has(field)) {
      const len = varint(b, tag.next, b.length);
      if (!len) return fail(`length of protobuf field ${field} is a bad varint`);
      if (len.next + len.v > b.length)
        return fail(
          `protobuf field ${field} says ${len.v} bytes but the file has ${b.length - len.next} left: cut off or damaged`,
        );
      i = len.next + len.v;
    } else if (wire === 0 && PROFILE_VARINT_FIELDS.has(field)) {
      const v = varint(b, tag.next, b.length);
      if (!v) return fail(`protobuf field ${field} is a bad varint`);
      i = v.next;
    } else return fail(`protobuf field ${field} (wire type ${wire}) is not a field of pprof's Profile`);
  }
  return { end: b.length, problem: null };
}

const MESSAGE_NAMES: Record<number, string> = {
  1: 'sample type',
  2: 'sample',
  3: 'mapping',
  4: 'location',
  5: 'function',
  11: 'period type',
};

/**
 * The top-level fields of `b` (a well-formed prefix) whose nested messages are whole, copied without the damaged
 * ones; each damaged one is a problem naming it, the damage and its byte offset. At most `maxProblems` said.
 */
function withoutDamagedMessages(b: Uint8Array, problems: ParseProblem[]): Uint8Array {
  const keep: [number, number][] = [];
  let dropped = 0;
  let i = 0;
  while (i < b.length) {
    const at = i;
    const tag = varint(b, i, b.length)!;
    const field = Math.floor(tag.v / 8);
    const wire = tag.v % 8;
    let end: number;
    let damage: ParseProblem | null = null;
    if (wire === 2) {
      const len = varint(b, tag.next, b.length)!;
      end = len.next + len.v;
      const kind = MESSAGES.Profile[field];
      if (kind !== 's' && kind !== 'v') damage = messageDamage(b, len.next, end, kind, 1);
      else if (kind === 'v')
        for (let k = len.next; k < end && !damage;) {
          const v = varint(b, k, end);
          if (!v) damage = { line: 0, byteOffset: k, message: `packed protobuf field ${field} ends inside a varint` };
          else k = v.next;
        }
    } else end = varint(b, tag.next, b.length)!.next;
    if (damage) {
      dropped++;
      if (problems.length < MAX_PROBLEMS)
        problems.push({
          ...damage,
          message: `the ${MESSAGE_NAMES[field] ?? `field ${field}`} at byte ${at} is damaged: ${damage.message} (byte ${damage.byteOffset}); it is left out`,
        });
    } else if (keep.length > 0 && keep[keep.length - 1][1] === at) keep[keep.length - 1][1] = end;
    else keep.push([at, end]);
    i = end;
  }
  if (dropped === 0) return b;
  if (dropped > MAX_PROBLEMS) problems.push({ line: 0, byteOffset: 0, message: `${dropped} damaged messages in all` });
  const out = new Uint8Array(keep.reduce((n, [s, e]) => n + e - s, 0));
  let o = 0;
  for (const [s, e] of keep) {
    out.set(b.subarray(s, e), o);
    o += e - s;
  }
  return out;
}

/** Problems said per profile before the rest are only counted. */
const MAX_PROBLEMS = 50;

const num = (v: number | bigint): number => (typeof v === 'bigint' ? Number(BigInt.asIntN(64, v)) : v);
const big = (v: number | bigint): bigint => (typeof v === 'bigint' ? BigInt.asUintN(64, v) : BigInt(v));

/** Decodes a pprof profile (already decompressed). Never throws: damage becomes problems with byte offsets. */
export function parsePprof(bytes: Uint8Array): PprofResult {
  const problems: ParseProblem[] = [];
  const { end, problem } = wellFormedPrefix(bytes);
  if (problem) problems.push({ ...problem, message: `${problem.message}; the fields before byte ${end} are read` });
  let p: Profile;
  try {
    p = Profile.decode(withoutDamagedMessages(bytes.subarray(0, end), problems));
  } catch (e) {
    problems.push({
      line: 0,
      byteOffset: 0,
      message: `not a readable pprof profile: ${e instanceof Error ? e.message : String(e)}`,
    });
    return { profile: null, problems };
  }
  const strings = p.stringTable.strings;
  const str = (i: number | bigint): string => strings[num(i)] ?? '';
  const functions = new Map<number, { name: string; file: string }>();
  for (const f of p.function)
    functions.set(num(f.id), { name: str(f.name) || str(f.systemName), file: str(f.filename) });
  const mappings = new Map<number, PprofMapping>();
  for (const m of p.mapping)
    mappings.set(num(m.id), {
      id: num(m.id),
      start: big(m.memoryStart),
      limit: big(m.memoryLimit),
      offset: big(m.fileOffset),
      file: str(m.filename),
      buildId: str(m.buildId),
    });
  const locations = new Map<number, PprofLocation>();
  for (const l of p.location) {
    const frames: ProfileFrame[] = [];
    for (const line of l.line) {
      const f = functions.get(num(line.functionId));
      if (!f) continue;
      const n = num(line.line);
      frames.push({ function: f.name, file: f.file || null, line: n > 0 ? n : null });
    }
    locations.set(num(l.id), { id: num(l.id), address: big(l.address), mappingId: num(l.mappingId), frames });
  }
  const sampleTypes = p.sampleType.map((t) => ({ type: str(t.type), unit: str(t.unit) }));
  const samples: PprofSample[] = p.sample.map((s) => ({
    locationIds: s.locationId.map(num),
    values: s.value.map(num),
    labels: s.label.map((l) => ({
      key: str(l.key),
      str: num(l.str) ? str(l.str) : null,
      num: num(l.str) ? null : num(l.num),
      unit: num(l.numUnit) ? str(l.numUnit) : null,
    })),
  }));
  const dst = num(p.defaultSampleType);
  // time_nanos is the dump's time: held to the dump readers' bounds (2^63-1 ns is the year 2262)
  let timeNanos: number | null = num(p.timeNanos) || null;
  const when = timeNanos !== null ? dateProblem(timeNanos / 1e6) : null;
  if (timeNanos !== null && when !== null) {
    problems.push({
      line: 0,
      byteOffset: 0,
      message: `its time_nanos ${numberText(BigInt.asIntN(64, BigInt(p.timeNanos)))}: ${when}; the file's modification time is used`,
    });
    timeNanos = null;
  }
  return {
    profile: {
      sampleTypes,
      defaultSampleType: dst ? str(dst) : null,
      samples,
      locations,
      mappings,
      timeNanos,
      durationNanos: num(p.durationNanos) || null,
      periodType: p.periodType ? { type: str(p.periodType.type), unit: str(p.periodType.unit) } : null,
      period: num(p.period),
      comments: p.comment.map(str),
    },
    problems,
  };
}

/**
 * Which of the profile's sample types fill which column of the model; null when it has no heap type (none of the
 * four, and none counted in bytes: a CPU profile). A profile with only its own types (`samples/count`,
 * `bytes/bytes`) has every column -1 and all its types in `other`.
 */
export function heapColumns(
  types: readonly PprofSampleType[],
): { liveBytes: number; liveObjects: number; accumBytes: number; accumObjects: number; other: number[] } | null {
  const idx = (...names: string[]) => types.findIndex((t) => names.includes(t.type));
  const liveBytes = idx('inuse_space', 'space');
  const accumBytes = idx('alloc_space');
  // any of the heap types makes a heap profile: one of allocation counts only (alloc_objects) too
  const anyHeap = idx('inuse_space', 'space', 'alloc_space', 'inuse_objects', 'objects', 'alloc_objects') >= 0;
  if (!anyHeap && !types.some((t) => t.unit === 'bytes')) return null;
  const cols = {
    liveBytes,
    liveObjects: idx('inuse_objects', 'objects'),
    accumBytes,
    accumObjects: idx('alloc_objects'),
  };
  const used = new Set(Object.values(cols).filter((i) => i >= 0));
  // a type named twice is read once, as pprof's -sample_index picks the first of a name
  const other = types.flatMap((t, i) =>
    used.has(i) || types.findIndex((u) => u.type === t.type) !== i || !t.type ? [] : [i],
  );
  return { ...cols, other };
}

/** Label keys that name the process a sample came from (perf_to_profile's `pid`, OpenTelemetry's `process.pid`…). */
const PID_LABELS = new Set(['pid', 'process_id', 'process.pid', 'process_pid']);
/** Linux's PID_MAX_LIMIT (2^22): a larger "pid" is something else */
export const PID_MAX = 4194304;

/** The pid a label names, or null (a number, or a string of digits, within Linux's range). */
function labelPid(key: string, str: string | null, n: number | null): number | null {
  if (!PID_LABELS.has(key)) return null;
  const v = str !== null ? Number(str) : n;
  return v !== null && Number.isInteger(v) && v > 0 && v <= PID_MAX ? v : null;
}

/** A synthetic address for a location without a usable one (0, or shared by locations that name other frames). */
const SYNTHETIC_BASE = 0x7070n << 48n; // "pp": outside every user-space mapping

export interface PprofHeap {
  info: ParsedDumpInfo;
  records: DumpRecord[];
  /** names the profile carries, by the hex address its locations got ("0x…") */
  symbols: Map<string, ProfileFrame[]>;
  /** its mappings as /proc/<pid>/maps lines (so frames without names are symbolized from binaries as usual) */
  mapsText: string | null;
  /** the mappings' build-ids by path (lowercase hex; Go writes the GNU build-id note's), for MapsEntry.buildId */
  buildIds: Record<string, string> | null;
  /** default_sample_type as a type it has (space/objects as inuse_*), null when absent or not declared */
  defaultSample: string | null;
  /** the declared sample types beyond the built-in four, in the order of each record's `extra` values */
  extraTypes: PprofSampleType[];
  /** labels worth a line: pid (when every sample with one agrees) */
  pid: number | null;
  /** what the loader should say about the file beyond its problems */
  notes: string[];
  /** a delta profile: some values are negative (SnapshotBuilder's `signed`) */
  delta: boolean;
  /** it has in-use bytes (inuse_space or space); false: an allocation profile, its live columns are not measured */
  recordsLive: boolean;
}

/**
 * The heap profile in the dump readers' terms: one record per sample (leaf first), counts from the heap sample
 * types, the profile's own names by address. Null with a reason for a profile of another kind (CPU, goroutines).
 */
export function pprofHeap(profile: PprofProfile, bytes: number): PprofHeap | { notHeap: string } {
  const cols = heapColumns(profile.sampleTypes);
  if (!cols) {
    const types = profile.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(', ') || 'none';
    const cpu = profile.sampleTypes.some((t) => /^(cpu|samples|wall)$/.test(t.type));
    return {
      notHeap: `${cpu ? 'a pprof CPU profile' : 'a pprof profile, but not a heap profile'} (sample types ${types}): open it with \`go tool pprof\`; heaplens reads heap profiles (inuse_space, alloc_space, space)`,
    };
  }
  const problems: ParseProblem[] = [];
  const notes: string[] = [];
  if (cols.liveBytes >= 0 && cols.liveObjects < 0)
    notes.push('the profile has no object counts: each sample counts as one object');
  // addresses: a location's own when it is nonzero and no other location with other frames has it
  const addressOf = new Map<number, bigint>();
  const owner = new Map<bigint, string>();
  const symbols = new Map<string, ProfileFrame[]>();
  for (const loc of profile.locations.values()) {
    const key = JSON.stringify(loc.frames);
    let a = loc.address;
    const prev = a !== 0n ? owner.get(a) : undefined;
    if (a === 0n || (prev !== undefined && prev !== key)) a = SYNTHETIC_BASE + BigInt(loc.id);
    owner.set(a, key);
    addressOf.set(loc.id, a);
    if (loc.frames.length > 0) symbols.set('0x' + a.toString(16), loc.frames);
  }
  const records: DumpRecord[] = [];
  const pids = new Set<number>();
  let missing = 0;
  let dropped = 0;
  const drop = (k: number, why: string) => {
    if (++dropped <= MAX_PROBLEMS) problems.push({ line: 0, byteOffset: 0, message: `sample ${k} dropped: ${why}` });
  };
  // a delta profile (net/http/pprof's ?seconds=N, `pprof -proto -diff_base`) is the difference of two profiles:
  // what was freed in its window is negative, and pprof keeps it so (its totals are the signed sums)
  const delta = profile.samples.some((s) => s.values.some((v) => v < 0));
  if (delta)
    notes.push(
      'a delta profile (the difference of two profiles, as net/http/pprof writes for ?seconds=N): negative values are what its window freed, kept as pprof keeps them',
    );
  const value = (s: PprofSample, i: number) => (i >= 0 ? (s.values[i] ?? 0) : 0);
  profile.samples.forEach((s, k) => {
    const ids = s.locationIds.slice(0, MAX_FRAMES_PER_STACK);
    const words = new Uint32Array(ids.length * 2);
    ids.forEach((id, j) => {
      let a = addressOf.get(id);
      if (a === undefined) {
        missing++;
        a = SYNTHETIC_BASE + BigInt(id);
      }
      words[2 * j] = Number(a >> 32n) >>> 0;
      words[2 * j + 1] = Number(a & 0xffffffffn) >>> 0;
    });
    // pprof reads every value as an int64; past 2^53 a double cannot hold it exactly
    const badAt = s.values.findIndex((v) => !Number.isSafeInteger(v));
    if (badAt >= 0) {
      drop(
        k,
        `its ${profile.sampleTypes[badAt]?.type ?? `value ${badAt}`} ${s.values[badAt].toExponential(2)} is past 2^53`,
      );
      return;
    }
    const liveBytes = value(s, cols.liveBytes);
    const accumBytes = value(s, cols.accumBytes);
    const counts = {
      liveBytes,
      // without an object count, each sample is one object (of the sign of its bytes)
      liveObjects: cols.liveObjects >= 0 ? value(s, cols.liveObjects) : Math.sign(liveBytes),
      accumBytes,
      accumObjects: cols.accumObjects >= 0 ? value(s, cols.accumObjects) : Math.sign(accumBytes),
    };
    for (const l of s.labels) {
      const pid = labelPid(l.key, l.str, l.num);
      if (pid !== null) pids.add(pid);
    }
    const extra = cols.other.map((i) => value(s, i));
    if (
      counts.liveBytes === 0 &&
      counts.liveObjects === 0 &&
      counts.accumBytes === 0 &&
      counts.accumObjects === 0 &&
      extra.every((v) => v === 0)
    )
      return; // pprof leaves such samples out too
    records.push({ frameWords: words, counts, threads: [], line: 0, ...(extra.length > 0 ? { extra } : {}) });
  });
  if (dropped > MAX_PROBLEMS)
    problems.push({
      line: 0,
      byteOffset: 0,
      message: `${dropped} samples dropped in all (${dropped - MAX_PROBLEMS} more than said above)`,
    });
  if (missing > 0)
    problems.push({ line: 0, byteOffset: 0, message: `${missing} frame(s) name a location the profile does not have` });
  const mapsText =
    profile.mappings.size > 0
      ? [...profile.mappings.values()]
          .filter((m) => m.limit > m.start)
          .map((m) =>
            `${m.start.toString(16)}-${m.limit.toString(16)} r-xp ${m.offset.toString(16)} 00:00 0 ${m.file}`.trimEnd(),
          )
          .join('\n') + '\n'
      : null;
  const info: ParsedDumpInfo = {
    format: 'pprof',
    sampling: { kind: 'none' },
    header: null,
    headerThreads: [],
    recordCount: records.length,
    mapsText,
    mapsFirstLine: 1,
    mapsComplete: true,
    trailerText: null,
    truncated: null,
    fatal: null,
    problems,
    problemsOmitted: Math.max(0, dropped - MAX_PROBLEMS),
    skippedLeadingLines: 0,
    goRuntime: false,
    bytes,
    lines: 0,
  };
  const DEFAULTS = { inuse_space: 0, inuse_objects: 0, alloc_space: 0, alloc_objects: 0, space: 0, objects: 0 };
  const named = profile.defaultSampleType;
  const extraTypes = cols.other.map((i) => profile.sampleTypes[i]);
  const ownOnly = cols.liveBytes < 0 && cols.accumBytes < 0 && cols.liveObjects < 0 && cols.accumObjects < 0;
  // without in-use bytes (an allocation-count profile), the last of the heap types it has, as pprof shows the last
  const heapOrder = (['liveBytes', 'liveObjects', 'accumBytes', 'accumObjects'] as const)
    .filter((c) => cols[c] >= 0)
    .sort((a, b) => cols[a] - cols[b]);
  const lastHeap = heapOrder.length > 0 ? heapOrder[heapOrder.length - 1] : null;
  const heapName = {
    liveBytes: 'inuse_space',
    liveObjects: 'inuse_objects',
    accumBytes: 'alloc_space',
    accumObjects: 'alloc_objects',
  } as const;
  if (ownOnly)
    notes.push(
      `declares none of the heap sample types inuse_space/alloc_space, only ${extraTypes.map((t) => `${t.type}/${t.unit}`).join(', ')}: choose one with --sample or the Count menu`,
    );
  // without a default, pprof shows the last type: a profile of its own types opens on it as pprof would
  const dst =
    named === null
      ? ownOnly
        ? (extraTypes[extraTypes.length - 1]?.type ?? null)
        : cols.liveBytes < 0 && lastHeap !== null
          ? heapName[lastHeap]
          : null
      : extraTypes.some((t) => t.type === named)
        ? named
        : !Object.hasOwn(DEFAULTS, named)
          ? null
          : named === 'space'
            ? 'inuse_space'
            : named === 'objects'
              ? 'inuse_objects'
              : named;
  if (named !== null && dst === null)
    notes.push(`its default sample type ${named} is not one heaplens shows: inuse_space is shown first`);
  const buildIds: Record<string, string> = {};
  for (const m of profile.mappings.values()) {
    const id = normalBuildId(m.buildId);
    if (m.file && id) buildIds[m.file] = id;
  }
  const anyId = Object.keys(buildIds).length > 0;
  return {
    info,
    records,
    symbols,
    mapsText,
    buildIds: anyId ? buildIds : null,
    defaultSample: dst,
    extraTypes,
    pid: pids.size === 1 ? [...pids][0] : null,
    notes,
    delta,
    recordsLive: cols.liveBytes >= 0,
  };
}

/** A build-id as hex, lowercase; null for what is not one (empty, or not hex: Go's own build IDs are not GNU's). */
export function normalBuildId(s: string): string | null {
  const t = s.trim().toLowerCase().replace(/^0x/, '');
  return /^[0-9a-f]{8,128}$/.test(t) ? t : null;
}

export interface PprofIdentity {
  /** the profile's time_nanos in ms since the epoch, null when absent */
  timeMs: number | null;
  /** the pid every sample's pid label agrees on; null without one */
  pid: number | null;
  /** distinct pids when the samples disagree (a profile of several processes), else 0 */
  pids: number;
  /**
   * the executable the profile is of: its first mapping (Go's and pprof's main binary) as `name build-id`
   * (build-id lowercase hex, or the name alone without one); null without mappings
   */
  exe: string | null;
}

/**
 * Only what groups a profile into a process series (its time and pid labels), by walking the protobuf's framing
 * without decoding the profile: run on every pprof file before the loader reads any. Damage stops the walk; the
 * reader proper (parsePprof) says where.
 */
export function pprofIdentity(b: Uint8Array): PprofIdentity {
  let timeNanos = 0;
  const strings: string[] = [];
  const labels = new Set<string>(); // `${key}\u0000${str}\u0000${num}` as string-table indices
  const decoder = new TextDecoder('utf-8');
  const walk = (from: number, to: number, on: (field: number, v: number, s: number, e: number) => void) => {
    let i = from;
    while (i < to) {
      const tag = varint(b, i, to);
      if (!tag) return;
      const wire = tag.v % 8;
      if (wire === 0) {
        const v = varint(b, tag.next, to);
        if (!v) return;
        on(Math.floor(tag.v / 8), v.v, 0, 0);
        i = v.next;
      } else if (wire === 2) {
        const len = varint(b, tag.next, to);
        if (!len || len.next + len.v > to) return;
        on(Math.floor(tag.v / 8), -1, len.next, len.next + len.v);
        i = len.next + len.v;
      } else if (wire === 1) i = tag.next + 8;
      else if (wire === 5) i = tag.next + 4;
      else return;
    }
  };
  let firstMapping: [number, number] | null = null; // its filename and build_id as string-table indices
  walk(0, b.length, (field, v, s, e) => {
    if (field === 3 && v < 0 && firstMapping === null) {
      const m: [number, number] = [0, 0];
      walk(s, e, (mf, mv) => {
        if (mf === 5 && mv >= 0) m[0] = mv;
        else if (mf === 6 && mv >= 0) m[1] = mv;
      });
      firstMapping = m;
    }
    if (field === 9 && v >= 0) timeNanos = v;
    else if (field === 6 && v < 0) strings.push(decoder.decode(b.subarray(s, e)));
    else if (field === 2 && v < 0)
      walk(s, e, (f, _v, ls, le) => {
        if (f !== 3 || ls === le) return;
        const l = [0, 0, 0];
        walk(ls, le, (lf, lv) => {
          if (lf >= 1 && lf <= 3 && lv >= 0) l[lf - 1] = lv;
        });
        labels.add(l.join('\u0000'));
      });
  });
  const pids = new Set<number>();
  for (const key of labels) {
    const [k, s, n] = key.split('\u0000').map(Number);
    const pid = labelPid(strings[k] ?? '', s ? (strings[s] ?? '') : null, s ? null : n);
    if (pid !== null) pids.add(pid);
  }
  const mapping = firstMapping as [number, number] | null;
  const exeFile = mapping ? (strings[mapping[0]] ?? '') : '';
  const exeId = mapping ? normalBuildId(strings[mapping[1]] ?? '') : null;
  const exeName = exeFile.slice(exeFile.lastIndexOf('/') + 1);
  const exe = mapping && (exeName || exeId) ? [exeName || 'executable', exeId].filter(Boolean).join(' ') : null;
  return {
    exe,
    // the reader proper says why a time is out of the dump readers' bounds
    timeMs: timeNanos > 0 && dateProblem(timeNanos / 1e6) === null ? timeNanos / 1e6 : null,
    pid: pids.size === 1 ? [...pids][0] : null,
    pids: pids.size > 1 ? pids.size : 0,
  };
}
