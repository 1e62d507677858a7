// Python frames from systing's heap profiler: its stacks carry 0x5059-tagged slots (code id +
// instruction index) named by a `pycode-<pid>-<token>.map` code map. We re-express each slot as a
// PYFRAMES/1 pseudo-address with a table entry, so every view (merged, python, native) treats both
// producers alike. The address table is rewritten in place: a slot's frames keep their stack positions.

import { DEFAULT_LAYOUT, PY_KIND_ENTRY, PY_KIND_FRAME, type PyFrameTable } from '../formats/pyframes.js';
import { decodeSystingSlot, systingFrame, type SystingCodeMap } from '../formats/systing-codemap.js';
import type { AddressTable } from '../model/model.js';

const TAG = BigInt('0x' + DEFAULT_LAYOUT.tagHex) << 48n;
// Ids for adopted frames start high so they never meet a PYFRAMES producer's own ids (counted from 1).
const FIRST_ID = 1 << 30;

function pseudo(kind: number, id: number): string {
  return (
    '0x' +
    (
      TAG |
      (BigInt(kind) << BigInt(DEFAULT_LAYOUT.kindShift)) |
      (BigInt(id) << BigInt(DEFAULT_LAYOUT.idShift))
    ).toString(16)
  );
}

function emptyTable(map: SystingCodeMap): PyFrameTable {
  return {
    version: 1,
    tagHex: DEFAULT_LAYOUT.tagHex,
    kindShift: DEFAULT_LAYOUT.kindShift,
    idShift: DEFAULT_LAYOUT.idShift,
    pid: map.pid,
    python: `3.${map.minor}`,
    token: null,
    granularity: 'line',
    header: { producer: 'systing', token: map.token },
    stats: {},
    frames: new Map(),
    markers: new Map(),
    complete: true,
    declaredCount: null,
    unknownRecords: 0,
    problems: [],
    source: 'text',
  };
}

export interface AdoptResult {
  table: PyFrameTable | null;
  /** slots rewritten */
  adopted: number;
  /** frame slots whose code id the map does not have (shown as unresolved Python frames) */
  unknown: number;
}

/**
 * Rewrites the systing slots among `addresses` into PYFRAMES pseudo-addresses and names them from
 * `map`, adding to `existing` (a process may have both producers' frames) or to a new table.
 */
export function adoptSystingFrames(
  addresses: AddressTable,
  map: SystingCodeMap,
  existing: PyFrameTable | null,
): AdoptResult {
  // a copy to add to: a table's Maps may be shared with other dumps' tables (a reader's repeated block of F lines)
  let table = existing && { ...existing, frames: new Map(existing.frames), markers: new Map(existing.markers) };
  let nextId = FIRST_ID;
  let adopted = 0;
  let unknown = 0;
  for (let i = 0; i < addresses.hex.length; i++) {
    const hex = addresses.hex[i];
    const slot = decodeSystingSlot(hex);
    if (!slot) continue;
    table ??= emptyTable(map);
    let addr: string;
    if (slot.entry) {
      addr = pseudo(PY_KIND_ENTRY, 0);
      table.markers.set(addr, 'entry');
    } else {
      addr = pseudo(PY_KIND_FRAME, nextId++);
      const f = systingFrame(map, slot);
      if (f) {
        const code = map.codes.get(slot.id);
        table.frames.set(addr, {
          addr,
          function: f.function,
          file: f.file,
          line: f.line,
          firstLine: code?.firstLine ?? null,
        });
      } else {
        unknown++;
      }
    }
    addresses.hex[i] = addr;
    addresses.index.delete(hex);
    addresses.index.set(addr, i);
    adopted++;
  }
  return { table, adopted, unknown };
}
