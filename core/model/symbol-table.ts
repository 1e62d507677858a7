// A process's symbol table, part of the model (ProcessSeries.symbols), as pprof symbolizes into the profile:
// written by the one driver (core/symbolize/symbolize-job.ts), at ingest (node/dataset) or from a report, and read
// by the frame pipeline (core/frames/). Types, and the lookup every reader uses.

import { basename } from '../formats/dump-filename.js';
import { findMapping, type MapsEntry } from '../formats/proc-maps.js';

/** How sure we are the file read is the one that was mapped (core/symbolize/locate.ts). */
export type BinaryCheck = 'verified' | 'unverified' | 'mismatch';

export interface SymbolFrame {
  function: string | null;
  file: string | null;
  line: number | null;
  column?: number;
}

export type SymbolStatus = 'symbolized' | 'symbol-only' | 'unresolved' | 'no-binary';

export interface SymbolizedAddress {
  /** the address as in the dump ("0x7f…") */
  address: string;
  /** base name of the mapped file (or of the perf map for JIT frames); null outside every mapping */
  module: string | null;
  modulePath: string | null;
  /** file offset of the address within the module ("0x1234"), as `module+0x1234` shows it */
  moduleOffset: string | null;
  /** innermost inlined frame first; the last one is the real function. Empty when unresolved. */
  frames: SymbolFrame[];
  status: SymbolStatus;
  /** how sure we are the file we read is the one that was mapped; null when no file was read */
  binary: BinaryCheck | null;
  /** a CPython -X perf trampoline (`py::qualname:file` in a perf map): the frame is a Python function */
  python?: boolean;
}

export interface ModuleReport {
  mappingPath: string;
  binaryPath: string | null;
  debugPath: string | null;
  /** the build-id of the file found at the path (its ELF note) */
  buildId: string | null;
  /** the build-id the mapping names (pprof profiles), which the found file must have; absent or null without one */
  mappingBuildId?: string | null;
  binary: BinaryCheck | null;
  reason: string;
  addresses: number;
  error: string | null;
}

/**
 * Per address id, looked up as a leaf (position 0 of a stack: the PC itself) and as a caller (position > 0: a
 * return address, looked up at PC − 1 so it lands on the call instruction, as jeprof and pprof do). An address
 * used both ways has both entries; an address used one way has `undefined` in the other array. Python
 * pseudo-addresses are never symbolized here and stay `undefined` in both.
 */
export interface SymbolTable {
  leaf: (SymbolizedAddress | undefined)[];
  caller: (SymbolizedAddress | undefined)[];
  modules: ModuleReport[];
  /**
   * The addresses nothing was found for, with no entry in `leaf` or `caller`: per address id, a LEAN_* kind as a leaf
   * (bits 0–1) and as a caller (bits 2–3). Such an entry is the address and its mapping alone, made when read
   * (symbolEntry): an object each was 2.5 M objects (~300 MB) for a 1,000-process job whose binaries are elsewhere.
   */
  lean?: Uint8Array;
}

/** A lean entry's kind: in a file mapping whose binary was not found ('no-binary') */
export const LEAN_NO_BINARY = 1;
/** … in no file mapping, and named by no perf map ('unresolved') */
export const LEAN_UNMAPPED = 2;

/** What symbolEntry reads of a process. */
export interface SymbolSource {
  addresses: { hex: readonly string[] };
  maps?: readonly MapsEntry[] | null;
  symbols?: SymbolTable | null;
}

/** The entry of address `addressId` of `proc` looked up as a leaf or as a caller (SymbolTable), lean or not. */
export function symbolEntry(proc: SymbolSource, addressId: number, caller: boolean): SymbolizedAddress | undefined {
  const table = proc.symbols;
  if (!table) return undefined;
  const e = caller ? table.caller[addressId] : table.leaf[addressId];
  if (e || !table.lean) return e;
  const kind = (table.lean[addressId] >> (caller ? 2 : 0)) & 3;
  return kind === 0 ? undefined : leanEntry(proc.addresses.hex[addressId], proc.maps ?? [], caller, kind);
}

/** The entry for the frame at `position` of a stack (0 = leaf). */
export function symbolAt(proc: SymbolSource, addressId: number, position: number): SymbolizedAddress | undefined {
  return position === 0
    ? (symbolEntry(proc, addressId, false) ?? symbolEntry(proc, addressId, true))
    : (symbolEntry(proc, addressId, true) ?? symbolEntry(proc, addressId, false));
}

/**
 * A lean entry as the symbolizer would have written it: the mapping is the one holding the address (PC − 1 for a
 * caller), the offset is the address's in that mapping's file.
 */
export function leanEntry(hex: string, maps: readonly MapsEntry[], caller: boolean, kind: number): SymbolizedAddress {
  const pc = BigInt(hex);
  const entry = findMapping(maps, caller && pc > 0n ? pc - 1n : pc);
  return kind === LEAN_NO_BINARY && entry && entry.path
    ? moduleEntry(hex, pc, entry, 'no-binary', null)
    : unmappedEntry(hex, pc, entry);
}

/**
 * The entry of address `pc` (written `hex`) in the file mapping `entry`, before its lookup fills in frames: the
 * module's base name and the address's offset in its file.
 */
export function moduleEntry(
  hex: string,
  pc: bigint,
  entry: MapsEntry,
  status: SymbolStatus,
  binary: BinaryCheck | null,
): SymbolizedAddress {
  return {
    address: hex,
    module: basename(entry.path),
    modulePath: entry.path,
    moduleOffset: '0x' + (pc - entry.start + entry.offset).toString(16),
    frames: [],
    status,
    binary,
  };
}

/** The entry of address `pc` (written `hex`) in no file mapping that nothing named: the mapping's path, if it has one. */
export function unmappedEntry(hex: string, pc: bigint, entry: MapsEntry | null): SymbolizedAddress {
  const at = entry && entry.path ? entry : null;
  return {
    address: hex,
    module: at ? at.path : null,
    modulePath: at ? at.path : null,
    moduleOffset: at ? '0x' + (pc - at.start + at.offset).toString(16) : null,
    frames: [],
    status: 'unresolved',
    binary: null,
  };
}
