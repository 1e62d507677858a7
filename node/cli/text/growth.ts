// `heaplens growth` as text: the job-wide suspects table, then each process's series (the engine's listing,
// core/query/growth-listing.ts).

import type { Job, LoadWarning } from '../../../core/model/model.js';
import { NOISE_Z } from '../../../core/model/sampling-error.js';
import type { ListedSuspects } from '../../../core/query/growth-listing.js';
import type { SuspectGroup } from '../../../core/stats/suspects.js';
import { table } from '../format.js';
import { BYTE_VALUES, valueTitle, type ValueFormat } from './values.js';
import { jobPidText } from '../../../core/model/process-host.js';
import { indent, printWarnings, processTitle, stackText, tableColumns, type Output } from '../common.js';
import type { ProcessPage, ProcessPoint } from '../../../core/query/process-groups.js';
import { callSite, cutNote, printFateCounts, printHolders, printRest, reasonText } from './process-page.js';

/** A job too big to list process by process: the page core/query/process-groups.ts chose, and the view's stack mode. */
export interface PagedGrowth {
  page: ProcessPage;
  points: readonly ProcessPoint[];
  mode: string;
}

/** Stacks listed per process on a page of many processes (the -n of `growth` still bounds the suspects table). */
const PAGED_STACKS = 5;

/**
 * A rate: per second where the dumps have times far enough apart, else per dump; "no rate" for a series too short
 * to carry one (core/stats/patterns.ts rateBasis: its note says why).
 */
export function rateText(
  perSnapshot: number,
  perSecond: number | null,
  hasRate = true,
  fmt: ValueFormat = BYTE_VALUES,
): string {
  if (!hasRate) return 'no rate';
  if (perSecond !== null) return `${fmt.signed(perSecond)}/s`;
  return `${fmt.signed(perSnapshot)}/dump`;
}

/** Process ids of a group, at most `max` then how many more. */
export function pidList(job: Job, idx: readonly number[], max = 4): string {
  const names = idx.map((i) => {
    const p = job.processes[i];
    return p.pid !== null ? jobPidText(job.processes, p) : p.key;
  });
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')}, +${names.length - max}`;
}

/**
 * A group's holders: those that share its pattern (its Δ is theirs), then the others apart with their change and
 * patterns ("1 (28464); 3 apart: flat, 0 B").
 */
export function holdersText(job: Job, g: SuspectGroup, fmt: ValueFormat = BYTE_VALUES): string {
  const shared = `${g.patternProcessIndexes.length} (${pidList(job, g.patternProcessIndexes)})`;
  const o = g.others;
  if (o.processIndexes.length === 0) return shared;
  return `${shared}; ${o.processIndexes.length} apart: ${o.patterns.join('/')}, ${fmt.signed(o.deltaBytes)}`;
}

function deltaText(delta: number, noise: boolean, fmt: ValueFormat): string {
  return fmt.signed(delta) + (noise ? ' ~' : '');
}

function sigmaText(sigma: number, fmt: ValueFormat): string {
  return sigma > 0 ? '±' + fmt.plain(NOISE_Z * sigma) : '';
}

/**
 * `growth` as text: every process's series, or given `paged`, the processes that matter and the rest by group;
 * `fmt`: how the sample's values read (a count sample's as counts, its columns titled by its name).
 */
