// Reader of PYFRAMES/1 frame tables (docs/pyframes-format.md): the names of the Python frames that
// libheaplens_capture (or any producer of the format) put into jemalloc stacks as pseudo-addresses.
// The table is in a sidecar `<dump>.pyframes`, or appended to the dump after its maps section.
// Everything in it comes from the profiled process: strings are decoded defensively and bounded.

import type { InputFile } from './input-file.js';

export type PyMarkerKind = 'entry' | 'unmerged' | 'truncated' | 'unknown';

/** Kind field of a pseudo-address (bits 44..47 with the default layout). */
export const PY_KIND_FRAME = 1;
export const PY_KIND_ENTRY = 2;
export const PY_KIND_UNMERGED = 3;
export const PY_KIND_TRUNCATED = 4;
export const PY_KIND_UNKNOWN = 5;

export interface PyFrameEntry {
  /** normalized pseudo-address ("0x7079…", lowercase) */
  addr: string;
  /** qualname (co_qualname), decoded; "" when the producer wrote "-" */
  function: string;
  file: string;
  /** the line executing in the frame; null when unknown (0 or negative in the table) */
  line: number | null;
  /** co_firstlineno; null when unknown */
  firstLine: number | null;
  /**
   * a native frame a capture named (bcc memleak's `symbol+0xoff [module]`, a PyTorch C++ frame), carried as a
   * pseudo-address because the file has no usable return address: shown as a native frame, `function` as its text
   */
  native?: boolean;
  /** the native frame's module basename, null when unknown */
  module?: string | null;
}

export interface PyFramesProblem {
  /** 1-based line within the table text */
  line: number;
  message: string;
}

export interface PyFrameTable {
  /** format major version (1) */
  version: number;
  /** top 16 bits of every pseudo-address, as 4 lowercase hex digits ("7079") */
  tagHex: string;
  kindShift: number;
  idShift: number;
  pid: number | null;
  python: string | null;
  token: string | null;
  granularity: 'line' | 'function';
  /** every key=value of the header, decoded and bounded (unknown keys kept for display) */
  header: Record<string, string>;
  /** producer statistics from `# key=value` comment lines (numbers only) */
  stats: Record<string, number>;
  frames: Map<string, PyFrameEntry>;
  markers: Map<string, PyMarkerKind>;
  /** false when the END line is missing (writer died mid-write, or the file was cut) */
  complete: boolean;
  /** the count the END line declared, null without END */
  declaredCount: number | null;
  /** records with an unknown letter, skipped */
  unknownRecords: number;
  problems: PyFramesProblem[];
  source: 'sidecar' | 'dump' | 'text';
  /** the dump's context records (`C <key> <value>`, §5a), raw; read by core/formats/dump-context.ts */
  contextRecords?: { line: number; fields: string[] }[];
}

/** Bounds on untrusted text (characters after decoding). */
export const MAX_FUNCTION_CHARS = 1024;
export const MAX_FILE_CHARS = 4096;
/** Encoded fields longer than this are cut before decoding (worst case 12 encoded bytes per char). */
const MAX_FIELD_BYTES = 12 * MAX_FILE_CHARS;
const MAX_PROBLEMS = 100;
/** context records kept per table (core/formats/dump-context.ts refuses more than it knows to expect) */
const MAX_CONTEXT_RECORDS = 256;

const HEADER_PREFIX = 'PYFRAMES/';

/** True for the first line of a table (also used to find it after MAPPED_LIBRARIES). */
export function isPyFramesHeaderLine(line: string): boolean {
  return line.startsWith(HEADER_PREFIX);
}

