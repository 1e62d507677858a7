// A job of many processes on a page of text (issue 49 item 4): what `growth` and `postmortem` print of the
// processes beyond the ones that matter — a suspect's holders summarised, the fates counted by group with their
// evidence, the rest counted by host, role and command. The choice is core/query/process-groups.ts's.

import type { Job } from '../../../core/model/model.js';
import type { Frame } from '../../../core/frames/describe.js';
import { leadFrame } from '../../../core/frames/stack-labels.js';
import { jobPidText } from '../../../core/model/process-host.js';
import { fateText } from '../../../core/stats/fates.js';
import { evidenceSourceLabel } from '../../../core/stats/kill-evidence.js';
import type { HolderSummary, ProcessGroup, ProcessPage, ProcessPoint } from '../../../core/query/process-groups.js';
import type { GrowthGroup } from '../../../core/query/growth.js';
import { table } from '../format.js';
import { BYTE_VALUES, valueTitle, type ValueFormat } from './values.js';
import { describeFrame } from '../stack-text.js';
import { indent, tableColumns, type Output } from '../common.js';

/** The stack's name as every view names it (core/frames/stack-labels.ts leadFrame). */
export function callSite(frames: readonly Frame[], mode: string): string {
  const lead = leadFrame(frames, mode);
  return lead ? describeFrame(lead) : '(no frames)';
}

function pid(job: Job, pi: number): string {
  return jobPidText(job.processes, job.processes[pi]);
}

function rateOf(v: number, perSecond: boolean, fmt: ValueFormat): string {
  return `${fmt.signed(v)}/${perSecond ? 's' : 'dump'}`;
}

/** `25 holders; late rate median +214 KiB/s, p90 …, max …; outliers node-03:1000 (+2.1 MiB/s); top node-01:1014, …` */
export function holderLine(job: Job, h: HolderSummary, fmt: ValueFormat = BYTE_VALUES): string {
  const r = h.rates;
  const rate = (v: number, perSecond: boolean): string => rateOf(v, perSecond, fmt);
  const what = fmt.unit === 'bytes' ? '' : ` in ${fmt.name}`;
  const spreadText =
    r.n > 1
      ? `late rate${what} median ${rate(r.median, h.perSecond)}, p90 ${rate(r.p90, h.perSecond)}, max ${rate(r.max, h.perSecond)} (least ${rate(r.min, h.perSecond)})`
      : `late rate${what} ${rate(r.max, h.perSecond)}`;
  const outliers =
    h.outliers.length > 0
      ? `; outliers ${h.outliers
          .slice(0, 4)
          .map((o) => `${pid(job, o.processIndex)} (${rate(o.rate, h.perSecond)})`)
          .join(', ')}${h.outliers.length > 4 ? `, +${h.outliers.length - 4}` : ''}`
      : '; no outliers';
  return `${h.holders} holder${h.holders === 1 ? '' : 's'}; ${spreadText}${outliers}; top ${h.top.map((pi) => pid(job, pi)).join(', ')}`;
}