export function printGrowth(
  job: Job,
  a: ListedSuspects,
  warnings: readonly LoadWarning[],
  io: Output,
  paged?: PagedGrowth,
  fmt: ValueFormat = BYTE_VALUES,
): void {
  const r = a.ranking;
  const procs = job.processes.length;
  const hosts = new Set(paged?.points.map((p) => p.host).filter((h) => h !== null)).size;
  io.out(
    `job-wide suspects: ${r.groupCount} stacks over ${procs} process${procs === 1 ? '' : 'es'}${hosts > 1 ? ` on ${hosts} hosts` : ''}`,
  );
  // the answer first: the first suspect's call site, what it does and in how many processes
  const top = a.groups[0];
  if (paged && top)
    io.out(
      `  #1 ${callSite(top.frames, paged.mode)} — ${top.group.pattern}, late rate ${rateText(top.first.lateSlopePerSnapshot, top.first.lateSlopePerSecond, top.first.hasRate, fmt)}${fmt.unit === 'objects' ? ` ${fmt.name}` : ''} (top holder), in ${top.group.processIndexes.length} process${top.group.processIndexes.length === 1 ? '' : 'es'}`,
    );
  io.out(
    `  score = growth beyond ${NOISE_Z}σ of sampling that is still going on at the end (plateaus and steps score ~0); ~ = within sampling noise`,
  );
  const grows = a.groups.map(({ group: g, first, frames }, i) => [
    String(i + 1),
    fmt.plain(g.score),
    g.pattern,
    deltaText(g.deltaBytes, Math.abs(g.deltaBytes) < NOISE_Z * g.sigmaBytes, fmt),
    sigmaText(g.sigmaBytes, fmt),
    rateText(first.lateSlopePerSnapshot, first.lateSlopePerSecond, first.hasRate, fmt),
    holdersText(job, g, fmt),
    stackText(frames),
  ]);
  io.out(
    indent(
      table(
        [
          '#',
          valueTitle(fmt, 'score', `score (${fmt.name})`),
          'pattern',
          'Δ (its holders)',
          '±2σ end',
          'late rate (top)',
          'holders',
          'stack (leaf first)',
        ],
        grows,
        [true, true, false, true, true, true, false, false],
        tableColumns(io),
      ),
    ) + '\n',
  );

  const order = paged ? paged.page.listed.map((l) => l.processIndex) : r.processes.map((_, pi) => pi);
  if (paged) {
    const { page } = paged;
    printHolders(job, page, a.groups, paged.mode, io, fmt);
    io.out('how the processes ended:');
    printFateCounts(job, page, io);
    io.out(
      `\nprocesses that matter (${page.listed.length} of ${procs}: killed, the first suspects' top holders, outliers of growth):`,
    );
  }
  for (const pi of order) {
    const ps = r.processes[pi];
    const p = job.processes[pi];
    const fate = ps.fate;
    const lastSeq = fate.lastCompleteSeq;
    io.out(
      `${paged ? reasonText(paged.page, pi) : ''}${processTitle(p, job)}${fate.killed ? ' — killed' : ''}\n  series over ${ps.snapshotIndexes.length} complete snapshot${ps.snapshotIndexes.length === 1 ? '' : 's'}` +
        (lastSeq !== null && fate.lastCompleteIndex !== p.snapshots.length - 1
          ? ` (last complete: seq ${lastSeq})`
          : '') +
        (ps.topPattern ? `; top pattern ${ps.topPattern}` : ''),
    );
    for (const note of ps.notes) io.out(`  note: ${note}`);
    const rows = a.stacks
      .filter(({ suspect }) => suspect.processIndex === pi)
      .slice(0, paged ? PAGED_STACKS : undefined)
      .map(({ suspect: s, frames }, rank) => [
        String(rank + 1),
        fmt.plain(s.score),
        s.pattern,
        deltaText(s.deltaBytes, s.withinNoise, fmt),
        sigmaText(s.sigmaBytes, fmt),
        rateText(s.slopePerSnapshot, s.slopePerSecond, s.hasRate, fmt),
        rateText(s.lateSlopePerSnapshot, s.lateSlopePerSecond, s.hasRate, fmt),
        s.groupProcesses > 1 ? `${s.groupProcesses} procs` : '',
        stackText(frames),
      ]);
    io.out(
      indent(
        table(
          [
            '#',
            valueTitle(fmt, 'score', `score (${fmt.name})`),
            'pattern',
            'Δ total',
            '±2σ end',
            'slope',
            'late slope',
            'shared',
            'stack (leaf first)',
          ],
          rows,
          [true, true, false, true, true, true, true, false, false],
          tableColumns(io),
        ),
      ) + '\n',
    );
  }
  if (paged) {
    io.out(
      `the other ${procs - paged.page.listed.length} processes by host and command (growth: Σ of their stacks' scores):`,
    );
    printRest(paged.page, paged.points, io, fmt);
    io.out(`\n${cutNote(paged.page, procs)}`);
  }
  printWarnings(warnings, io);
}