// Characters never shown as-is: C0/C1 controls, DEL, and bidi overrides/isolates (which can make a
// name display as something else).
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Replaces control and bidi-control characters with U+FFFD and bounds the length (adds "…"). */
export function sanitizeDisplayText(s: string, maxChars: number): string {
  let out = s.replace(UNSAFE_CHARS, '\uFFFD');
  if (out.length > maxChars) out = out.slice(0, maxChars) + '\u2026';
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8Encoder = new TextEncoder();

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** printable ASCII but '%' (the only bytes that decode to themselves and need no sanitizing) */
const PLAIN_FIELD = /^[\x21-\x24\x26-\x7e]*$/;

/**
 * Decodes one PYFRAMES string field: "-" is the empty string, %XX are bytes, the bytes are UTF-8
 * (invalid sequences become U+FFFD), then control characters are replaced and the length bounded.
 * A malformed escape ("%4", "%zz") is kept literally.
 */
export function decodePyString(field: string, maxChars: number): string {
  if (field === '-') return '';
  // nearly every field is printable ASCII without an escape: it decodes to itself (a sidecar has thousands)
  if (PLAIN_FIELD.test(field)) return field.length > maxChars ? field.slice(0, maxChars) + '\u2026' : field;
  const raw = field.length > MAX_FIELD_BYTES ? field.slice(0, MAX_FIELD_BYTES) : field;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 37 /* % */ && i + 2 < raw.length) {
      const hi = hexVal(raw.charCodeAt(i + 1));
      const lo = hexVal(raw.charCodeAt(i + 2));
      if (hi >= 0 && lo >= 0) {
        bytes.push(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    if (c < 0x80) bytes.push(c);
    else {
      // the format is ASCII; a stray non-ASCII character is kept as its own UTF-8
      const cp = raw.codePointAt(i) ?? 0xfffd;
      if (cp > 0xffff) i++;
      for (const b of utf8Encoder.encode(String.fromCodePoint(cp))) bytes.push(b);
    }
  }
  return sanitizeDisplayText(utf8.decode(Uint8Array.from(bytes)), maxChars);
}

/** Encodes a string the way producers must (for tests and writers of the format). */
export function encodePyString(s: string): string {
  if (s === '') return '-';
  const bytes = utf8Encoder.encode(s);
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b <= 0x20 || b === 0x25 || b >= 0x7f || (i === 0 && b === 0x2d)) {
      out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
    } else out += String.fromCharCode(b);
  }
  return out;
}

const HEX_ADDR = /^0x[0-9a-f]{1,16}$/;
/** an address already in its normal form (lowercase, no leading zero): nearly every one a table has */
const NORMAL_ADDR = /^0x[1-9a-f][0-9a-f]{0,15}$/;

/**
 * Normalizes an address string to the form jemalloc prints ("0x…", lowercase, no padding); null if
 * it is not a 64-bit hex address.
 */
export function normalizeHexAddress(s: string): string | null {
  if (NORMAL_ADDR.test(s)) return s;
  let t = s.toLowerCase();
  if (!t.startsWith('0x')) return null;
  let i = 2;
  while (i < t.length - 1 && t[i] === '0') i++;
  t = '0x' + t.slice(i);
  return HEX_ADDR.test(t) ? t : null;
}

export interface PseudoAddressLayout {
  tagHex: string;
  kindShift: number;
  idShift: number;
}

export const DEFAULT_LAYOUT: PseudoAddressLayout = { tagHex: '7079', kindShift: 44, idShift: 4 };

export interface PseudoAddress {
  /** the canonical pseudo-address (a "-1" applied by a tool undone) */
  addr: string;
  kind: number;
  id: number;
}

/**
 * Decodes a tagged value; null for an ordinary address. A value whose low 4 bits are all ones had 1
 * subtracted (jeprof does that to caller addresses): it is rounded up to the multiple of 16.
 */
export function decodePseudoAddress(hex: string, layout: PseudoAddressLayout = DEFAULT_LAYOUT): PseudoAddress | null {
  // fast path on the string: the tag occupies the top 16 bits, so a tagged value has 16 digits
  const h = hex.length === 18 ? hex.toLowerCase() : null;
  if (h === null || !h.startsWith('0x' + layout.tagHex)) return null;
  const ks = layout.kindShift;
  if (h.charCodeAt(17) !== 102 /* f */ && ks >= 32 && ks <= 44) {
    // the same fields without BigInt or substrings (a sidecar has thousands of F lines): the kind is in the
    // high word, the id below 2^44, exact in a double
    const hi = hexWord(h, 2);
    const lo = hexWord(h, 10);
    if (hi >= 0 && lo >= 0) {
      const kind = (hi >>> (ks - 32)) & 0xf;
      const low = (hi & ((1 << (ks - 32)) - 1)) * 4294967296 + lo;
      return { addr: h, kind, id: Math.floor(low / 2 ** layout.idShift) };
    }
  }
  let v = BigInt(h);
  if ((v & 0xfn) === 0xfn) v += 1n;
  if (v >> 48n !== BigInt('0x' + layout.tagHex)) return null;
  const kind = Number((v >> BigInt(layout.kindShift)) & 0xfn);
  const idBits = layout.kindShift - layout.idShift;
  const id = Number((v >> BigInt(layout.idShift)) & ((1n << BigInt(idBits)) - 1n));
  return { addr: '0x' + v.toString(16), kind, id };
}

