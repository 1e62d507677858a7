// How much memory the loaded model takes, and the clear stop when a job will not fit: such a job is
// for `heaplens ingest` (a columnar dataset on disk), not for one process's memory.

import type { Snapshot, StackTable } from '../model/model.js';

// Per interned address: its hex string (~30 B), the index Map entry (~40 B) and the builder's hi/lo words
// and hash slots (~20 B, grown by doubling); measured order of magnitude, not exact.
const BYTES_PER_ADDRESS = 120;
// Per stack frame slot and per stack: JS number arrays (8 B a slot), the builder's copy of the frame's words
// it verifies a hash match against (8 B), plus the hash chain.
const BYTES_PER_FRAME = 16;
const BYTES_PER_STACK = 32;
// Per snapshot: the object, its thread list and strings, and what the loader keeps per file (its warnings, its
// progress). Measured (bench/many-stacks.mjs --dumps 20000, one-record dumps): 10.3 KB of peak RSS a dump for the
// whole \`summary\` run, about half of it the process's baseline; 200,000 such dumps are about 0.8 GB of budget.
const BYTES_PER_SNAPSHOT = 4096;

export function snapshotBytes(s: Snapshot): number {
  let n =
    BYTES_PER_SNAPSHOT +
    s.stackIds.byteLength +
    s.liveBytes.byteLength +
    s.liveObjects.byteLength +
    s.liveVarBytes.byteLength;
  if (s.accumBytes) n += s.accumBytes.byteLength;
  if (s.accumObjects) n += s.accumObjects.byteLength;
  return n;
}

export function stackTableBytes(stacks: StackTable, addresses: number): number {
  return stacks.frames.length * BYTES_PER_FRAME + stacks.count * BYTES_PER_STACK + addresses * BYTES_PER_ADDRESS;
}

export class JobTooLargeError extends Error {
  constructor(
    readonly neededBytes: number,
    readonly budgetBytes: number,
    readonly filesRead: number,
    readonly filesTotal: number,
    /** the dump being read when the budget ran out (one dump may hold more stacks than fit) */
    readonly file: string | null = null,
  ) {
    super(
      `this job does not fit in memory: ${
        file !== null
          ? `reading ${file} (dump ${Math.max(1, filesRead)} of ${filesTotal}), the model already takes ${gb(neededBytes)}`
          : `after ${filesRead} of ${filesTotal} dumps the model already takes ${gb(neededBytes)}`
      } ` +
        `(limit ${gb(budgetBytes)}). Write it as a dataset on disk with \`heaplens ingest <paths…> -o <dir>\` and open the dataset instead.`,
    );
    this.name = 'JobTooLargeError';
  }
}

function gb(n: number): string {
  return `${(n / 1e9).toFixed(2)} GB`;
}
