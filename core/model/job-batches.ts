// A job sent in batches (from a host that holds it, e.g. the Electron main process reading a dataset, to the
// renderer's worker): job-wide fields, then each process without its cells, then the cells a few snapshots at
// a time, then each process's symbol table (ProcessSeries.symbols) apart. Batches are structured-clone data (typed
// arrays travel as is).

import type { Job, JobEvidence, LoadWarning, ProcessSeries } from './model.js';
import type { SymbolTable } from './symbol-table.js';

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

export type JobBatch =
  | { kind: 'job'; processCount: number; warnings: LoadWarning[]; ignoredFiles: string[]; evidence?: JobEvidence }
  /** a process whose snapshots carry no cells yet, and no symbols; `addresses.index` is rebuilt on arrival */
  | { kind: 'process'; index: number; series: Omit<ProcessSeries, 'addresses'> & { addresses: { hex: string[] } } }
  | { kind: 'cells'; index: number; snapshots: SnapshotCells[] }
  | { kind: 'symbols'; index: number; table: SymbolTable };

/** Splits a job into batches, in the order JobAssembler expects. */
export function* jobBatches(job: Job): Generator<JobBatch> {
  yield {
    kind: 'job',
    processCount: job.processes.length,
    warnings: job.warnings,
    ignoredFiles: job.ignoredFiles,
    // the kill evidence the fates are told from (a dataset's kept logs, node/dataset/evidence-copies.ts)
    ...(job.evidence ? { evidence: job.evidence } : {}),
  };
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
    yield { kind: 'process', index, series: { ...p, symbols: null, snapshots, addresses: { hex: p.addresses.hex } } };
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
    if (p.symbols) yield { kind: 'symbols', index, table: p.symbols };
  }
}

/** Puts batches back together; `finish` refuses a job with a process or a snapshot's cells missing. */
export class JobAssembler {
  private head: Extract<JobBatch, { kind: 'job' }> | null = null;
  private readonly processes: ProcessSeries[] = [];
  private readonly filled: Set<number>[] = [];

  add(b: JobBatch): void {
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
      case 'symbols': {
        const p = this.processes[b.index];
        if (!p) throw new Error(`symbols for process ${b.index} before the process`);
        p.symbols = b.table;
        return;
      }
    }
  }

  finish(): Job {
    if (!this.head) throw new Error('no job batch arrived');
    for (let i = 0; i < this.head.processCount; i++) {
      const p = this.processes[i];
      if (!p) throw new Error(`process ${i} of ${this.head.processCount} did not arrive`);
      if (this.filled[i].size !== p.snapshots.length)
        throw new Error(`${p.key}: cells of ${p.snapshots.length - this.filled[i].size} snapshots did not arrive`);
    }
    return {
      processes: this.processes.slice(0, this.head.processCount),
      warnings: this.head.warnings,
      ignoredFiles: this.head.ignoredFiles,
      ...(this.head.evidence ? { evidence: this.head.evidence } : {}),
    };
  }
}
