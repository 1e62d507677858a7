// Python names in perf maps (`/tmp/perf-<pid>.map`, "<start hex> <size hex> <name>" per line; the
// Linux perf JIT interface). CPython 3.12+ with `-X perf` (PYTHONPERFSUPPORT=1) writes one line per
// code object for its trampoline: name `py::<qualname>:<filename>`. The file name may contain spaces
// and colons, a qualname never contains ':', so the name splits at the first ':' after `py::`.
// Function granularity only (no lines), and an unwinder stops at the first trampoline, so these
// name at most the innermost Python function of a stack: a secondary source after PYFRAMES.
// The file is written by the profiled process: lines are bounded and names sanitized.
// (core/symbolize/perf-map.ts looks PCs up in perf maps in general; this module reads the Python names.)

import { sanitizeDisplayText, MAX_FILE_CHARS, MAX_FUNCTION_CHARS } from './pyframes.js';

export interface PerfMapLine {
  start: bigint;
  /** exclusive; start + size (size 0 counts as 1) */
  end: bigint;
  /** raw symbol name, sanitized and bounded */
  name: string;
}

export interface PythonPerfName {
  function: string;
  file: string;
}

const MAX_LINE = 16384;
const LINE = /^([0-9a-fA-F]{1,16}) ([0-9a-fA-F]{1,16}) (.+)$/;

/** Parses one perf map line (`<start> <size> <name>`, no 0x, the name is the rest); null otherwise. */
export function parsePerfMapLine(raw: string): PerfMapLine | null {
  if (raw.length > MAX_LINE) return null;
  const m = LINE.exec(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
  if (!m) return null;
  const start = BigInt('0x' + m[1]);
  const size = BigInt('0x' + m[2]);
  return {
    start,
    end: start + (size > 0n ? size : 1n),
    name: sanitizeDisplayText(m[3], MAX_FILE_CHARS + MAX_FUNCTION_CHARS),
  };
}

/** `py::<qualname>:<filename>` → its parts; null for other names. */
export function parsePythonPerfName(name: string): PythonPerfName | null {
  if (!name.startsWith('py::')) return null;
  const rest = name.slice(4);
  const colon = rest.indexOf(':');
  if (colon <= 0) return null;
  return {
    function: sanitizeDisplayText(rest.slice(0, colon), MAX_FUNCTION_CHARS),
    file: sanitizeDisplayText(rest.slice(colon + 1), MAX_FILE_CHARS),
  };
}
