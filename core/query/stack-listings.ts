// The stack listings of `heaplens top` (one snapshot's stacks by the sample's value) and `heaplens diff` (the change
// between two snapshots, largest growth first), as the engine answers them (core/engine/api.ts 'top' and 'diff'):
// the JSON document the CLI's --json prints (processes, listed stacks, warnings) and what its text shows besides
// (the rows' order and their figures). The CLI only formats this; rows are rows.ts's, keyed by row-key.ts.

import type { Frame } from '../frames/describe.js';
import type { Granularity } from '../frames/stack-filter.js';
import type { FoldedStack } from '../frames/stack-labels.js';
import { foldsJson, processViewer } from '../frames/view.js';
import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import { DEFAULT_SAMPLE_TYPE, jobDeclaredSamples, sampleSeriesOrWarn, sampleUnit } from '../model/sample-type.js';
import type { ViewOptions } from '../model/vocab.js';
import { accumulatedByStack, accumulatedOf, sumRecords } from './accumulated.js';
import { listingRowKey } from './row-key.js';
import { diffRows, snapshotRows } from './rows.js';
import { defaultNote, defaultSnapshot, snapshotIndices, snapshotsAsked } from './snapshot-choice.js';
import { processFacts, snapshotFacts, type ProcessFacts, type SnapshotFacts } from './summary.js';

export interface ListingRequest {
  /** the stacks' view, and the sample whose values are listed (inuse_space when absent) */
  view: ViewOptions;
  /** stacks whose shown frames are the same at this granularity are one row */
  granularity: Granularity;
  /** rows per process */
  n: number;
}

export interface TopRequest extends ListingRequest {
  /** last, first, peak or a sequence number; null: each process's series end (an exit dump after teardown out) */
  snapshot: string | null;
}

export interface DiffRequest extends ListingRequest {
  /** snapshots by name (as TopRequest's); null: the first, and the series' end */
  base: string | null;
  target: string | null;
  /** two files of one process to compare (base, target), when neither name is given */
  files: [string, string] | null;
}

/** A listed row in the JSON: who and which stacks, the listing's figures, then the shown frames and folds. */
export interface ListedStack {
  pid: number | null;
  process: string;
  stackId: number;
  /** every stack of the row, when it holds several */
  stackIds?: number[];
  frames: Frame[];
  folded?: { index: number; reason: string; count: number }[];
  [figure: string]: unknown;
}

/** What a listing's text shows of a process beside its JSON facts. */
export interface ListingBlock {
  /** the process in the job */
  processIndex: number;
  /** why the default snapshot is not the last dump ("" when it is, or a snapshot was named) */
  note: string;
  /** every row the view keeps (before the top n) */
  rowCount: number;
  /** the listed rows: their stacks (indexes into `stacks`) and the text's figures */
  rows: { stack: number; value: number; objects: number }[];
}

export interface TopProcess extends ProcessFacts {
  snapshot: SnapshotFacts;
  sample: string;
  total: number;
  shownTotal: number;
}

export interface TopListing {
  sample: string;
  unit: 'bytes' | 'objects';
  processes: TopProcess[];
  stacks: ListedStack[];
  warnings: LoadWarning[];
  /** one per entry of `processes` */
  blocks: (ListingBlock & {
    snapshotIndex: number;
    zeroRows: number;
    /** what a row's share is of: the snapshot's total, or for a delta profile (figures both ways) the sum of their
     * magnitudes, as pprof -top's flat% (its total is that sum) */
    shareOf: number;
    /** the shares are of magnitudes (a delta profile) */
    signed: boolean;
  })[];
}

export interface DiffProcess extends ProcessFacts {
  base: SnapshotFacts;
  target: SnapshotFacts;
  sample: string;
  baseBytes: number;
  targetBytes: number;
  deltaBytes: number;
  newStacks: number;
  goneStacks: number;
}

export interface DiffListing {
  sample: string;
  unit: 'bytes' | 'objects';
  /** σ of jemalloc's sampling is given (live bytes only) */
  withSigma: boolean;
  processes: DiffProcess[];
  stacks: ListedStack[];
  warnings: LoadWarning[];
  /** one per entry of `processes`; a row's value is its Δ, its objects ±2σ */
  blocks: ListingBlock[];
}

function listed(
  p: ProcessSeries,
  row: { stackId: number; members: number[] },
  stack: FoldedStack<Frame>,
  figures: object,
): ListedStack {
  return {
    pid: p.pid,
    process: p.key,
    stackId: row.stackId,
    ...(row.members.length > 1 ? { stackIds: row.members } : {}),
    ...figures,
    frames: stack.frames,
    ...foldsJson(stack),
  };
}

