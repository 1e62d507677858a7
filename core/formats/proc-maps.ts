// Reader for a copy of /proc/<pid>/maps: the MAPPED_LIBRARIES section of a dump, or a standalone maps file.
// Addresses are unsigned 64-bit, so they are kept as bigint (JS numbers lose precision above 2^53).

import { basename } from './dump-filename.js';

export interface MapsEntry {
  start: bigint;
  /** exclusive */
  end: bigint;
  /** e.g. "r-xp" */
  perms: string;
  /** file offset of `start` */
  offset: bigint;
  dev: string;
  inode: number;
  /** path as written, without a trailing " (deleted)"; "" for anonymous mappings; "[vdso]" etc. for pseudo mappings */
  path: string;
  /** the kernel appended " (deleted)": the file was replaced or removed after it was mapped */
  deleted: boolean;
  /** the mapped file's build-id (lowercase hex) when the profile names one (pprof's Mapping.build_id); /proc maps have none */
  buildId?: string;
}

export interface MapsParseProblem {
  /** 1-based line within the maps text */
  line: number;
  message: string;
}

export interface ParsedMaps {
  /** sorted by start address */
  entries: MapsEntry[];
  problems: MapsParseProblem[];
}

// start-end perms offset dev inode [path]; the path is the rest of the line and may contain spaces.
// The path is any bytes but a newline (the kernel escapes only "\n"): "." would stop at U+2028/U+2029.
const MAPS_LINE =
  /^([0-9a-fA-F]+)-([0-9a-fA-F]+)[ \t]+([-r][-w][-x][sp])[ \t]+([0-9a-fA-F]+)[ \t]+([0-9a-fA-F]+:[0-9a-fA-F]+)[ \t]+(\d+)(?:[ \t]+([^\n]*))?$/;
// "start-end: path": the macOS dyld form written by jemalloc 5.3.1+ ("%016llx-%016llx: <image path>"), and
// the form pprof writes and reads (indented, "0x"-prefixed, paths such as "$build/server": a variable kept as is)
const DYLD_LINE = /^[ \t]*(?:0x)?([0-9a-fA-F]+)-(?:0x)?([0-9a-fA-F]+):[ \t]+([^\n]*)$/;
// lines of a maps section that carry no mapping and are not damage: pprof's attribute lines ("source=…",
// "build=…") and an elision ("...") where someone cut a long list when pasting it
const NOT_A_MAPPING = /^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*=.*|\.\.\.+|…)[ \t]*$/;
const DELETED_SUFFIX = ' (deleted)';

/** Parses one maps line; returns null for a line that is not a mapping. */
export function parseMapsLine(raw: string): MapsEntry | null {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  let m = MAPS_LINE.exec(line);
  if (m) {
    let path = (m[7] ?? '').trimEnd();
    const deleted = path.endsWith(DELETED_SUFFIX);
    if (deleted) path = path.slice(0, -DELETED_SUFFIX.length);
    return {
      start: BigInt('0x' + m[1]),
      end: BigInt('0x' + m[2]),
      perms: m[3],
      offset: BigInt('0x' + m[4]),
      dev: m[5],
      inode: Number(m[6]),
      path,
      deleted,
    };
  }
  m = DYLD_LINE.exec(line);
  if (m) {
    return {
      start: BigInt('0x' + m[1]),
      end: BigInt('0x' + m[2]),
      perms: 'r-xp',
      offset: 0n,
      dev: '00:00',
      inode: 0,
      path: m[3].trimEnd(),
      deleted: false,
    };
  }
  return null;
}

/** Parses the text of a maps file. Blank lines are skipped; other unreadable lines are reported, not fatal. */
export function parseMaps(text: string, firstLineNumber = 1): ParsedMaps {
  const entries: MapsEntry[] = [];
  const problems: MapsParseProblem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    if (raw.trim() === '' || NOT_A_MAPPING.test(raw.replace(/\r$/, ''))) continue;
    const e = parseMapsLine(raw);
    if (e) entries.push(e);
    else problems.push({ line: firstLineNumber + i, message: `not a maps line: ${JSON.stringify(raw.slice(0, 80))}` });
  }
  entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return { entries, problems };
}

/** Binary search: the mapping containing `addr`, or null. `entries` must be sorted by start. */
export function findMapping(entries: readonly MapsEntry[], addr: bigint): MapsEntry | null {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const e = entries[mid];
    if (addr < e.start) hi = mid - 1;
    else if (addr >= e.end) lo = mid + 1;
    else return e;
  }
  return null;
}

/** Each maps list's bounds as doubles, [start, end) per entry, made once (findMapping's numeric twin). */
const boundsOf = new WeakMap<readonly MapsEntry[], Float64Array>();

function numericBounds(entries: readonly MapsEntry[]): Float64Array {
  const known = boundsOf.get(entries);
  if (known) return known;
  const b = new Float64Array(2 * entries.length);
  entries.forEach((e, i) => {
    b[2 * i] = Number(e.start);
    b[2 * i + 1] = Number(e.end);
  });
  boundsOf.set(entries, b);
  return b;
}

/**
 * The mapping that holds the address `hex` ("0x…") and the address's offset in its file as hex ("0x…"), or null:
 * findMapping and the offset, without a BigInt per call for an address below 2^53 (every user-space address).
 * Exact: such an address is exact as a double, a bound below 2^53 is too, and a bound at or above it rounds to a
 * double at or above 2^53, still above the address, so every comparison gives what the BigInt one gives. Larger
 * addresses and offsets take the BigInt path.
 */
export function locateHex(entries: readonly MapsEntry[], hex: string): { entry: MapsEntry; offset: string } | null {
  const n = parseInt(hex, 16);
  if (n <= Number.MAX_SAFE_INTEGER) {
    const mid = mappingIndexAt(entries, n);
    if (mid < 0) return null;
    const e = entries[mid];
    const off = n - numericBounds(entries)[2 * mid] + Number(e.offset);
    if (off <= Number.MAX_SAFE_INTEGER) return { entry: e, offset: '0x' + off.toString(16) };
    return locateBig(entries, hex); // the offset is past 2^53: not exact as a double
  }
  return locateBig(entries, hex);
}

/**
 * locateHex's search: the index of the mapping that holds the address `n` (exact as a double: below 2^53), or -1.
 * Its start as a double is `numericStart`.
 */
export function mappingIndexAt(entries: readonly MapsEntry[], n: number): number {
  const b = numericBounds(entries);
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (n < b[2 * mid]) hi = mid - 1;
    else if (n >= b[2 * mid + 1]) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** The start of mapping `i` of `entries` as a double (numericBounds'). */
export function numericStart(entries: readonly MapsEntry[], i: number): number {
  return numericBounds(entries)[2 * i];
}

/** locateHex on BigInts: findMapping and the offset, exact at any size. */
function locateBig(entries: readonly MapsEntry[], hex: string): { entry: MapsEntry; offset: string } | null {
  const a = BigInt(hex);
  const e = findMapping(entries, a);
  return e ? { entry: e, offset: '0x' + (a - e.start + e.offset).toString(16) } : null;
}

/** True for file-backed mappings (not anonymous, not [vdso]/[stack]/…, not memfd). */
export function isFileMapping(e: MapsEntry): boolean {
  return e.path.startsWith('/') && !e.path.startsWith('/memfd:');
}

/** The base name of a mapping's path, for display ("libc.so.6"). */
export function moduleName(e: MapsEntry): string {
  return basename(e.path);
}
