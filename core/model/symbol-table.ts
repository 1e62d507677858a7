// A process's symbol table, part of the model (ProcessSeries.symbols), as pprof symbolizes into the profile:
// written by the one driver (core/symbolize/symbolize-job.ts), at ingest (node/dataset) or from a report, and read
// by the frame pipeline (core/frames/). Types only, and the lookup every reader uses.

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
}

/** The entry for the frame at `position` of a stack (0 = leaf). */
export function symbolAt(table: SymbolTable, addressId: number, position: number): SymbolizedAddress | undefined {
  return position === 0
    ? (table.leaf[addressId] ?? table.caller[addressId])
    : (table.caller[addressId] ?? table.leaf[addressId]);
}
