// A job's snapshots as a file another profiler reads: the one export of the app (the engine's `export` answer) and
// of `heaplens export`. Each process exports the snapshot a name picks (`last`, `first`, `peak` or a sequence
// number); the app's focused process may name its selected snapshot instead. pprof carries every sample type and is
// gzipped, as pprof files are; folded and speedscope carry the view's sample. A process without that snapshot or
// those values is left out with a warning.

import type { Job, LoadWarning } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import { DEFAULT_SAMPLE_TYPE, jobDeclaredSamples, sampleSeriesOrWarn, sampleUnit } from '../model/sample-type.js';
import { snapshotByName } from '../model/snapshot-status.js';
import { viewSource } from '../frames/view.js';
import { toPprof } from './pprof.js';
import { toFolded } from './folded.js';
import { toSpeedscope } from './speedscope.js';
import type { ExportInput } from './samples.js';

export type ExportFormat = 'pprof' | 'folded' | 'speedscope';

export interface ExportRequest {
  format: ExportFormat;
  /** the processes, by index (null: every process) */
  procs: number[] | null;
  /** the snapshot each process exports, by name: last, first, peak or a sequence number */
  snapshot: string;
  /** the app's focused process at the snapshot selected in it (by index), in place of `snapshot` for that process */
  focus?: { proc: number; snapshot: number } | null;
  /** the stacks' view and the sample whose values folded and speedscope carry (pprof carries them all) */
  view: ViewOptions;
  /** folded and speedscope values (default: the sample's unit; `heaplens export --measure objects`) */
  measure?: 'bytes' | 'objects';
}

export interface ExportedFile {
  data: string | Uint8Array;
  /** a file name: the first process's pid and snapshot sequence number, and the format's extension */
  name: string;
  mime: string;
  /** how many processes it holds */
  processes: number;
  /** processes left out, and why */
  warnings: LoadWarning[];
}

/** The processes' snapshots as the request picks them, with the values the format carries. */
export function exportInputs(
  job: Pick<Job, 'processes'>,
  req: ExportRequest,
): { inputs: ExportInput[]; warnings: LoadWarning[] } {
  const inputs: ExportInput[] = [];
  const warnings: LoadWarning[] = [];
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  const procs = req.procs ?? job.processes.map((_, i) => i);
  for (const pi of procs) {
    const p = job.processes[pi];
    if (!p) throw new Error(`no process ${pi}`);
    const focused = req.focus?.proc === pi ? req.focus.snapshot : null;
    const i = focused !== null ? Math.min(focused, p.snapshots.length - 1) : snapshotByName(p, req.snapshot);
    if (i < 0) {
      warnings.push({ file: p.key, message: `no snapshot with sequence number ${req.snapshot}` });
      continue;
    }
    const values = req.format === 'pprof' ? p : sampleSeriesOrWarn(p, sample, warnings);
    if (!values) continue;
    inputs.push({ proc: values, snapshotIndex: i, frames: viewSource(p, req.view) });
  }
  return { inputs, warnings };
}

/** The export the request asks for; an error when no process has what it asks. */
export async function exportJob(job: Pick<Job, 'processes'>, req: ExportRequest): Promise<ExportedFile> {
  const { inputs, warnings } = exportInputs(job, req);
  if (inputs.length === 0) throw new Error(`no process has snapshot ${req.snapshot}`);
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  // a declared type's unit is the job's (its profiles say bytes or a count)
  const measure = req.measure ?? sampleUnit(sample, jobDeclaredSamples(job));
  const first = inputs[0];
  const stem = `heaplens-${first.proc.pid ?? 'job'}-${first.proc.snapshots[first.snapshotIndex].seq ?? first.snapshotIndex}`;
  const showAllocator = !req.view.hideAllocator;
  const n = inputs.length;
  switch (req.format) {
    case 'pprof': {
      const comments = inputs.map((x) => `heaplens: ${x.proc.key} ${x.proc.snapshots[x.snapshotIndex].file}`);
      const data = await gzip(toPprof(inputs, { showAllocator, comments, defaultSample: sample }));
      return { data, name: `${stem}.pb.gz`, mime: 'application/gzip', processes: n, warnings };
    }
    case 'folded':
      return {
        data: toFolded(inputs, { showAllocator, measure }),
        name: `${stem}.folded`,
        mime: 'text/plain',
        processes: n,
        warnings,
      };
    case 'speedscope':
      return {
        data: JSON.stringify(toSpeedscope(inputs, { showAllocator, measure, name: stem })),
        name: `${stem}.speedscope.json`,
        mime: 'application/json',
        processes: n,
        warnings,
      };
  }
}

/** gzip through the platform's CompressionStream (browsers, Electron and Node alike: core imports no node: module). */
async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
