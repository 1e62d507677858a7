// What a report is built from, per process of a job: the process with the sample's values in its columns (the
// report's byte columns hold counts for the *_objects types) and the base/target snapshots a selection names.
// A process without the sample's values is left out, and a name no snapshot of a process has falls back to the
// default (first → last); each with a warning saying so. The CLI names snapshots by sequence number; the app
// passes its focused process's selection by index. One builder, so both reports keep the same processes.

import type { Job, LoadWarning } from '../model/model.js';
import { sampleSeriesOrWarn, type SampleType } from '../model/sample-type.js';
import { snapshotByName } from '../model/snapshot-status.js';
import type { ReportProcessInput } from './build-report.js';

export interface ReportSelection {
  sample: SampleType;
  /** `first`, `last` or a sequence number (absent: the session's selection, else first) */
  base?: string;
  /** likewise (absent: the session's selection, else last) */
  target?: string;
  /** the processes kept, by the job's index, in this order (absent: every process) */
  processes?: readonly number[];
  /** base and target by snapshot index, of one process (the app's focused one): what the user has selected */
  selected?: { process: string; base: number; target: number };
}

export function reportInputs(
  job: Pick<Job, 'processes'>,
  sel: ReportSelection,
): { inputs: ReportProcessInput[]; warnings: LoadWarning[]; kept: number[] } {
  const inputs: ReportProcessInput[] = [];
  const warnings: LoadWarning[] = [];
  /** the job's process index of each input (a process without the sample's values is left out) */
  const kept: number[] = [];
  const order = sel.processes ?? job.processes.map((_, i) => i);
  for (const pi of order) {
    const p = job.processes[pi];
    if (!p) throw new Error(`no process ${pi}`);
    const values = sampleSeriesOrWarn(p, sel.sample, warnings);
    if (!values) continue;
    const input: ReportProcessInput = { proc: values };
    for (const [end, fallback] of [
      ['base', 'from the first'],
      ['target', 'to the last'],
    ] as const) {
      const which = sel[end];
      if (which === undefined) continue;
      const i = snapshotByName(p, which);
      if (i >= 0) input[end] = i;
      else
        warnings.push({
          file: p.key,
          message: `no snapshot with sequence number ${which}; the report compares ${fallback}`,
        });
    }
    const chosen = sel.selected;
    if (chosen && chosen.process === p.key) {
      const inRange = (i: number): boolean => i >= 0 && i < p.snapshots.length;
      if (inRange(chosen.base) && inRange(chosen.target)) {
        input.base = chosen.base;
        input.target = chosen.target;
      }
    }
    inputs.push(input);
    kept.push(pi);
  }
  return { inputs, warnings, kept };
}