/**
 * True for a PYFRAMES/1 pseudo-address (frame or marker) with the given (default) layout: the one test of whether a
 * frame is Python's (the symbolizer, the maps and the native views leave these out).
 */
export function isPythonPseudoAddress(hex: string, layout: PseudoAddressLayout = DEFAULT_LAYOUT): boolean {
  return decodePseudoAddress(hex, layout) !== null;
}

/** The pseudo-address layout a process's table declares (the default without a table). */
export function layoutOf(table: PyFrameTable | null): PseudoAddressLayout {
  return table ? { tagHex: table.tagHex, kindShift: table.kindShift, idShift: table.idShift } : DEFAULT_LAYOUT;
}

/** The 8 lowercase hex digits of s from `at` as an unsigned 32-bit value; -1 when one is not a digit. */
function hexWord(s: string, at: number): number {
  let v = 0;
  for (let k = at; k < at + 8; k++) {
    const c = s.charCodeAt(k);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** line.split(/[ \t]+/) without a regular expression (the same fields, empty ones at either end included). */
function splitFields(line: string): string[] {
  const out: string[] = [];
  let start = 0;
  const n = line.length;
  for (let i = 0; i < n; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9) continue;
    out.push(line.slice(start, i));
    while (i + 1 < n && (line.charCodeAt(i + 1) === 32 || line.charCodeAt(i + 1) === 9)) i++;
    start = i + 1;
  }
  out.push(line.slice(start));
  return out;
}

const MARKER_NAMES: Record<string, PyMarkerKind> = {
  entry: 'entry',
  unmerged: 'unmerged',
  truncated: 'truncated',
  unknown: 'unknown',
};

function parseIntField(s: string): number | null {
  if (!/^-?\d{1,10}$/.test(s)) return null;
  return Number(s);
}

/**
 * Incremental reader: feed lines (without their newline), starting at the header line.
 * Used directly by a dump reader that meets `PYFRAMES/` after its maps section.
 */
/**
 * F lines this thread has read, with their entries (never changed once made): a process's table is written
 * whole at each dump, its F lines the same each time, so the next table's are looked up instead of parsed
 * (a 125 KB sidecar: ~1.2 ms parsed). Exact: an F line's entry depends only on its text and the table's layout.
 */
const frameLines = new Map<string, { layout: PseudoAddressLayout; entry: PyFrameEntry }>();
/** bound on frameLines (then it starts over): a few processes' tables */
const MAX_KNOWN_FRAME_LINES = 200_000;
/** the layouts seen, so a known line's layout is compared by identity */
const layouts: PseudoAddressLayout[] = [];

/**
 * What one F line did to its table: its entry (set, after a duplicate check against what the table holds
 * then), a problem's message (counted as an F line, nothing set), or null (a line that starts with F but is
 * another record: counted as unknown).
 */
type FrameOp = PyFrameEntry | string | null;
/** A run of F lines this thread read, with what each did: a later table that starts with the same run replays it. */
interface FrameBlock {
  text: string;
  layout: PseudoAddressLayout;
  ops: FrameOp[];
  /**
   * the frames Map the block alone makes (a table whose only F lines it is), when every line sets a frame of its
   * own: shared, read-only, by the tables that are that block again (PyFramesReader copies it before a write)
   */
  frames?: Map<string, PyFrameEntry>;
}
/**
 * The last runs read, newest first: a process's tables are written whole at each dump and only grow, so the next
 * table's F lines start with the last one's. A block replayed costs a string compare and a Map set per frame
 * instead of a line's slice, hash and lookup (the sidecars were a tenth of a reader's time on deep stacks).
 */
const frameBlocks: FrameBlock[] = [];
/** blocks kept at most (a few processes' tables), and the longest kept */
const MAX_FRAME_BLOCKS = 8;
const MAX_FRAME_BLOCK_CHARS = 8 * 1024 * 1024;

export class PyFramesReader {
  private table: PyFrameTable | null = null;
  private lineNo = 0;
  private ended = false;
  private frameLines = 0;
  private readonly headerProblems: PyFramesProblem[] = [];
  /** while a run of F lines is read (pushFrameBlock): what each line did, in order */
  private recording: FrameOp[] | null = null;
  /** the table's frames are a block's shared Map (FrameBlock.frames): copied before the table sets a frame */
  private sharedFrames = false;

  constructor(private readonly source: PyFrameTable['source']) {}

  /** Feeds one line; returns false once the table has ended (END seen) or cannot start. */
  push(rawLine: string): boolean {
    this.lineNo++;
    if (this.ended) return false;
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (this.table === null) {
      if (line.trim() === '') return true;
      this.table = this.parseHeader(line);
      return this.table !== null;
    }
    const t = this.table;
    if (line.trim() === '' || line.startsWith('#')) {
      if (line.startsWith('#')) this.parseComment(line, t);
      return true;
    }
    if (line.charCodeAt(0) === 70 /* F */ && this.knownFrame(line, t)) return true;
    const f = splitFields(line);
    switch (f[0]) {
      case 'F':
        this.parseFrame(f, t, line);
        return true;
      case 'M':
        this.parseMarker(f, t);
        return true;
      case 'C':
        // a context has ~30 records; a runaway producer is cut here and the reader calls it damaged
        t.contextRecords ??= [];
        if (t.contextRecords.length <= MAX_CONTEXT_RECORDS)
          t.contextRecords.push({ line: this.lineNo, fields: f.slice(1) });
        return true;
      case 'END': {
        this.ended = true;
        t.complete = true;
        const n = f.length > 1 ? parseIntField(f[1]) : null;
        t.declaredCount = n;
        if (n === null) this.problem(t, 'END without a count');
        else if (n !== this.frameLines)
          this.problem(t, `END declares ${n} frames, the table has ${this.frameLines} F lines`);
        return false;
      }
      default:
        t.unknownRecords++;
        this.recording?.push(null);
        return true;
    }
  }

  /** The table read so far (null when no valid header was seen). Flags a missing END. */
  finish(): PyFrameTable | null {
    const t = this.table;
    if (t && !this.ended && !t.problems.some((p) => p.message.startsWith('no END'))) {
      t.problems.push({
        line: this.lineNo,
        message: 'no END line: the table may be incomplete (writer stopped or file cut)',
      });
    }
    return t;
  }

  get headerProblemsSeen(): readonly PyFramesProblem[] {
    return this.headerProblems;
  }

  private problem(t: PyFrameTable, message: string): void {
    if (t.problems.length < MAX_PROBLEMS) t.problems.push({ line: this.lineNo, message });
  }

  private parseHeader(line: string): PyFrameTable | null {
    if (!line.startsWith(HEADER_PREFIX)) {
      this.headerProblems.push({ line: this.lineNo, message: 'not a PYFRAMES table (missing header)' });
      return null;
    }
    const fields = line.split(/[ \t]+/);
    const version = Number(fields[0].slice(HEADER_PREFIX.length));
    if (!Number.isInteger(version) || version !== 1) {
      this.headerProblems.push({
        line: this.lineNo,
        message: `unsupported table version ${sanitizeDisplayText(fields[0], 32)}`,
      });
      return null;
    }
    const header: Record<string, string> = {};
    for (const kv of fields.slice(1, 64)) {
      const eq = kv.indexOf('=');
      if (eq <= 0) continue;
      const key = sanitizeDisplayText(kv.slice(0, eq), 64);
      header[key] = decodePyString(kv.slice(eq + 1), 256);
    }
    const t: PyFrameTable = {
      version,
      tagHex: '7079',
      kindShift: 44,
      idShift: 4,
      pid: null,
      python: null,
      token: null,
      granularity: header.granularity === 'function' ? 'function' : 'line',
      header,
      stats: {},
      frames: new Map(),
      markers: new Map(),
      complete: false,
      declaredCount: null,
      unknownRecords: 0,
      problems: [],
      source: this.source,
    };
    if (header.tag !== undefined) {
      const m = /^0x([0-9a-fA-F]{1,4})$/.exec(header.tag);
      if (m && parseInt(m[1], 16) >= 0x10 && parseInt(m[1], 16) <= 0xfffe)
        t.tagHex = parseInt(m[1], 16).toString(16).padStart(4, '0');
      else this.problem(t, `bad tag= value, using 0x7079`);
    }
    const ks = header.kind_shift !== undefined ? parseIntField(header.kind_shift) : 44;
    const is = header.id_shift !== undefined ? parseIntField(header.id_shift) : 4;
    if (ks !== null && is !== null && is >= 0 && ks > is && ks <= 44) {
      t.kindShift = ks;
      t.idShift = is;
    } else this.problem(t, 'bad kind_shift/id_shift, using 44/4');
    if (header.pid !== undefined) t.pid = parseIntField(header.pid);
    if (header.python !== undefined && /^\d+\.\d+(\.\d+)?[a-z0-9+]*$/.test(header.python)) t.python = header.python;
    if (header.token !== undefined && /^[0-9a-fA-F]{1,64}$/.test(header.token)) t.token = header.token.toLowerCase();
    return t;
  }

  private parseComment(line: string, t: PyFrameTable): void {
    for (const kv of line
      .slice(1)
      .trim()
      .split(/[ \t]+/)
      .slice(0, 64)) {
      const m = /^([A-Za-z_][A-Za-z0-9_]{0,63})=(\d{1,19})$/.exec(kv);
      if (m) t.stats[m[1]] = Number(m[2]);
    }
  }

  /** the table's layout, one object per distinct layout in this thread (known F lines are matched by it) */
  private layout(t: PyFrameTable): PseudoAddressLayout {
    for (const l of layouts)
      if (l.tagHex === t.tagHex && l.kindShift === t.kindShift && l.idShift === t.idShift) return l;
    const l = { tagHex: t.tagHex, kindShift: t.kindShift, idShift: t.idShift };
    if (layouts.length < 16) layouts.push(l);
    return l;
  }

  /**
   * An F line this thread read before (in an earlier table, the same layout): its entry again, with what reading
   * it does to the table (counted, a duplicate address reported, set). False when it has not been read.
   */
  private knownFrame(line: string, t: PyFrameTable): boolean {
    const m = frameLines.get(line);
    if (m === undefined || m.layout !== this.layout(t)) return false;
    this.setFrame(t, m.entry);
    return true;
  }

  /** An F line's entry into the table (a parsed line, a known one, or one replayed from a block). */
  private setFrame(t: PyFrameTable, entry: PyFrameEntry): void {
    if (this.sharedFrames) {
      t.frames = new Map(t.frames);
      this.sharedFrames = false;
    }
    this.frameLines++;
    if (t.frames.has(entry.addr)) this.problem(t, `duplicate F line for ${entry.addr}; the last one is used`);
    t.frames.set(entry.addr, entry);
    this.recording?.push(entry);
  }

  /** An F line that sets nothing: counted, and its problem said. */
  private badFrame(t: PyFrameTable, message: string): void {
    this.frameLines++;
    this.problem(t, message);
    this.recording?.push(message);
  }

  /** Whether the next lines may go through pushFrameBlock: inside a table, before its END. */
  get inTable(): boolean {
    return this.table !== null && !this.ended;
  }

  /**
   * The run of F lines text[s, e) (each line starting with F, e at the last one's newline or the text's end):
   * exactly what pushing each line does, with the part that repeats a block read before replayed from it.
   */
  pushFrameBlock(text: string, s: number, e: number): void {
    const t = this.table as PyFrameTable;
    const layout = this.layout(t);
    const block = text.slice(s, e);
    let k = frameBlocks.findIndex(
      (b) =>
        b.layout === layout &&
        block.startsWith(b.text) &&
        (block.length === b.text.length || block.charCodeAt(b.text.length) === 10),
    );
    const known = k >= 0 ? frameBlocks[k] : null;
    const fromEmpty = t.frames.size === 0;
    if (known?.frames && fromEmpty && known.text.length === block.length) {
      // the table is that block again: the same frames (each line sets its own), without a Map set per line
      this.lineNo += known.ops.length;
      this.frameLines += known.ops.length;
      t.frames = known.frames;
      this.sharedFrames = true;
      frameBlocks.splice(k, 1);
      frameBlocks.unshift(known);
      return;
    }
    // a copy, not a spread into push: a kept run may have ~80,000 lines, past a call's argument limit
    const ops: FrameOp[] = known ? known.ops.slice() : [];
    let at = s;
    if (known) {
      for (const op of known.ops) {
        this.lineNo++;
        if (op === null) t.unknownRecords++;
        else if (typeof op === 'string') this.badFrame(t, op);
        else this.setFrame(t, op);
      }
      at = s + known.text.length + 1;
    }
    this.recording = ops;
    while (at <= e) {
      let n = text.indexOf('\n', at);
      if (n < 0 || n > e) n = e;
      this.push(text.slice(at, n));
      at = n + 1;
    }
    this.recording = null;
    // a table of this block alone whose every line set a frame of its own: its Map is the block's from now on
    const alone = fromEmpty && t.frames.size === ops.length ? t.frames : undefined;
    if (known && known.text.length === block.length) {
      frameBlocks.splice(k, 1);
      frameBlocks.unshift(known);
      if (alone && !known.frames) [known.frames, this.sharedFrames] = [alone, true];
    } else if (block.length <= MAX_FRAME_BLOCK_CHARS) {
      // the grown table's block takes the place of the one it grew from
      if (k < 0) k = frameBlocks.length >= MAX_FRAME_BLOCKS ? frameBlocks.length - 1 : frameBlocks.length;
      frameBlocks.splice(k, 1);
      frameBlocks.unshift({ text: block, layout, ops, ...(alone ? { frames: alone } : {}) });
      if (alone) this.sharedFrames = true;
    }
  }

  private parseFrame(f: string[], t: PyFrameTable, text: string): void {
    if (f.length < 6) {
      this.badFrame(t, 'F line with fewer than 5 fields, skipped');
      return;
    }
    const addr = normalizeHexAddress(f[1]);
    const pa = addr ? decodePseudoAddress(addr, this.layout(t)) : null;
    if (!pa || pa.kind !== PY_KIND_FRAME) {
      this.badFrame(t, 'F line whose address is not a frame pseudo-address, skipped');
      return;
    }
    const line = parseIntField(f[2]);
    const first = parseIntField(f[3]);
    const entry: PyFrameEntry = {
      addr: pa.addr,
      function: decodePyString(f[4], MAX_FUNCTION_CHARS),
      file: decodePyString(f[5], MAX_FILE_CHARS),
      line: line !== null && line > 0 ? line : null,
      firstLine: first !== null && first > 0 ? first : null,
    };
    this.setFrame(t, entry);
    if (frameLines.size >= MAX_KNOWN_FRAME_LINES) frameLines.clear();
    frameLines.set(text, { layout: this.layout(t), entry });
  }

  private parseMarker(f: string[], t: PyFrameTable): void {
    if (f.length < 3) {
      this.problem(t, 'M line with fewer than 2 fields, skipped');
      return;
    }
    const addr = normalizeHexAddress(f[1]);
    const pa = addr ? decodePseudoAddress(addr, this.layout(t)) : null;
    const kind = MARKER_NAMES[f[2]];
    if (!pa || kind === undefined) return; // unknown marker names are future extensions
    t.markers.set(pa.addr, kind);
  }
}

/** Parses a whole table (a sidecar's text, or any text whose first non-blank line is the header). */
export function parsePyFrames(text: string, source: PyFrameTable['source'] = 'text'): PyFrameTable | null {
  const r = new PyFramesReader(source);
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (text.charCodeAt(start) === 70 /* F */ && r.inTable) {
      // the whole run of F lines at once (PyFramesReader.pushFrameBlock)
      while (end < text.length && text.charCodeAt(end + 1) === 70) {
        const next = text.indexOf('\n', end + 1);
        end = next < 0 ? text.length : next;
      }
      r.pushFrameBlock(text, start, end);
      start = end + 1;
      continue;
    }
    if (!r.push(text.slice(start, end))) break;
    start = end + 1;
  }
  return r.finish();
}

