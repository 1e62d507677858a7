// `heaplens report <paths…> -o report.html [--base <seq> --target <seq>] [--session file] [--sanitize]`:
// a single-file HTML report (core/report/) of the job, with the notes of a session. Same symbol options as `top`.

import { snapshotBySeq } from './snapshot-choice.js';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProcessSeries } from '../../core/model/model.js';
import { loadInput } from './input.js';
import { DEFAULT_STACK_MODE } from '../../core/frames/python-stacks.js';
import { DEFAULT_SAMPLE_TYPE, parseSampleType, sampleSeries, sampleUnavailable } from '../../core/model/sample-type.js';
import { loadSessionFile, writeFileAtomic } from '../io/session-file.js';
import { buildReport, type ReportProcessInput } from '../../core/report/build-report.js';
import { buildReportHtml } from '../../core/report/html.js';
import { postmortemView, viewForProcesses } from '../../core/query/postmortem-view.js';
import type { Session } from '../../core/notes/schema.js';
import { checkFlags, flag, has, intFlag, UsageError, type ParsedArgs } from './args.js';
import type { StackDescriber } from '../../core/frames/describe.js';
import { viewSource } from '../../core/frames/view.js';
import { viewOf } from './common.js';
import { formatBytes } from './format.js';
import { SYMBOL_FLAGS } from './symbols.js';

export interface CommandIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** The CLI's frame describer (maps → symbols → Python frames), as `top` uses it, with the view's folds as marker frames. */
export function commandDescriber(p: ProcessSeries, args: ParsedArgs): StackDescriber {
  return viewSource(p, viewOf(args));
}

/** The report page (dist/report-app/report.js + .css), from the built CLI (dist/node/cli) or the sources (node/cli/, tsx). */
export function findReportApp(): { js: string; css: string } | null {
  for (const rel of ['../../report-app/', '../../dist/report-app/']) {
    const js = fileURLToPath(new URL(rel + 'report.js', import.meta.url));
    const css = fileURLToPath(new URL(rel + 'report.css', import.meta.url));
    if (existsSync(js) && existsSync(css)) return { js, css };
  }
  return null;
}

export async function reportCommand(args: ParsedArgs, io: CommandIO): Promise<number> {
  checkFlags(args, [
    'output',
    'base',
    'target',
    'session',
    'sanitize',
    'title',
    'top',
    'pid',
    'stacks',
    'fold-imports',
    'sample',
    'show-allocator',
    'help',
    ...SYMBOL_FLAGS,
  ]);
  const output = flag(args, 'output');
  if (!output) throw new UsageError('"report" needs -o <file.html>');
  const reportApp = findReportApp();
  if (!reportApp) {
    io.err(
      'heaplens: the report page is not built (dist/report-app/report.js): run `npm run build` (or `npm run build:report`)',
    );
    return 1;
  }
  const topN = intFlag(args, 'top', 50);
  let session: Session | null = null;
  const sessionPath = flag(args, 'session');
  if (sessionPath) {
    try {
      session = await loadSessionFile(sessionPath);
    } catch (e) {
      io.err(`heaplens: ${sessionPath}: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
  }
  const job = await loadInput(args, io);
  if (!job) return 1;
  const baseSeq = flag(args, 'base');
  const targetSeq = flag(args, 'target');
  const inputs: ReportProcessInput[] = [];
  /** the job's process index of each input (a process without the sample's values is left out) */
  const kept: number[] = [];
  const sample = parseSampleType(flag(args, 'sample') ?? DEFAULT_SAMPLE_TYPE) ?? DEFAULT_SAMPLE_TYPE;
  for (const [pi, p] of job.processes.entries()) {
    // the report's numbers are the sample's (its byte columns hold counts for the *_objects types)
    const values = sampleSeries(p, sample);
    if (!values) {
      job.warnings.push({ file: p.key, message: sampleUnavailable(p, sample) ?? `no ${sample} values` });
      continue;
    }
    viewOf(args); // checks --stacks
    const input: ReportProcessInput = { proc: values };
    if (baseSeq !== undefined) {
      const i = snapshotBySeq(p, baseSeq, 'base');
      if (i >= 0) input.base = i;
      else
        job.warnings.push({
          file: p.key,
          message: `no snapshot with sequence number ${baseSeq}; the report compares from the first`,
        });
    }
    if (targetSeq !== undefined) {
      const i = snapshotBySeq(p, targetSeq, 'target');
      if (i >= 0) input.target = i;
      else
        job.warnings.push({
          file: p.key,
          message: `no snapshot with sequence number ${targetSeq}; the report compares to the last`,
        });
    }
    inputs.push(input);
    kept.push(pi);
  }
  const sanitize = has(args, 'sanitize');
  const {
    job: packed,
    bytes,
    preview,
  } = buildReport(inputs, {
    title:
      (flag(args, 'title') ??
        `heaplens report: ${args.positional.map((x) => x.replace(/\/+$/, '').split('/').pop()).join(', ')}`) +
      (sample === DEFAULT_SAMPLE_TYPE ? '' : ` (${sample})`),
    generator: 'heaplens 0.1.0',
    topN,
    stackMode: flag(args, 'stacks') ?? DEFAULT_STACK_MODE,
    showAllocator: has(args, 'show-allocator'),
    symbolized: !has(args, 'no-symbols'),
    session,
    warnings: job.warnings,
    sanitize: sanitize ? { paths: true, maps: true } : {},
    // the verdict over the whole job and the logs given with it, as `heaplens postmortem` says it
    postmortem: job.processes.length > 0 ? viewForProcesses(postmortemView(job), kept) : null,
  });
  if (sanitize) {
    io.err(
      `sanitized: ${preview.paths.length} paths shortened to their basenames, maps of ${preview.maps.length} processes left out:`,
    );
    for (const p of preview.paths.slice(0, 50)) io.err(`  ${p.from} → ${p.to}`);
    if (preview.paths.length > 50) io.err(`  … and ${preview.paths.length - 50} more`);
    for (const m of preview.maps) io.err(`  maps of ${m.process}: ${m.mappings} mappings left out`);
    if (preview.notesKeptAsWritten)
      io.err(`  ${preview.notesKeptAsWritten} notes are kept as written (check their text)`);
  }
  const html = await buildReportHtml(
    bytes,
    { title: packed.title, generator: packed.generator },
    { js: readFileSync(reportApp.js, 'utf8'), css: readFileSync(reportApp.css, 'utf8') },
  );
  await writeFileAtomic(output, html);
  for (const w of job.warnings) io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
  const stacks = packed.processes.reduce((a, p) => a + p.sourceIds.length, 0);
  io.out(
    `wrote ${output} (${formatBytes(Buffer.byteLength(html))}): ${packed.processes.length} processes, ${stacks} stacks, ${packed.notes.length} notes`,
  );
  return 0;
}
