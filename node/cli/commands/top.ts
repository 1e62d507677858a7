// `heaplens top`: one snapshot's stacks by the sample's value, as rows of core/query/rows.ts.

import type { Job } from '../../../core/model/model.js';
import { isActive } from '../../../core/frames/stack-filter.js';
import { snapshotRows } from '../../../core/query/rows.js';
import { flag, has, intFlag, sliceFilter, type ParsedArgs } from '../args.js';
import { foldsJson, stackText as foldedStackText } from '../describe-stacks.js';
import { formatInt, formatPercent, table } from '../format.js';
import {
  granularityOf,
  indent,
  printWarnings,
  processJson,
  processTitle,
  snapshotJson,
  tableColumns,
  viewer,
  type Output,
} from '../common.js';
import { sampled } from '../input.js';
import { rowKey } from '../row-key.js';
import { snapshotIndices } from '../snapshot-choice.js';
import { valueFormat } from '../text/values.js';
import { accumulatedOf, sumRecords } from '../text/accumulated.js';

export function top(job: Job, args: ParsedArgs, io: Output): void {
  const n = intFlag(args, 'top', 20);
  const which = flag(args, 'snapshot') ?? 'last';
  const json = has(args, 'json');
  const fmt = valueFormat(args);
  const g = granularityOf(args);
  const stacksJson: unknown[] = [];
  const procsJson: unknown[] = [];
  const at = snapshotIndices(job.processes, which, 'snapshot');
  for (const [pi, p] of job.processes.entries()) {
    const si = at[pi];
    if (si < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    const sp = sampled(job, p, args);
    if (!sp) continue;
    const s = p.snapshots[si];
    const values = sp.snapshots[si];
    const view = viewer(p, args);
    const { rows: all, shownTotal: shown } = snapshotRows(s, values, rowKey(view, args));
    procsJson.push({
      ...processJson(p),
      snapshot: snapshotJson(s),
      sample: fmt.name,
      total: values.live.bytes,
      shownTotal: shown,
    });
    if (!json) {
      const what = fmt.name === 'inuse_space' ? 'live' : fmt.name;
      io.out(
        `${processTitle(p)}\n  snapshot ${s.seq ?? '-'} (${s.trigger}) ${s.file}: ${fmt.plain(values.live.bytes)} ${what}${fmt.name === 'inuse_space' ? ` in ${formatInt(s.live.objects)} objects` : ''}`,
      );
      if (isActive(sliceFilter(args)))
        io.out(`  filters keep ${fmt.plain(shown)} (${formatPercent(shown, values.live.bytes)}) in ${all.length} rows`);
    }
    const rows: string[][] = [];
    all.slice(0, n).forEach((row, rank) => {
      const stack = view(row.stackId)!;
      if (json) {
        stacksJson.push({
          pid: p.pid,
          process: p.key,
          stackId: row.stackId,
          ...(row.members.length > 1 ? { stackIds: row.members } : {}),
          ...(fmt.name !== 'inuse_space' ? { value: row.value } : {}),
          liveBytes: row.liveBytes,
          liveObjects: row.liveObjects,
          ...accumulatedOf(s, row.records),
          frames: stack.frames,
          ...foldsJson(stack),
        });
      } else {
        const objects =
          fmt.unit === 'bytes'
            ? formatInt(fmt.name === 'alloc_space' ? sumRecords(values.liveObjects, row.records) : row.liveObjects)
            : fmt.plain(row.value);
        rows.push([
          String(rank + 1),
          fmt.plain(row.value),
          formatPercent(row.value, values.live.bytes),
          objects,
          foldedStackText(stack, 6, g) + (row.members.length > 1 ? ` [${row.members.length} stacks]` : ''),
        ]);
      }
    });
    const head = fmt.name === 'inuse_space' ? 'live' : fmt.name;
    if (!json)
      io.out(
        indent(
          table(
            ['#', head, 'share', 'objects', 'stack (leaf first)'],
            rows,
            [true, true, true, true, false],
            tableColumns(io),
          ),
        ) + '\n',
      );
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, stacks: stacksJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}
