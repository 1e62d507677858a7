// `heaplens summary`: the processes, their snapshots (with capture context) and the warnings, as the engine lists
// them (core/query/summary-listing.ts summaryListing); this is its text, or its JSON document.

import { gpuText } from '../gpu-output.js';
import type { Job } from '../../../core/model/model.js';
import { has, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { formatBytes, formatInt, table } from '../format.js';
import { processContextText, snapshotContextCells } from '../context-output.js';
import { indent, printWarnings, processTitle, type Output } from '../common.js';
import { sampleOf } from '../input.js';
import { valueFormat } from '../text/values.js';
import { dumpTriggerLabel } from '../../../core/model/dump-trigger.js';

/** `heaplens summary` */
export async function summary(job: Job, args: ParsedArgs, io: Output): Promise<void> {
  const json = has(args, 'json');
  const fmt = valueFormat(args, job);
  // live bytes and objects have columns of their own; another sample type adds its value
  const withSample = !json && fmt.name !== 'inuse_space' && fmt.name !== 'inuse_objects';
  const { listing } = await ask(job, { type: 'summaryListing', sample: withSample ? sampleOf(args) : null });
  if (json) {
    const { processes, warnings, ignoredFiles } = listing;
    io.out(JSON.stringify({ processes, warnings, ignoredFiles }, null, 2));
    return;
  }
  for (const [pi, p] of job.processes.entries()) {
    const { teardown, sampled } = listing.blocks[pi];
    const facts = listing.processes[pi];
    io.out(processTitle(p, job));
    for (const l of processContextText(facts, listing.processes)) io.out(indent(l));
    for (const l of gpuText(facts)) io.out(indent(l));
    const extra = snapshotContextCells(facts);
    const rows = p.snapshots.map((s, i) => [
      s.seq === null ? '-' : String(s.seq),
      dumpTriggerLabel(s),
      ...extra.rows[i],
      // a profile that records no live values (alloc_* only): nothing measured, not zero
      s.noLive ? '-' : formatBytes(s.live.bytes),
      s.noLive ? '-' : formatInt(s.live.objects),
      ...(withSample ? [sampled ? fmt.plain(sampled[i]) : '-'] : []),
      s.truncated
        ? `truncated at byte ${s.truncated.byteOffset}${s.complete ? ' (in its maps: records complete)' : s.headerLiveBytes !== null ? `: records incomplete, header total ${formatBytes(s.headerLiveBytes)}` : ': records incomplete'}`
        : i === teardown?.snapshotIndex
          ? `exit dump after teardown: not in the series (it ends at ${teardown.endsAtSeq !== null ? `seq ${teardown.endsAtSeq}` : teardown.endsAtFile})`
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
  printWarnings(listing.textWarnings, io);
}
