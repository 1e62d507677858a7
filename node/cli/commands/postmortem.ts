// `heaplens postmortem`: a thin formatter of the engine's listing (core/query/postmortem-listing.ts over
// core/query/postmortem.ts) — the verdict first (who was killed, by
// whom, at what limit, what filled it), each process's fate and memory; then who died and when, its last complete snapshot
// and growth at the end, the top suspects job-wide (pattern, rate, σ, Python call site, which other
// processes hold the same stack), and with --limit the time each process (and the job) had left. Above 16 processes
// the fates are counted by group and only the processes that matter are shown (process-page.ts; --all: every one).

import { readFile, stat } from 'node:fs/promises';
import type { Job } from '../../../core/model/model.js';
import { parseLimit } from '../../../core/stats/postmortem.js';
import { projectionText } from '../../../core/stats/projection-text.js';
import { FATE_ORDER, fateText } from '../../../core/stats/fates.js';
import { evidenceSourceLabel } from '../../../core/stats/kill-evidence.js';
import { explanationWords } from '../../../core/stats/memory-outside-heap.js';
import { NOISE_Z } from '../../../core/model/sampling-error.js';
import { jobPidText } from '../../../core/model/process-host.js';
import { flag, has, intFlag, UsageError, type ParsedArgs } from '../args.js';
import { formatBytes, table } from '../format.js';
import { pidList, rateText } from '../text/growth.js';
import { callSite, cutNote, printFateCounts, printHolders, printRest, reasonText } from '../text/process-page.js';
import type { LimitText } from '../../../core/query/postmortem-listing.js';
import { pagedOf } from './process-page.js';
import { countName, valueFormat, valueTitle } from '../text/values.js';
import { ask } from '../ask.js';
import { sampleOf } from '../input.js';
import { indent, printWarnings, processTitle, stackText, tableColumns, viewOf, type Output } from '../common.js';

/** A memory.max copy is a few bytes; anything bigger is not one. */
const MAX_LIMIT_FILE_BYTES = 4096;

/** A limit as --limit gives it (core/query/postmortem-listing.ts LimitText). */
export type Limit = LimitText;

/** --limit: a byte count with an optional unit, or a file holding one (a copied cgroup memory.max). */
export async function readLimit(args: ParsedArgs): Promise<Limit | null> {
  const v = flag(args, 'limit');
  if (v === undefined) return null;
  let text = v;
  let source = v;
  const st = await stat(v).catch(() => null);
  if (st?.isFile()) {
    if (st.size > MAX_LIMIT_FILE_BYTES)
      throw new UsageError(`--limit ${v}: ${st.size} bytes is not a memory.max file (one number or "max")`);
    text = await readFile(v, 'utf8');
    source = `${v}`;
  }
  const r = parseLimit(text);
  if (!r.ok) throw new UsageError(`--limit ${st?.isFile() ? `${v} (line 1)` : JSON.stringify(v)}: ${r.message}`);
  return { bytes: r.bytes, source, note: r.note };
}