/**
 * Finds a table appended to a dump: a `PYFRAMES/` line after `MAPPED_LIBRARIES:` (or anywhere, for a
 * dump without maps). Returns null when the dump has none.
 */
export function findPyFramesInDump(dumpText: string): PyFrameTable | null {
  let at = -1;
  if (dumpText.startsWith(HEADER_PREFIX)) at = 0;
  else {
    const maps = dumpText.indexOf('\nMAPPED_LIBRARIES:');
    at = dumpText.indexOf('\n' + HEADER_PREFIX, maps >= 0 ? maps : 0);
    if (at >= 0) at += 1;
  }
  if (at < 0) return null;
  return parsePyFrames(dumpText.slice(at), 'dump');
}

/** What merging tables has gathered: the frames and markers so far, problems, conflicts. */
interface MergeState {
  frames: Map<string, PyFrameEntry>;
  /** counts merges that changed what an address is named (a new address, or another name for one) */
  version: number;
  /**
   * each frames Map merged (a reader's shared one: tables of the same F lines), with `version` after it: a Map
   * merged again while nothing has been renamed since names every address as the merge does already
   */
  mergedAt: WeakMap<Map<string, PyFrameEntry>, number>;
  markers: PyFrameTable['markers'];
  problems: PyFrameTable['problems'];
  conflicts: string[];
}