/** The first suspects' holders, one line each: `#1 call site: 25 holders; late rate median …; outliers …; top …`. */
export function printHolders(
  job: Job,
  page: ProcessPage,
  listed: readonly GrowthGroup[],
  mode: string,
  io: Output,
  fmt: ValueFormat = BYTE_VALUES,
): void {
  if (page.holders.length === 0) return;
  io.out('holders of the first suspects:');
  for (const h of page.holders) {
    const at = listed.findIndex((g) => g.group.group === h.group);
    const site = at >= 0 ? callSite(listed[at].frames, mode) : `group ${h.group + 1}`;
    io.out(`  ${at >= 0 ? `#${at + 1} ` : ''}${site}: ${holderLine(job, h, fmt)}`);
  }
}

/** Fates counted, each with its groups and the evidence of the first few (file:line). */
export function printFateCounts(job: Job, page: ProcessPage, io: Output): void {
  for (const f of page.fates) {
    const groups = f.groups
      .slice(0, 4)
      .map((g) => `${g.host !== null ? `${g.host} ` : ''}${g.command} ${g.count}`)
      .join(', ');
    io.out(
      `  ${fateText(f.fate)}: ${f.count} process${f.count === 1 ? '' : 'es'} (${groups}${f.groups.length > 4 ? `, +${f.groups.length - 4} groups` : ''})` +
        (f.withEvidence > 0 ? `; ${f.withEvidence} with evidence` : ''),
    );
    for (const { processIndex, evidence: e } of f.evidence)
      io.out(
        `    · ${pid(job, processIndex)} ${evidenceSourceLabel(e.source)}: ${e.text}${e.source === 'dumps' ? '' : ` (${e.file}${e.line !== null ? `:${e.line}` : ''})`}`,
      );
  }
}

/** Rows of the rest beyond which the hosts are merged (role, command and fate across hosts, with how many hosts). */
export const REST_ROWS = 40;

/**
 * The processes not listed, counted by host, role and command, and fate, with their growth's spread; beyond
 * REST_ROWS rows (many hosts × many roles) the same across hosts, saying on how many hosts.
 */
export function printRest(
  page: ProcessPage,
  points: readonly ProcessPoint[],
  io: Output,
  fmt: ValueFormat = BYTE_VALUES,
): void {
  const listed = new Set(page.listed.map((l) => l.processIndex));
  const byKey = new Map<string, ProcessGroup>(page.groups.map((g) => [g.key, g]));
  const merged = page.rest.length > REST_ROWS;
  const rows = new Map<string, { host: string; what: string; fate: string; hosts: Set<string>; members: number[] }>();
  for (const r of page.rest) {
    const what = r.role === 'process' ? r.command : `${r.role}: ${r.command}`;
    const k = `${merged ? '' : (r.host ?? '')}\u0000${what}\u0000${r.fate}`;
    const row = rows.get(k) ?? { host: r.host ?? '-', what, fate: fateText(r.fate), hosts: new Set(), members: [] };
    row.hosts.add(r.host ?? '-');
    row.members.push(...byKey.get(r.key)!.processIndexes.filter((pi) => !listed.has(pi) && points[pi].fate === r.fate));
    rows.set(k, row);
  }
  const cells = [...rows.values()].map((r) => {
    const gs = r.members.map((pi) => points[pi].growth).sort((a, b) => a - b);
    return [
      merged ? `${r.hosts.size} host${r.hosts.size === 1 ? '' : 's'}` : r.host,
      r.what,
      r.fate,
      String(r.members.length),
      fmt.plain(gs[Math.floor((gs.length - 1) / 2)] ?? 0),
      fmt.plain(gs[gs.length - 1] ?? 0),
    ];
  });
  io.out(
    indent(
      table(
        [
          merged ? 'hosts' : 'host',
          'command',
          'fate',
          'processes',
          valueTitle(fmt, 'growth median', `growth median (${fmt.name})`),
          'max',
        ],
        cells,
        [false, false, false, true, true, true],
        tableColumns(io),
      ),
    ),
  );
}

/** Why a process is listed, before its title: `[killed, top holder] `. */
export function reasonText(page: ProcessPage, pi: number): string {
  const l = page.listed.find((x) => x.processIndex === pi);
  return l ? `[${l.reasons.join(', ')}] ` : '';
}

/** How the page was cut, for its last lines: what --all adds. */
export function cutNote(page: ProcessPage, processes: number): string {
  const more: string[] = [];
  if (page.leftOut.killed > 0) more.push(`${page.leftOut.killed} more killed`);
  if (page.leftOut.outliers > 0) more.push(`${page.leftOut.outliers} more outliers`);
  return `${page.listed.length} of ${processes} processes listed${more.length > 0 ? ` (${more.join(', ')} counted above)` : ''}; --all lists every process`;
}
