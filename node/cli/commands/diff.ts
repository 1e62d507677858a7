// `heaplens diff`: the change between two dumps, or within each process, as rows of core/query/rows.ts (stacks
// with the same shown frames are one row, with one σ), largest growth first.

import type { Job } from '../../../core/model/model.js';
import { diffRows } from '../../../core/query/rows.js';
import { flag, sliceFilter, type ParsedArgs } from '../args.js';
import { processJson, processTitle, snapshotJson, type Output } from '../common.js';
import { sampled } from '../input.js';
import { defaultNote, defaultSnapshot, snapshotIndices } from '../snapshot-choice.js';
import { StackListing } from '../stack-listing.js';
import { accumulatedByStack } from '../text/accumulated.js';

export function diff(job: Job, args: ParsedArgs, io: Output): void {
  const list = new StackListing(job, args, io);
  const { fmt } = list;
  const baseSeq = flag(args, 'base');
  const targetSeq = flag(args, 'target');
  // Two files of one process: compare those two; otherwise first → last (or --base/--target) per process.
  const twoFiles = args.positional.length === 2 && baseSeq === undefined && targetSeq === undefined;
  const baseAt = baseSeq !== undefined ? snapshotIndices(job.processes, baseSeq, 'base') : null;
  const targetAt = targetSeq !== undefined ? snapshotIndices(job.processes, targetSeq, 'target') : null;
  for (const [pi, p] of job.processes.entries()) {
    const sp = sampled(job, p, args);
    if (!sp) continue;
    let bi = 0;
    // the series' end: a cut dump would report frees that never happened, an exit dump after teardown the frees of
    // the interpreter's exit
    let ti = defaultSnapshot(p);
    if (twoFiles) {
      bi = p.snapshots.findIndex((s) => s.file === args.positional[0]);
      ti = p.snapshots.findIndex((s) => s.file === args.positional[1]);
      if (bi < 0 || ti < 0) {
        bi = 0;
        ti = defaultSnapshot(p);
      }
    }
    if (baseAt) bi = baseAt[pi];
    if (targetAt) ti = targetAt[pi];
    if (bi < 0 || ti < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${bi < 0 ? baseSeq : targetSeq}` });
      continue;
    }
    if (p.snapshots.length < 2) {
      job.warnings.push({ file: p.key, message: 'only one snapshot: nothing to compare' });
      continue;
    }
    const base = p.snapshots[bi];
    const target = p.snapshots[ti];
    const { view, key } = list.view(p);
    // σ of jemalloc's sampling, for live bytes (the model keeps no variance of the other sample types)
    const withSigma = fmt.name === 'inuse_space';
    const { rows: all, totals } = diffRows(sp, bi, ti, { key, sigma: withSigma, order: 'growth' });
    const accOf = accumulatedByStack(target);
    list.addProcess({
      ...processJson(p),
      base: snapshotJson(base),
      target: snapshotJson(target),
      sample: fmt.name,
      ...totals,
    });
    list.say(
      `${processTitle(p, job)}\n  ${base.file} → ${target.file}: ${fmt.plain(totals.baseBytes)} → ${fmt.plain(totals.targetBytes)} (${fmt.signed(totals.deltaBytes)})${fmt.name === 'inuse_space' ? '' : ` ${fmt.name}`}${sliceFilter(args).length > 0 ? ' in the stacks the filters keep' : ''}, ${totals.newStacks} new stacks, ${totals.goneStacks} gone${!twoFiles && !targetAt ? defaultNote(p, ti, 'target') : ''}`,
    );
    const rows: string[][] = [];
    all.slice(0, list.n).forEach((x, rank) => {
      const stack = view(x.stackId)!;
      const sd = x.sigmaDeltaBytes;
      list.addStack(p, x, stack, {
        baseBytes: x.baseBytes,
        targetBytes: x.targetBytes,
        deltaBytes: x.deltaBytes,
        ...(withSigma ? { sigmaBytes: sd, withinNoise: x.withinNoise } : {}),
        baseObjects: x.baseObjects,
        targetObjects: x.targetObjects,
        deltaObjects: x.deltaObjects,
        status: x.status,
        ...accOf(x.members),
      });
      rows.push([
        String(rank + 1),
        fmt.signed(x.deltaBytes) + (x.withinNoise ? ' ~' : ''),
        sd > 0 ? '±' + fmt.plain(2 * sd) : '',
        fmt.plain(x.baseBytes),
        fmt.plain(x.targetBytes),
        x.status,
        list.stackCell(stack, x.members),
      ]);
    });
    list.table(
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
      rows.length > 0 && withSigma ? '\n  (~ within sampling noise: |Δ| < 2σ)' : '',
    );
  }
  list.end();
}