function newMergeState(): MergeState {
  return { frames: new Map(), version: 0, mergedAt: new WeakMap(), markers: new Map(), problems: [], conflicts: [] };
}

/** One table into the merge, after those before it (a later table's name of an address wins). */
function mergeInto(m: MergeState, t: PyFrameTable): void {
  // frames merged before, none renamed since: each is already the merge's entry for its address, or one equal to it
  // in every field (two readers' tables of the same F lines, whose dumps alternate between them)
  if (m.mergedAt.get(t.frames) !== m.version)
    for (const [a, e] of t.frames) {
      const prev = m.frames.get(a);
      // the same entry again (a reader gives a repeated F line one entry): setting it would change nothing
      if (prev === e) continue;
      if (prev && (prev.function !== e.function || prev.file !== e.file || prev.line !== e.line)) {
        if (m.conflicts.length < 20)
          m.conflicts.push(`${a} is ${prev.function} in one table and ${e.function} in another`);
      }
      if (!prev || !sameEntry(prev, e)) m.version++;
      m.frames.set(a, e);
    }
  m.mergedAt.set(t.frames, m.version);
  for (const [a, k] of t.markers) m.markers.set(a, k);
  m.problems.push(...t.problems.slice(0, MAX_PROBLEMS - m.problems.length));
}

