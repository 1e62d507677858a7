// A job sent in batches (from a host that holds it, e.g. the Electron main process reading a dataset, to the
// renderer's worker): job-wide fields, then each process without its cells, then the cells a few snapshots at
// a time, then per-process symbol tables. Batches are structured-clone data (typed arrays travel as is).
// The symbol table type is a parameter: this folder does not know the symbolizer's types.

import type { Job, LoadWarning, ProcessSeries } from './model.js';

/** Cells per batch: ~10 MB of typed arrays, small enough to keep each IPC message and worker hop short. */
export const CELLS_PER_BATCH = 1 << 18;

export interface SnapshotCells {
  snapshot: number;
  stackIds: Uint32Array;
  liveBytes: Float64Array;
  liveObjects: Float64Array;
  liveVarBytes: Float64Array;
  accumBytes: Float64Array | null;
  accumObjects: Float64Array | null;
}

export type JobBatch<S> =
  | { kind: 'job'; processCount: number; warnings: LoadWarning[]; ignoredFiles: string[] }
  /** a process whose snapshots carry no cells yet; `addresses.index` is rebuilt on arrival */
  | { kind: 'process'; index: number; series: Omit<ProcessSeries, 'addresses'> & { addresses: { hex: string[] } } }
  | { kind: 'cells'; index: number; snapshots: SnapshotCells[] }
  | { kind: 'symbols'; index: number; table: S };

/** Splits a job into batches, in the order JobAssembler expects. */
export function* jobBatches<S>(job: Job, symbols: ReadonlyMap<ProcessSeries, S> = new Map()): Generator<JobBatch<S>> {
  yield { kind: 'job', processCount: job.processes.length, warnings: job.warnings, ignoredFiles: job.ignoredFiles };
  for (const [index, p] of job.processes.entries()) {
    const snapshots = p.snapshots.map((s) => ({
      ...s,
      stackIds: new Uint32Array(0),
      liveBytes: new Float64Array(0),
      liveObjects: new Float64Array(0),
      liveVarBytes: new Float64Array(0),
      accumBytes: s.accumBytes && new Float64Array(0),
      accumObjects: s.accumObjects && new Float64Array(0),
    }));
    yield { kind: 'process', index, series: { ...p, snapshots, addresses: { hex: p.addresses.hex } } };
    let pending: SnapshotCells[] = [];
    let cells = 0;
    for (const [j, s] of p.snapshots.entries()) {
      pending.push({
        snapshot: j,
        stackIds: s.stackIds,
        liveBytes: s.liveBytes,
        liveObjects: s.liveObjects,
        liveVarBytes: s.liveVarBytes,
        accumBytes: s.accumBytes,
        accumObjects: s.accumObjects,
      });
      cells += s.stackIds.length;
      if (cells >= CELLS_PER_BATCH) {
        yield { kind: 'cells', index, snapshots: pending };
        pending = [];
        cells = 0;
      }
    }
    if (pending.length > 0) yield { kind: 'cells', index, snapshots: pending };
    const t = symbols.get(p);
    if (t !== undefined) yield { kind: 'symbols', index, table: t };
  }
}

/** Puts batches back together; `finish` refuses a job with a process or a snapshot's cells missing. */
export class JobAssembler<S> {
  private head: Extract<JobBatch<S>, { kind: 'job' }> | null = null;
  private readonly processes: ProcessSeries[] = [];
  private readonly filled: Set<number>[] = [];
  private readonly symbols = new Map<number, S>();

  add(b: JobBatch<S>): void {
    switch (b.kind) {
      case 'job':
        this.head = b;
        return;
      case 'process': {
        const hex = b.series.addresses.hex;
        this.processes[b.index] = { ...b.series, addresses: { hex, index: new Map(hex.map((h, i) => [h, i])) } };
        this.filled[b.index] = new Set();
        return;
      }
      case 'cells': {
        const p = this.processes[b.index];
        if (!p) throw new Error(`cells for process ${b.index} before the process`);
        for (const c of b.snapshots) {
          const s = p.snapshots[c.snapshot];
          if (!s)
            throw new Error(`cells for snapshot ${c.snapshot} of process ${b.index}, which has ${p.snapshots.length}`);
          Object.assign(s, {
            stackIds: c.stackIds,
            liveBytes: c.liveBytes,
            liveObjects: c.liveObjects,
            liveVarBytes: c.liveVarBytes,
            accumBytes: c.accumBytes,
            accumObjects: c.accumObjects,
          });
          this.filled[b.index].add(c.snapshot);
        }
        return;
      }
      case 'symbols':
        this.symbols.set(b.index, b.table);
        return;
    }
  }

  finish(): { job: Job; symbols: Map<number, S> } {
    if (!this.head) throw new Error('no job batch arrived');
    for (let i = 0; i < this.head.processCount; i++) {
      const p = this.processes[i];
      if (!p) throw new Error(`process ${i} of ${this.head.processCount} did not arrive`);
      if (this.filled[i].size !== p.snapshots.length)
        throw new Error(`${p.key}: cells of ${p.snapshots.length - this.filled[i].size} snapshots did not arrive`);
    }
    return {
      job: {
        processes: this.processes.slice(0, this.head.processCount),
        warnings: this.head.warnings,
        ignoredFiles: this.head.ignoredFiles,
      },
      symbols: this.symbols,
    };
  }
}
