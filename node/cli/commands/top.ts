// `heaplens top`: one snapshot's stacks by the sample's value, as the engine lists them
// (core/query/stack-listings.ts topListing); this is its text.

import type { Job } from '../../../core/model/model.js';
import { dumpTriggerLabel } from '../../../core/model/dump-trigger.js';
import { flag, has, intFlag, sliceFilter, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { formatInt, formatPercent } from '../format.js';
import { granularityOf, processTitle, viewOf, type Output } from '../common.js';
import { sampleOf } from '../input.js';
import { endListing, listingTable, stackCell } from '../stack-listing.js';
import { valueFormat } from '../text/values.js';

export async function top(job: Job, args: ParsedArgs, io: Output): Promise<void> {
  const granularity = granularityOf(args);
  const { listing } = await ask(job, {
    type: 'top',
    view: { ...viewOf(args), sample: sampleOf(args) },
    granularity,
    n: intFlag(args, 'top', 20),
    snapshot: flag(args, 'snapshot') ?? null,
  });
  const json = has(args, 'json');
  if (!json) {
    const fmt = valueFormat(args, job);
    const what = fmt.name === 'inuse_space' ? 'live' : fmt.name;
    const filtered = sliceFilter(args).length > 0;
    listing.blocks.forEach((b, k) => {
      const facts = listing.processes[k];
      const p = job.processes[b.processIndex];
      const s = p.snapshots[b.snapshotIndex];
      io.out(
        `${processTitle(p, job)}\n  snapshot ${s.seq ?? '-'} (${dumpTriggerLabel(s)}) ${s.file}: ${fmt.plain(facts.total)} ${what}${fmt.name === 'inuse_space' ? ` in ${formatInt(s.live.objects)} objects` : ''}${b.note}`,
      );
      if (filtered)
        io.out(
          `  filters keep ${fmt.plain(facts.shownTotal)} (${formatPercent(facts.shownTotal, facts.total)}) in ${b.rowCount} rows`,
        );
      const rows = b.rows.map((r, rank) => [
        String(rank + 1),
        fmt.plain(r.value),
        formatPercent(b.signed ? Math.abs(r.value) : r.value, b.shareOf),
        fmt.unit === 'bytes' ? formatInt(r.objects) : fmt.plain(r.objects),
        stackCell(listing.stacks[r.stack], granularity),
      ]);
      listingTable(io, ['#', what, 'share', 'objects', 'stack (leaf first)'], rows, [true, true, true, true, false]);
      if (b.zeroRows > 0)
        io.out(`  every stack's ${fmt.name} is 0: ${b.zeroRows} rows not shown (another sample type: --sample)`);
    });
  }
  endListing(listing, json, io);
}