/** Two entries that say the same in every field (two readers' entries of one F line). */
function sameEntry(a: PyFrameEntry, b: PyFrameEntry): boolean {
  return (
    a.addr === b.addr &&
    a.function === b.function &&
    a.file === b.file &&
    a.line === b.line &&
    a.firstLine === b.firstLine &&
    a.native === b.native &&
    a.module === b.module
  );
}

function sameLayout(a: PyFrameTable, b: PyFrameTable): boolean {
  return a.tagHex === b.tagHex && a.kindShift === b.kindShift && a.idShift === b.idShift;
}

/**
 * Combines the tables of one process's dumps as they come (each is cumulative, so later tables extend earlier
 * ones), so a process's last dump leaves little to merge: a loader adds each dump's table while the readers
 * read the next dumps, instead of merging a hundred tables of ~1,000 frames after the last one. An address named
 * differently by two tables (a reused pid, a stale sidecar) is reported and the later name kept. A table of
 * another pseudo-address layout than the last one is left out (and said): tables of two layouts are merged
 * again at the end, against the last.
 */
export class PyFrameTableMerger {
  private readonly tables: PyFrameTable[] = [];
  private readonly state = newMergeState();
  /** every table so far has the first one's layout: `state` is the merge */
  private uniform = true;

  add(t: PyFrameTable): void {
    this.tables.push(t);
    if (this.uniform && !sameLayout(t, this.tables[0])) this.uniform = false;
    if (this.uniform) mergeInto(this.state, t);
  }

