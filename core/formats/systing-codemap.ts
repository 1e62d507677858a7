// Reader of systing-heap's Python code maps (`pycode-<pid>-<token>.map`), the other public producer
// of Python frames in jemalloc stacks (josefbacik/systing, heap/; format as its reader documents it):
//
//   # systing-pycode 1 token=<hex> pid=<pid> python=3.<minor>
//   <id hex> <firstlineno> <kind>:<qualname hex> <kind>:<file hex> <co_linetable hex | ->
//
// `kind` is the str's storage width (1 Latin-1, 2 UTF-16, 4 UTF-32; 0 = not read). A stack slot is
// `0x5059 << 48 | code id << 24 | (instruction index + 1)` (index field 0: the frame had not started;
// code id 0: an interpreter entry frame, which only marks where a run of Python frames belongs).
// Lines are computed here from the shipped CPython 3.11+ location table. The process also maps a
// memfd named `systing-pycode-<token>`, so a dump's maps name the code map that belongs to it.
// Everything is untrusted: bounded lengths, control characters replaced, a last line without its
// newline skipped (the writer may have been cut off mid-line).

import { sanitizeDisplayText } from './pyframes.js';

export const SYSTING_TAG = 0x5059;
const MAX_NAME_CHARS = 1024;
const MAX_FILE_CHARS = 4096;
const MAX_LINETABLE_BYTES = 65536;
const UNKNOWN_ID = 0xffffff;

export interface SystingCode {
  id: number;
  firstLine: number;
  function: string;
  file: string;
  /** CPython co_linetable bytes; null when the producer could not read it */
  linetable: Uint8Array | null;
}

export interface SystingCodeMap {
  token: string;
  pid: number | null;
  /** Python 3.<minor> that wrote it */
  minor: number;
  codes: Map<number, SystingCode>;
  /** lines that were not code objects (count) */
  skipped: number;
}

export type SystingSlot = { entry: true } | { entry: false; id: number; inst: number | null };

/** Decodes a systing slot; null for anything else (addresses, PYFRAMES values). */
export function decodeSystingSlot(hex: string): SystingSlot | null {
  if (hex.length !== 18 || !hex.toLowerCase().startsWith('0x5059')) return null;
  const v = BigInt(hex);
  const id = Number((v >> 24n) & 0xffffffn);
  const index = Number(v & 0xffffffn);
  if (id === 0) return { entry: true };
  return { entry: false, id, inst: index === 0 ? null : index - 1 };
}

function bytesOfHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

/** `<kind>:<hex>` → text of at most maxChars characters; null when malformed or longer. */
function textOf(field: string, maxChars: number): string | null {
  const colon = field.indexOf(':');
  if (colon < 0) return null;
  const kind = field.slice(0, colon);
  const hex = field.slice(colon + 1);
  if (kind === '0') return '';
  const width = kind === '1' ? 1 : kind === '2' ? 2 : kind === '4' ? 4 : 0;
  if (width === 0 || hex.length > 2 * width * maxChars) return null;
  const raw = bytesOfHex(hex);
  if (!raw || raw.length % width !== 0) return null;
  let s = '';
  for (let i = 0; i < raw.length; i += width) {
    let cp = raw[i];
    if (width >= 2) cp |= raw[i + 1] << 8;
    if (width === 4) cp = (cp | (raw[i + 2] << 16) | (raw[i + 3] << 24)) >>> 0;
    // lone surrogates and out-of-range values cannot be shown
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) cp = 0xfffd;
    s += String.fromCodePoint(cp);
  }
  return sanitizeDisplayText(s, maxChars);
}

/** Parses a code map; null without a valid header. */
export function parseSystingCodeMap(text: string): SystingCodeMap | null {
  const lastNl = text.lastIndexOf('\n');
  const body = lastNl < 0 ? '' : text.slice(0, lastNl + 1);
  const lines = body.split('\n');
  const head = /^# systing-pycode 1 (.*)$/.exec((lines[0] ?? '').replace(/\r$/, ''));
  if (!head) return null;
  const kv = new Map<string, string>();
  for (const f of head[1].split(' ')) {
    const eq = f.indexOf('=');
    if (eq > 0) kv.set(f.slice(0, eq), f.slice(eq + 1));
  }
  const token = kv.get('token') ?? '';
  if (!/^[0-9a-fA-F]{1,64}$/.test(token)) return null;
  const py = /^3\.(\d{1,3})$/.exec(kv.get('python') ?? '');
  // the location table decoded here is CPython 3.11+'s (3.10 and older use co_lnotab)
  if (!py || Number(py[1]) < 11) return null;
  const pidText = kv.get('pid') ?? '';
  const map: SystingCodeMap = {
    token: token.toLowerCase(),
    pid: /^\d{1,10}$/.test(pidText) ? Number(pidText) : null,
    minor: Number(py[1]),
    codes: new Map(),
    skipped: 0,
  };
  for (const raw of lines.slice(1)) {
    const line = raw.replace(/\r$/, '');
    if (line === '') continue;
    const f = line.split(' ');
    const code = parseCodeLine(f);
    if (code) map.codes.set(code.id, code);
    else map.skipped++;
  }
  return map;
}

