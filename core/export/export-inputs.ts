// What an export is made of, per process of a job: the snapshot a name picks (`last`, `first` or a sequence
// number), with the sample's values (pprof carries every sample type, so it takes the process as read) and the
// stacks as the view shows them. A process without that snapshot or those values is left out with a warning.

import type { Job, LoadWarning } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import { sampleSeries, sampleUnavailable, type SampleType } from '../model/sample-type.js';
import { snapshotByName } from '../model/snapshot-status.js';
import { viewSource } from '../frames/view.js';
import type { ExportInput } from './samples.js';

export interface ExportSelection {
  /** every sample type (pprof) or the sample's values alone (folded, speedscope) */
  allSamples: boolean;
  sample: SampleType;
  snapshot: string;
  view: ViewOptions;
}

export function exportInputs(
  job: Pick<Job, 'processes'>,
  sel: ExportSelection,
): { inputs: ExportInput[]; warnings: LoadWarning[] } {
  const inputs: ExportInput[] = [];
  const warnings: LoadWarning[] = [];
  for (const p of job.processes) {
    const i = snapshotByName(p, sel.snapshot);
    if (i < 0) {
      warnings.push({ file: p.key, message: `no snapshot with sequence number ${sel.snapshot}` });
      continue;
    }
    const values = sel.allSamples ? p : sampleSeries(p, sel.sample);
    if (!values) {
      warnings.push({ file: p.key, message: sampleUnavailable(p, sel.sample) ?? `no ${sel.sample} values` });
      continue;
    }
    inputs.push({ proc: values, snapshotIndex: i, frames: viewSource(p, sel.view) });
  }
  return { inputs, warnings };
}