  get size(): number {
    return this.tables.length;
  }

  /** The merged table of the tables so far (its maps are its own: later tables do not change it). */
  result(): { table: PyFrameTable | null; conflicts: string[] } {
    const tables = this.tables;
    if (tables.length === 0) return { table: null, conflicts: [] };
    if (tables.length === 1) return { table: tables[0], conflicts: [] };
    const last = tables[tables.length - 1];
    let m = this.state;
    if (!this.uniform) {
      m = newMergeState();
      for (const t of tables) {
        if (!sameLayout(t, last)) {
          m.conflicts.push(`a table uses another pseudo-address layout (tag 0x${t.tagHex}); not merged`);
          continue;
        }
        mergeInto(m, t);
      }
    }
    const merged: PyFrameTable = {
      ...last,
      frames: new Map(m.frames),
      markers: new Map(m.markers),
      problems: [...m.problems],
      header: { ...last.header },
      stats: { ...last.stats },
    };
    merged.complete = tables.every((t) => t.complete);
    return { table: merged, conflicts: [...m.conflicts] };
  }
}

/** Combines the tables of one process's dumps (PyFrameTableMerger, all at once). */
export function mergePyFrameTables(tables: readonly PyFrameTable[]): {
  table: PyFrameTable | null;
  conflicts: string[];
} {
  const m = new PyFrameTableMerger();
  for (const t of tables) m.add(t);
  return m.result();
}

