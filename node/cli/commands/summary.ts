// `heaplens summary`: the processes, their snapshots (with capture context) and the warnings.

import { gpuJson, gpuText } from '../gpu-output.js';
import type { Job } from '../../../core/model/model.js';
import { has, type ParsedArgs } from '../args.js';
import { formatBytes, formatInt, table } from '../format.js';
import {
  jobParents,
  processContextJson,
  processContextText,
  snapshotContextCells,
  snapshotContextJson,
} from '../context-output.js';
import { indent, printWarnings, processJson, processTitle, snapshotJson, type Output } from '../common.js';
import { sampled } from '../input.js';
import { valueFormat } from '../text/values.js';
import { dumpTriggerLabel } from '../../../core/model/dump-trigger.js';
import { teardownDump } from '../../../core/model/series-end.js';

/** `heaplens summary` */
export function summary(job: Job, args: ParsedArgs, io: Output): void {
  const parents = jobParents(job);
  if (has(args, 'json')) {
    io.out(
      JSON.stringify(
        {
          processes: job.processes.map((p) => {
            const ctx = snapshotContextJson(p);
            const t = teardownDump(p, 0)?.snapshotIndex ?? -1;
            return {
              ...processJson(p, job),
              ...processContextJson(p, parents),
              ...gpuJson(p),
              snapshots: p.snapshots.map((s, i) => ({
                ...snapshotJson(s),
                ...ctx[i],
                ...(i === t ? { afterTeardown: true } : {}),
              })),
            };
          }),
          warnings: job.warnings,
          ignoredFiles: job.ignoredFiles,
        },
        null,
        2,
      ),
    );
    return;
  }
  const fmt = valueFormat(args, job);
  const withSample = fmt.name !== 'inuse_space' && fmt.name !== 'inuse_objects';
  for (const p of job.processes) {
    io.out(processTitle(p, job));
    for (const l of processContextText(p, parents, job)) io.out(indent(l));
    for (const l of gpuText(p)) io.out(indent(l));
    const extra = snapshotContextCells(p);
    const sp = withSample ? sampled(job, p, args) : p;
    // the exit dump after teardown is listed, marked, and left out of the series (core/model/series-end.ts)
    const teardown = teardownDump(p, 0);
    const endSeq = (f: string): string => {
      const s = p.snapshots.find((x) => x.file === f);
      return s?.seq != null ? `seq ${s.seq}` : f;
    };
    const rows = p.snapshots.map((s, i) => [
      s.seq === null ? '-' : String(s.seq),
      dumpTriggerLabel(s),
      ...extra.rows[i],
      formatBytes(s.live.bytes),
      formatInt(s.live.objects),
      ...(withSample ? [sp ? fmt.plain(sp.snapshots[i].live.bytes) : '-'] : []),
      s.truncated
        ? `truncated at byte ${s.truncated.byteOffset}${s.complete ? ' (in its maps: records complete)' : s.headerLiveBytes !== null ? `: records incomplete, header total ${formatBytes(s.headerLiveBytes)}` : ': records incomplete'}`
        : i === teardown?.snapshotIndex
          ? `exit dump after teardown: not in the series (it ends at ${endSeq(teardown.lastIntervalFile)})`
          : '',
      s.file,
    ]);
    const header = [
      'seq',
      'trigger',
      ...extra.header,
      'live',
      'objects',
      ...(withSample ? [fmt.name] : []),
      'note',
      'file',
    ];
    io.out(
      indent(
        table(header, rows, [
          true,
          false,
          false,
          true,
          true,
          true,
          true,
          true,
          ...(withSample ? [true] : []),
          false,
          false,
        ]),
      ),
    );
    io.out('');
  }
  printWarnings(job.warnings, io);
}
