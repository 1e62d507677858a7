// A reader's sidecar tables sent as deltas: jemalloc's Python capture writes nearly the same ~1,000 F lines in
// every sidecar of a process, and cloning each dump's table for postMessage was most of a result's cost on both
// sides (the reader's sidecar parser already gives a repeated F line the same entry object). The reader numbers
// each entry the first time it sends it and afterwards sends its number; the pool's thread keeps the entries
// by number, per reader, and rebuilds each table's map. One message channel per reader delivers in order, so
// the numbers arrive before their use.

import type { PyFrameEntry } from '../formats/pyframes.js';
import type { DumpTaskResult } from './dump-task.js';

/** A table's frames on the wire: entry numbers in the map's order, with the entries this reader sends first. */
export interface FramesDelta {
  /** the reader forgot what it sent (its cap): the receiver forgets too, before reading `fresh` */
  reset: boolean;
  /** entries numbered from what the receiver holds: fresh[k] is number held + k */
  fresh: PyFrameEntry[];
  /** the table's frames in map order, by number (each keyed by its entry's addr) */
  ids: Int32Array;
  /**
   * the table's frames are the last sent table's (the reader's sidecar parser gives a table that repeats a block
   * of F lines read before that block's Map): `ids` is empty and the receiver gives the table its last Map
   */
  same?: true;
}

/** Entries a reader remembers having sent, at most (then both sides start over). */
const MAX_SENT = 1 << 18;

/** The reader's side: takes a result's sidecar frames out for sending, as a delta. */
export class FramesSender {
  private readonly sent = new Map<PyFrameEntry, number>();
  /** the frames Map of the last table sent as a delta */
  private last: Map<string, PyFrameEntry> | null = null;

  constructor(private readonly maxSent: number = MAX_SENT) {}

  /**
   * The result to post, its sidecar table's frames left out (a copy: the result itself is not changed), and the
   * delta that carries them; the result as it is and null when it has no frames to send this way.
   */
  take(result: DumpTaskResult): { result: DumpTaskResult; delta: FramesDelta | null } {
    const parsed = result.parsed;
    const sidecar = parsed?.info.sidecar;
    const table = sidecar?.table;
    if (!parsed || !sidecar || !table || table.frames.size === 0) return { result, delta: null };
    const info = {
      ...parsed.info,
      sidecar: { ...sidecar, table: { ...table, frames: new Map<string, PyFrameEntry>() } },
    };
    const sent = { ...result, parsed: { ...parsed, info } };
    // the parser's Maps are not changed once a table is read: the same Map is the same frames
    if (table.frames === this.last)
      return { result: sent, delta: { reset: false, fresh: [], ids: new Int32Array(0), same: true } };
    // sent whole if a key is not its entry's addr (never seen: the parser keys by addr)
    for (const [addr, e] of table.frames) if (addr !== e.addr) return { result, delta: null };
    const reset = this.sent.size + table.frames.size > this.maxSent;
    if (reset) this.sent.clear();
    this.last = table.frames;
    const fresh: PyFrameEntry[] = [];
    const ids = new Int32Array(table.frames.size);
    let k = 0;
    for (const e of table.frames.values()) {
      let id = this.sent.get(e);
      if (id === undefined) {
        id = this.sent.size;
        this.sent.set(e, id);
        fresh.push(e);
      }
      ids[k++] = id;
    }
    return { result: sent, delta: { reset, fresh, ids } };
  }
}

/** The pool thread's side, one per reader: puts a delta's frames back into its result's table. */
export class FramesReceiver {
  private held: PyFrameEntry[] = [];
  /** the Map made for the last table given: one Map for the tables that are the same frames (read-only) */
  private last = new Map<string, PyFrameEntry>();

  give(result: DumpTaskResult, delta: FramesDelta): void {
    const table = result.parsed?.info.sidecar?.table;
    if (delta.same) {
      if (table) table.frames = this.last;
      return;
    }
    if (delta.reset) this.held = [];
    for (const e of delta.fresh) this.held.push(e);
    if (!table) return;
    const frames = new Map<string, PyFrameEntry>();
    for (const id of delta.ids) {
      const e = this.held[id];
      frames.set(e.addr, e);
    }
    table.frames = frames;
    this.last = frames;
  }
}
