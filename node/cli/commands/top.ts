// `heaplens top`: one snapshot's stacks by the sample's value, as rows of core/query/rows.ts.

import type { Job } from '../../../core/model/model.js';
import { snapshotRows } from '../../../core/query/rows.js';
import { dumpTriggerLabel } from '../../../core/model/dump-trigger.js';
import { flag, sliceFilter, type ParsedArgs } from '../args.js';
import { formatInt, formatPercent } from '../format.js';
import { processJson, processTitle, snapshotJson, type Output } from '../common.js';
import { sampled } from '../input.js';
import { defaultNote, defaultSnapshot, snapshotIndices } from '../snapshot-choice.js';
import { StackListing } from '../stack-listing.js';
import { accumulatedOf, sumRecords } from '../text/accumulated.js';

export function top(job: Job, args: ParsedArgs, io: Output): void {
  const list = new StackListing(job, args, io);
  const { fmt } = list;
  const which = flag(args, 'snapshot');
  // without --snapshot: each process's series end (an exit dump after teardown left out)
  const at =
    which !== undefined ? snapshotIndices(job.processes, which, 'snapshot') : job.processes.map(defaultSnapshot);
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
    const { view, key } = list.view(p);
    const { rows: all, shownTotal: shown, zeroRows } = snapshotRows(s, values, key);
    list.addProcess({
      ...processJson(p),
      snapshot: snapshotJson(s),
      sample: fmt.name,
      total: values.live.bytes,
      shownTotal: shown,
    });
    const what = fmt.name === 'inuse_space' ? 'live' : fmt.name;
    list.say(
      `${processTitle(p, job)}\n  snapshot ${s.seq ?? '-'} (${dumpTriggerLabel(s)}) ${s.file}: ${fmt.plain(values.live.bytes)} ${what}${fmt.name === 'inuse_space' ? ` in ${formatInt(s.live.objects)} objects` : ''}${which === undefined ? defaultNote(p, si) : ''}`,
    );
    if (sliceFilter(args).length > 0)
      list.say(`  filters keep ${fmt.plain(shown)} (${formatPercent(shown, values.live.bytes)}) in ${all.length} rows`);
    // a delta profile's figures go both ways: each row's share of their magnitudes' sum, as pprof -top's flat%
    // (pprof's total is that sum); -1,644,544 B of a -231,896 B total read "709 %" before
    let magnitude = 0;
    let negative = false;
    for (const v of values.liveBytes) {
      magnitude += Math.abs(v);
      if (v < 0) negative = true;
    }
    const share = (v: number): string =>
      negative ? formatPercent(Math.abs(v), magnitude) : formatPercent(v, values.live.bytes);
    const rows: string[][] = [];
    all.slice(0, list.n).forEach((row, rank) => {
      const stack = view(row.stackId)!;
      list.addStack(p, row, stack, {
        ...(fmt.name !== 'inuse_space' ? { value: row.value } : {}),
        liveBytes: row.liveBytes,
        liveObjects: row.liveObjects,
        ...accumulatedOf(s, row.records),
      });
      const objects =
        fmt.unit === 'bytes'
          ? formatInt(fmt.name === 'alloc_space' ? sumRecords(values.liveObjects, row.records) : row.liveObjects)
          : fmt.plain(row.value);
      rows.push([
        String(rank + 1),
        fmt.plain(row.value),
        share(row.value),
        objects,
        list.stackCell(stack, row.members),
      ]);
    });
    list.table(['#', what, 'share', 'objects', 'stack (leaf first)'], rows, [true, true, true, true, false]);
    if (zeroRows > 0)
      list.say(`  every stack's ${fmt.name} is 0: ${zeroRows} rows not shown (another sample type: --sample)`);
  }
  list.end();
}