function parseCodeLine(f: string[]): SystingCode | null {
  if (f.length < 5 || !/^[0-9a-fA-F]{1,6}$/.test(f[0]) || !/^-?\d{1,10}$/.test(f[1])) return null;
  const id = parseInt(f[0], 16);
  if (id === 0 || id === UNKNOWN_ID) return null;
  const fn = textOf(f[2], MAX_NAME_CHARS);
  const file = textOf(f[3], MAX_FILE_CHARS);
  if (fn === null || file === null) return null;
  let linetable: Uint8Array | null = null;
  if (f[4] !== '-') {
    if (f[4].length > 2 * MAX_LINETABLE_BYTES) return null;
    linetable = bytesOfHex(f[4]);
    if (!linetable) return null;
  }
  return { id, firstLine: Number(f[1]), function: fn, file, linetable };
}

/**
 * The source line of code unit `inst` from a CPython 3.11+ location table (co_linetable), starting at
 * co_firstlineno; null when the table has no line there (or is malformed). Each entry: a first byte
 * with bit 7 set, bits 3-6 a form code, bits 0-2 the number of code units minus one, then:
 * 0-9 short form (1 byte, same line), 10-12 one-line form (2 bytes, line +0..2), 13 no columns
 * (signed varint line delta), 14 long form (signed varint line delta, 3 varints), 15 no location.
 */
export function lineForInstruction(table: Uint8Array, firstLine: number, inst: number): number | null {
  let i = 0;
  let line = firstLine;
  let addr = 0;
  const varint = (): number | null => {
    let shift = 0;
    let val = 0;
    for (;;) {
      if (i >= table.length || shift > 28) return null;
      const b = table[i++];
      val += (b & 63) * 2 ** shift;
      shift += 6;
      if (!(b & 64)) return val;
    }
  };
  const svarint = (): number | null => {
    const u = varint();
    if (u === null) return null;
    return u % 2 === 1 ? -Math.floor(u / 2) : u / 2;
  };
  while (i < table.length) {
    const first = table[i++];
    if (!(first & 0x80)) return null;
    const form = (first >> 3) & 15;
    const len = (first & 7) + 1;
    let delta = 0;
    if (form === 15) delta = 0;
    else if (form === 14) {
      const d = svarint();
      if (d === null || varint() === null || varint() === null || varint() === null) return null;
      delta = d;
    } else if (form === 13) {
      const d = svarint();
      if (d === null) return null;
      delta = d;
    } else if (form >= 10) {
      delta = form - 10;
      i += 2;
    } else i += 1;
    line += delta;
    if (inst < addr + len) return form === 15 ? null : line;
    addr += len;
  }
  return null;
}

export interface SystingFrame {
  function: string;
  file: string;
  line: number | null;
}

/** Names a slot's frame; null for an id the map does not have (and for entry slots). */
export function systingFrame(map: SystingCodeMap, slot: SystingSlot): SystingFrame | null {
  if (slot.entry) return null;
  const code = map.codes.get(slot.id);
  if (!code) return null;
  let line: number | null;
  if (slot.inst === null)
    line = code.firstLine; // not started: the line the function starts on
  else if (code.linetable) line = lineForInstruction(code.linetable, code.firstLine, slot.inst);
  else line = null;
  return { function: code.function, file: code.file, line: line !== null && line > 0 ? line : null };
}

/** The token of the code map a dump belongs to, from its maps' `systing-pycode-<token>` mapping. */
export function systingTokenFromMapsPaths(paths: Iterable<string>): string | null {
  for (const p of paths) {
    const at = p.indexOf('systing-pycode-');
    if (at < 0) continue;
    const token = p.slice(at + 'systing-pycode-'.length).split(' ')[0];
    if (/^[0-9a-fA-F]{1,64}$/.test(token)) return token.toLowerCase();
  }
  return null;
}

/** True for code map file names: pycode-<pid>-<token>.map */
export function isSystingCodeMapName(name: string): boolean {
  return /^pycode-\d+-[0-9a-fA-F]{1,64}\.map$/.test(name);
}