export async function postmortemCommand(all: Job, args: ParsedArgs, io: Output, given: Limit | null): Promise<void> {
  // the limit: --limit, else the kill's report, the cgroup files given, or memory.max recorded with the dumps
  const view = { ...viewOf(args), sample: sampleOf(args) };
  const { listing } = await ask(all, {
    type: 'postmortemListing',
    view,
    n: intFlag(args, 'top', 10),
    limit: given,
    scope: flag(args, 'limit-scope') === 'process' ? 'process' : 'job',
  });
  if (has(args, 'json')) {
    io.out(
      JSON.stringify(
        listing.document,
        (_k, v: unknown) =>
          typeof v === 'number' && !Number.isFinite(v)
            ? Number.isNaN(v)
              ? null
              : v > 0
                ? 'Infinity'
                : '-Infinity'
            : v,
        2,
      ),
    );
    return;
  }
  // the processes listed: those with the sample's values
  const job: Job = { ...all, processes: listing.processIndexes.map((i) => all.processes[i]) };
  const { result: q, postmortem: pm, limit, listed, page, points } = listing;
  const paged = pagedOf(job, args);
  // the heap's figures: bytes, or a count sample's counts ("7,014 alloc_objects"); RSS, pages and limits are bytes
  const fmt = valueFormat(args, all);
  const named = countName(fmt);
  const heapBytes = (n: number): string => fmt.plain(n) + named;

  io.out(q.verdict);
  if (q.culprits.length > 0) {
    io.out('\nwhat grew (share of the growth):');
    for (const c of q.culprits)
      io.out(
        `  ${(100 * c.share).toFixed(0).padStart(3)} %  ${c.kind === 'heap' ? heapBytes(c.bytes) : formatBytes(c.bytes)}${c.rate !== null ? ` (${fmt.signed(c.rate)}/s)` : ''}  ${c.pattern ?? 'outside the heap'}${c.pattern === 'step' ? ' (one-time)' : ''}  ${c.site}  — ${
          c.pids.length > 8
            ? `${c.pids.length} processes (pid ${c.processIndexes
                .slice(0, 3)
                .map((i) => jobPidText(job.processes, job.processes[i]))
                .join(', ')}, …)`
            : `pid ${c.processIndexes.map((i) => jobPidText(job.processes, job.processes[i])).join(', ')}`
        }`,
      );
  }
  io.out('');
  let order = [...pm.died, ...pm.processes.map((p) => p.processIndex).filter((i) => !pm.died.includes(i))];
  order.sort((a, b) => FATE_ORDER.indexOf(q.processes[a].fate) - FATE_ORDER.indexOf(q.processes[b].fate));
  if (paged) {
    // many processes: the fates counted, then only those that matter (killed, top holders, outliers)
    io.out('how the processes ended:');
    printFateCounts(job, page, io);
    io.out(
      `\nprocesses that matter (${page.listed.length} of ${job.processes.length}: killed, the first suspects' top holders, outliers of growth):`,
    );
    order = page.listed.map((l) => l.processIndex);
  }
  for (const pi of order) {
    const p = pm.processes[pi];
    const proc = job.processes[pi];
    const qp = q.processes[pi];
    const lc = p.fate.lastCompleteIndex >= 0 ? proc.snapshots[p.fate.lastCompleteIndex] : null;
    const lines: string[] = [];
    lines.push(
      `${paged ? reasonText(page, pi) : ''}${processTitle(proc, job)} — ${fateText(qp.fate).toUpperCase()} (${qp.role})`,
    );
    for (const e of qp.fateEvidence)
      lines.push(
        `  · ${evidenceSourceLabel(e.source)}: ${e.text}${e.source === 'dumps' ? '' : ` (${e.file}${e.line !== null ? `:${e.line}` : ''})`}`,
      );
    if (qp.endedAtMs !== null) lines.push(`  last dump written ${new Date(qp.endedAtMs).toISOString()}`);
    const m = qp.memory;
    if (m.rssBytes !== null)
      lines.push(
        `  memory: RSS ${formatBytes(m.rssBytes)}, heap ${heapBytes(m.heapBytes)}${m.inheritedBytes > 0 ? ` (${fmt.plain(m.inheritedBytes)} inherited at fork)` : ''}` +
          (m.outsideHeapBytes !== null ? `, outside the heap ${formatBytes(m.outsideHeapBytes)}` : '') +
          (m.explanation ? `: ${explanationWords(m, formatBytes)}` : '') +
          (m.source ? ` [${m.source}]` : ''),
      );
    if (qp.exitDump) lines.push(`  note: ${qp.exitDump.note}`);
    if (lc) {
      lines.push(
        `  last complete snapshot: seq ${lc.seq ?? '-'} (${lc.file}): ${fmt.plain(p.lastCompleteBytes)}${p.lastCompleteSigmaBytes > 0 ? ` ±${fmt.plain(NOISE_Z * p.lastCompleteSigmaBytes)}` : ''}${named}` +
          (p.lastKnownFromHeader
            ? `; the cut dump after it says ${heapBytes(p.lastKnownBytes)} (its header total)`
            : ''),
      );
    }
    if (p.rate) {
      const rt = p.rate;
      const perS =
        rt.perSecond !== null
          ? `, ${fmt.signed(rt.perSecond)}/s [${fmt.signed(rt.perSecondLo ?? 0)} – ${fmt.signed(rt.perSecondHi ?? 0)}]`
          : '';
      lines.push(
        `  growth at the end (last ${rt.points} complete snapshots, Theil–Sen, 95 %): ${fmt.signed(rt.perSnapshot)}/dump [${fmt.signed(rt.perSnapshotLo)} – ${fmt.signed(rt.perSnapshotHi)}]${perS}${named}`,
      );
    }
    if (p.projection && limit?.bytes)
      lines.push(`  to the limit (${formatBytes(limit.bytes)}): ${projectionText(p.projection)}`);
    for (const note of p.notes) lines.push(`  note: ${note}`);
    io.out(lines.join('\n'));
  }
  if (paged) {
    io.out(
      `\nthe other ${job.processes.length - page.listed.length} processes by host and command (growth: Σ of their stacks' scores):`,
    );
    printRest(page, points, io, fmt);
  }
  if (limit) {
    if (limit.bytes === null) io.out(`\nlimit: ${limit.note ?? 'none'}`);
    else if (fmt.unit === 'objects')
      // a count is no amount of memory: no time to a limit in bytes (core/query/postmortem.ts `unit`)
      io.out(
        `\nlimit ${formatBytes(limit.bytes)} (from ${limit.source}): the values are ${fmt.name}, a count of objects, not bytes: no time to the limit (--sample inuse_space for live bytes)`,
      );
    else if (q.limit?.scope === 'process')
      io.out(
        `\nlimit ${formatBytes(limit.bytes)} for each process (from ${limit.source}): each one's time to it above`,
      );
    else {
      const j = pm.job;
      io.out(
        `\nthe job as one cgroup (limit ${formatBytes(limit.bytes)} from ${limit.source}, the job's sum against it: no process has a countdown of its own): ${formatBytes(q.job.heapBytes)} of heap, inherited allocations counted once (${formatBytes(j.lastKnownBytes)} summed at the processes' last dumps)` +
          (q.job.copyOnWriteBytes > 0 ? ` + ${formatBytes(q.job.copyOnWriteBytes)} copied on write` : '') +
          (q.job.pssBytes !== null ? `; resident (Σ Pss) ${formatBytes(q.job.pssBytes)}` : '') +
          (q.job.usageAtKillBytes !== null
            ? `; ${q.kill?.by === 'watchdog' ? "the watchdog's sum" : "the cgroup's usage"} at the kill ${formatBytes(q.job.usageAtKillBytes)}`
            : '') +
          (q.job.peakBytes !== null ? `, peak ${formatBytes(q.job.peakBytes)}` : '') +
          (j.projection ? `; ${projectionText(j.projection)}${j.basis ? ` (from ${j.basis})` : ''}` : '') +
          (j.note ? `\n  note: ${j.note}` : ''),
      );
    }
  }

  io.out(`\ntop suspects job-wide (score = growth beyond ${NOISE_Z}σ still going on at the end):`);
  const rows = listed.groups.map(({ group: g, first, frames }, i) => [
    String(i + 1),
    g.pattern,
    rateText(first.lateSlopePerSnapshot, first.lateSlopePerSecond, first.hasRate, fmt),
    fmt.plain(g.lastBytes),
    g.sigmaBytes > 0 ? '±' + fmt.plain(NOISE_Z * g.sigmaBytes) : '',
    job.processes[g.top.processIndex].pid !== null ? jobPidText(job.processes, job.processes[g.top.processIndex]) : '-',
    pidList(
      job,
      g.processIndexes.filter((x) => x !== g.top.processIndex),
    ),
    callSite(frames, viewOf(args).mode),
  ]);
  io.out(
    indent(
      table(
        ['#', 'pattern', 'late rate', valueTitle(fmt, 'live at end'), '±2σ', 'top pid', 'also in', 'call site'],
        rows,
        [true, false, true, true, true, true, false, false],
        tableColumns(io),
      ),
    ),
  );
  if (listed.groups.length > 0) io.out(`\n  #1 in full: ${stackText(listed.groups[0].frames, 12)}`);
  if (paged) {
    io.out('');
    printHolders(job, page, listed.groups, viewOf(args).mode, io, fmt);
  }
  if (q.logsRead.length > 0) {
    io.out('\nlogs read:');
    for (const l of q.logsRead) io.out(`  ${l.file}: ${l.gave}`);
  }
  if (paged) io.out(`\n${cutNote(page, job.processes.length)}`);
  io.out('');
  printWarnings(listing.document.warnings, io);
}
