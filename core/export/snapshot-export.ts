// One snapshot of some processes as a file another profiler reads (the app's `export` answer; the CLI's
// `heaplens export` writes the same formats): the focused process at the chosen snapshot, the others at their last.

import type { ViewOptions } from '../model/vocab.js';
import { sampleUnit } from '../model/sample-type.js';
import { viewSource } from '../frames/view.js';
import type { QuerySession } from '../query/session.js';
import { toPprof } from './pprof.js';
import { toFolded } from './folded.js';
import { toSpeedscope } from './speedscope.js';
import type { ExportInput } from './samples.js';

export type ExportFormat = 'pprof' | 'folded' | 'speedscope';

export interface ExportedFile {
  data: string | Uint8Array;
  /** a file name: the first process's pid and snapshot sequence number, and the format's extension */
  name: string;
  mime: string;
}

/** `procs[0]` is the focused process: it exports `snapshot`; every other process its last snapshot. */
export function exportSnapshot(
  s: QuerySession,
  format: ExportFormat,
  procs: readonly number[],
  snapshot: number,
  view: ViewOptions,
): ExportedFile {
  const inputs: ExportInput[] = procs.map((i) => {
    const p = s.proc(i);
    const at = i === procs[0] ? Math.min(snapshot, p.snapshots.length - 1) : p.snapshots.length - 1;
    // pprof carries every sample type; folded and speedscope carry the view's sample
    return { proc: format === 'pprof' ? p : s.values(i, view), snapshotIndex: at, frames: viewSource(p, view) };
  });
  const first = inputs[0]?.proc;
  const stem = `heaplens-${first?.pid ?? 'job'}-${first ? (first.snapshots[inputs[0].snapshotIndex].seq ?? inputs[0].snapshotIndex) : 0}`;
  const opts = { showAllocator: !view.hideAllocator, measure: sampleUnit(view.sample ?? 'inuse_space') };
  switch (format) {
    case 'pprof':
      return {
        data: toPprof(inputs, { ...opts, comments: ['heaplens app export'], defaultSample: view.sample }),
        name: `${stem}.pb`,
        mime: 'application/octet-stream',
      };
    case 'folded':
      return { data: toFolded(inputs, opts), name: `${stem}.folded`, mime: 'text/plain' };
    case 'speedscope':
      return {
        data: JSON.stringify(toSpeedscope(inputs, { ...opts, name: stem })),
        name: `${stem}.speedscope.json`,
        mime: 'application/json',
      };
  }
}
