// `heaplens diff`: the change between two dumps, or within each process, as the engine lists it
// (core/query/stack-listings.ts diffListing: stacks with the same shown frames are one row, with one σ), largest
// growth first; this is its text.

import type { Job } from '../../../core/model/model.js';
import { flag, has, intFlag, sliceFilter, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { granularityOf, processTitle, viewOf, type Output } from '../common.js';
import { sampleOf } from '../input.js';
import { endListing, listingTable, stackCell } from '../stack-listing.js';
import { valueFormat } from '../text/values.js';

export async function diff(job: Job, args: ParsedArgs, io: Output): Promise<void> {
  const granularity = granularityOf(args);
  const base = flag(args, 'base') ?? null;
  const target = flag(args, 'target') ?? null;
  const [a, b] = args.positional;
  const { listing } = await ask(job, {
    type: 'diff',
    view: { ...viewOf(args), sample: sampleOf(args) },
    granularity,
    n: intFlag(args, 'top', 20),
    base,
    target,
    // two files of one process: compare those two; otherwise first → last (or --base/--target) per process
    files: args.positional.length === 2 ? [a, b] : null,
  });
  const json = has(args, 'json');
  if (!json) {
    const fmt = valueFormat(args, job);
    const filtered = sliceFilter(args).length > 0;
    listing.blocks.forEach((block, k) => {
      const t = listing.processes[k];
      const p = job.processes[block.processIndex];
      io.out(
        `${processTitle(p, job)}\n  ${t.base.file} → ${t.target.file}: ${fmt.plain(t.baseBytes)} → ${fmt.plain(t.targetBytes)} (${fmt.signed(t.deltaBytes)})${fmt.name === 'inuse_space' ? '' : ` ${fmt.name}`}${filtered ? ' in the stacks the filters keep' : ''}, ${t.newStacks} new stacks, ${t.goneStacks} gone${block.note}`,
      );
      const rows = block.rows.map((r, rank) => {
        const x = listing.stacks[r.stack];
        const sd = typeof x.sigmaBytes === 'number' ? x.sigmaBytes : 0;
        return [
          String(rank + 1),
          fmt.signed(r.value) + (x.withinNoise === true ? ' ~' : ''),
          sd > 0 ? '±' + fmt.plain(2 * sd) : '',
          fmt.plain(x.baseBytes as number),
          fmt.plain(x.targetBytes as number),
          String(x.status),
          stackCell(x, granularity),
        ];
      });
      listingTable(
        io,
        [
          '#',
          fmt.name === 'inuse_space' ? 'Δ live' : `Δ ${fmt.name}`,
          '±2σ',
          'base',
          'target',
          'status',
          'stack (leaf first)',
        ],
        rows,
        [true, true, true, true, true, false, false],
        rows.length > 0 && listing.withSigma ? '\n  (~ within sampling noise: |Δ| < 2σ)' : '',
      );
    });
  }
  endListing(listing, json, io);
}