/** One snapshot's stacks by the sample's value, in each process (`heaplens top`). */
export function topListing(job: Job, req: TopRequest): TopListing {
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  const unit = sampleUnit(sample, jobDeclaredSamples(job));
  const out: TopListing = { sample, unit, processes: [], stacks: [], warnings: [...job.warnings], blocks: [] };
  const which = req.snapshot;
  const at = snapshotsAsked(job.processes, which, out.warnings);
  for (const [pi, p] of job.processes.entries()) {
    const si = at[pi];
    if (si < 0) continue;
    const sp = sampleSeriesOrWarn(p, sample, out.warnings);
    if (!sp) continue;
    const s = p.snapshots[si];
    const values = sp.snapshots[si];
    const view = processViewer(p, req.view);
    const { rows: all, shownTotal, zeroRows } = snapshotRows(s, values, listingRowKey(view, req.view, req.granularity));
    out.processes.push({
      ...processFacts(p),
      snapshot: snapshotFacts(s),
      sample,
      total: values.live.bytes,
      shownTotal,
    });
    // a delta profile's figures go both ways: each row's share of their magnitudes' sum, as pprof -top's flat%;
    // -1,644,544 B of a -231,896 B total read "709 %" before
    let magnitude = 0;
    let signed = false;
    for (const v of values.liveBytes) {
      magnitude += Math.abs(v);
      if (v < 0) signed = true;
    }
    const block = {
      processIndex: pi,
      snapshotIndex: si,
      shareOf: signed ? magnitude : values.live.bytes,
      signed,
      note: which === null ? defaultNote(p, si) : '',
      rowCount: all.length,
      zeroRows,
      rows: [] as ListingBlock['rows'],
    };
    for (const row of all.slice(0, req.n)) {
      const stack = view(row.stackId)!;
      block.rows.push({
        stack: out.stacks.length,
        value: row.value,
        objects:
          unit === 'bytes'
            ? sample === 'alloc_space'
              ? sumRecords(values.liveObjects, row.records)
              : row.liveObjects
            : row.value,
      });
      out.stacks.push(
        listed(p, row, stack, {
          ...(sample !== 'inuse_space' ? { value: row.value } : {}),
          liveBytes: row.liveBytes,
          liveObjects: row.liveObjects,
          ...accumulatedOf(s, row.records),
        }),
      );
    }
    out.blocks.push(block);
  }
  return out;
}

/** The change between two snapshots in each process, largest growth first (`heaplens diff`). */
export function diffListing(job: Job, req: DiffRequest): DiffListing {
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  const unit = sampleUnit(sample, jobDeclaredSamples(job));
  // σ of jemalloc's sampling, for live bytes (the model keeps no variance of the other sample types)
  const withSigma = sample === 'inuse_space';
  const out: DiffListing = {
    sample,
    unit,
    withSigma,
    processes: [],
    stacks: [],
    warnings: [...job.warnings],
    blocks: [],
  };
  const twoFiles = req.files !== null && req.base === null && req.target === null;
  const baseAt = req.base !== null ? snapshotIndices(job.processes, req.base, 'base') : null;
  const targetAt = req.target !== null ? snapshotIndices(job.processes, req.target, 'target') : null;
  for (const [pi, p] of job.processes.entries()) {
    const sp = sampleSeriesOrWarn(p, sample, out.warnings);
    if (!sp) continue;
    let bi = 0;
    // the series' end: a cut dump would report frees that never happened, an exit dump after teardown the frees of
    // the interpreter's exit
    let ti = defaultSnapshot(p);
    if (twoFiles && req.files) {
      bi = p.snapshots.findIndex((s) => s.file === req.files![0]);
      ti = p.snapshots.findIndex((s) => s.file === req.files![1]);
      if (bi < 0 || ti < 0) {
        bi = 0;
        ti = defaultSnapshot(p);
      }
    }
    if (baseAt) bi = baseAt[pi];
    if (targetAt) ti = targetAt[pi];
    if (bi < 0 || ti < 0) {
      out.warnings.push({
        file: p.key,
        message: `no snapshot with sequence number ${bi < 0 ? req.base : req.target}`,
      });
      continue;
    }
    if (p.snapshots.length < 2) {
      out.warnings.push({ file: p.key, message: 'only one snapshot: nothing to compare' });
      continue;
    }
    const base = p.snapshots[bi];
    const target = p.snapshots[ti];
    const view = processViewer(p, req.view);
    const { rows: all, totals } = diffRows(sp, bi, ti, {
      key: listingRowKey(view, req.view, req.granularity),
      sigma: withSigma,
      order: 'growth',
    });
    const accOf = accumulatedByStack(target);
    out.processes.push({
      ...processFacts(p),
      base: snapshotFacts(base),
      target: snapshotFacts(target),
      sample,
      ...totals,
    });
    const block: ListingBlock = {
      processIndex: pi,
      note: !twoFiles && targetAt === null ? defaultNote(p, ti, 'target') : '',
      rowCount: all.length,
      rows: [],
    };
    for (const x of all.slice(0, req.n)) {
      const stack = view(x.stackId)!;
      block.rows.push({ stack: out.stacks.length, value: x.deltaBytes, objects: x.deltaObjects });
      out.stacks.push(
        listed(p, x, stack, {
          baseBytes: x.baseBytes,
          targetBytes: x.targetBytes,
          deltaBytes: x.deltaBytes,
          ...(withSigma ? { sigmaBytes: x.sigmaDeltaBytes, withinNoise: x.withinNoise } : {}),
          baseObjects: x.baseObjects,
          targetObjects: x.targetObjects,
          deltaObjects: x.deltaObjects,
          status: x.status,
          ...accOf(x.members),
        }),
      );
    }
    out.blocks.push(block);
  }
  return out;
}