/** Sidecars larger than this are read only up to it (a table is ~100 bytes per frame row). */
export const MAX_SIDECAR_BYTES = 256 * 1024 * 1024;

/** Reads a `<dump>.pyframes` sidecar; null when it is not a PYFRAMES table. */
export async function readPyFramesSidecar(file: InputFile): Promise<PyFrameTable | null> {
  const bytes = await file.read(0, Math.min(file.size, MAX_SIDECAR_BYTES));
  const t = parsePyFrames(new TextDecoder('utf-8').decode(bytes), 'sidecar');
  if (t && file.size > MAX_SIDECAR_BYTES)
    t.problems.push({ line: 0, message: `only the first ${MAX_SIDECAR_BYTES} bytes were read` });
  return t;
}

/** A dump's sidecar as its reader task read it (in a worker, beside the dump), for the merge to use as is. */
export interface SidecarRead {
  path: string;
  /** null when the file is not a PYFRAMES table, or could not be read */
  table: PyFrameTable | null;
  /** why the file could not be read; null when it was */
  error: string | null;
}

/** Reads a sidecar; never throws (a failure is the `error` the loader turns into a warning naming the file). */
export async function readSidecar(file: InputFile): Promise<SidecarRead> {
  try {
    return { path: file.path, table: await readPyFramesSidecar(file), error: null };
  } catch (e) {
    return { path: file.path, table: null, error: e instanceof Error ? e.message : String(e) };
  }
}

/** The sidecar names a dump may have: `<dump>.pyframes`, and for a compressed copy the name without `.gz`. */
export function sidecarPathsFor(dumpPath: string): string[] {
  const out = [dumpPath + '.pyframes'];
  if (dumpPath.endsWith('.gz')) out.push(dumpPath.slice(0, -3) + '.pyframes');
  return out;
}

/**
 * The token of the table that belongs to a dump, from its maps: the producer maps a memfd named
 * `pyframes-<token>` (shown as `/memfd:pyframes-<token> (deleted)`). null when the maps have none.
 */
export function pyFramesTokenFromMaps(mapsText: string | null | undefined): string | null {
  if (!mapsText) return null;
  const m = /\/memfd:pyframes-([0-9a-fA-F]{1,64})(?=[\s]|$)/m.exec(mapsText);
  return m ? m[1].toLowerCase() : null;
}
