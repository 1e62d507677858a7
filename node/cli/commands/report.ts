// `heaplens report <paths…> -o report.html [--base <seq> --target <seq>] [--session file] [--sanitize]`: a
// single-file HTML report (core/report/) of the job, with the notes of a session. Same symbol options as `top`.

import { existsSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STACK_MODE } from '../../../core/frames/python-stacks.js';
import { DEFAULT_SAMPLE_TYPE } from '../../../core/model/sample-type.js';
import type { Session } from '../../../core/notes/schema.js';
import { buildReport } from '../../../core/report/build-report.js';
import { buildReportHtml } from '../../../core/report/html.js';
import { reportInputs } from '../../../core/report/report-inputs.js';
import { postmortemView, viewForProcesses } from '../../../core/query/postmortem-view.js';
import { rankJob, type JobSuspects } from '../../../core/stats/suspects.js';
import { verdictTitle } from '../../../core/query/verdict-title.js';
import { loadSessionFile, writeFileAtomic } from '../../io/session-file.js';
import { flag, has, intFlag, UsageError, type ParsedArgs } from '../args.js';
import { printWarnings, type Output } from '../common.js';
import { loadInput, sampleOf } from '../input.js';
import { reportLeftOut, reportWritten, sanitizeLines } from '../text/written.js';

/** The report page (dist/report-app/report.js + .css), from the built CLI (dist/node/cli/commands) or the sources (tsx). */
export function findReportApp(): { js: string; css: string } | null {
  for (const rel of ['../../../report-app/', '../../../dist/report-app/']) {
    const js = fileURLToPath(new URL(rel + 'report.js', import.meta.url));
    const css = fileURLToPath(new URL(rel + 'report.css', import.meta.url));
    if (existsSync(js) && existsSync(css)) return { js, css };
  }
  return null;
}

let gc: (() => void) | null = null;

/**
 * A full garbage collection between the report's phases, so that the next one starts on the live heap and not on
 * the previous one's garbage (the 1,000-process job's peak RSS: see bench/README.md). V8 gives `gc` only under
 * --expose-gc: the flag is set for the moment the function is taken and then unset, as the CLI's code cache is
 * valid only under the flags it was made with (node/cli/code-cache.ts).
 */
function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
    setFlagsFromString('--no-expose-gc');
  }
  gc();
}

export async function reportCommand(args: ParsedArgs, io: Output): Promise<number> {
  const output = flag(args, 'output');
  if (!output) throw new UsageError('"report" needs -o <file.html>');
  const reportApp = findReportApp();
  if (!reportApp) {
    io.err(
      'heaplens: the report page is not built (dist/report-app/report.js): run `npm run build` (or `npm run build:report`)',
    );
    return 1;
  }
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
  // symbolized after the job's ranking: the symbol tables (~0.36 GB at 1,000 processes) are not held while the
  // ranking's verdicts of every (process, stack) are (its peak), and the ranking does not read them
  let symbolize: (() => Promise<void>) | null = null;
  const job = await loadInput(args, io, { symbolizeLater: (s) => (symbolize = s) });
  if (!job) return 1;
  collectGarbage();
  const sanitize = has(args, 'sanitize');
  // the verdict over the whole job and the logs given with it, as `heaplens postmortem` says it: the job ranked
  // unsymbolized (stack identities are not symbols), then symbolized, then the verdict read again over that ranking
  // (its call sites name functions)
  let ranking: JobSuspects | null = null;
  if (job.processes.length > 0) postmortemView(job, { rank: (j) => (ranking = rankJob(j)) });
  collectGarbage();
  await (symbolize as (() => Promise<void>) | null)?.();
  // after symbolizing: a sample type's series are copies of the processes, made with their symbols
  const sample = sampleOf(args);
  const { inputs, warnings, kept } = reportInputs(job, {
    sample,
    base: flag(args, 'base'),
    target: flag(args, 'target'),
  });
  job.warnings.push(...warnings);
  const whole = job.processes.length > 0 ? postmortemView(job, { rank: (j) => ranking ?? rankJob(j) }) : null;
  ranking = null; // not held while the report is packed
  collectGarbage();
  const {
    job: packed,
    bytes,
    preview,
  } = buildReport(inputs, {
    // titled by the verdict ("rollout-1 killed: leak in launch.py:59"), else by the paths given
    title:
      (flag(args, 'title') ??
        verdictTitle(job, whole) ??
        `heaplens report: ${args.positional.map((x) => x.replace(/\/+$/, '').split('/').pop()).join(', ')}`) +
      (sample === DEFAULT_SAMPLE_TYPE ? '' : ` (${sample})`),
    generator: 'heaplens 0.1.0',
    topN: intFlag(args, 'top', 50),
    stackMode: flag(args, 'stacks') ?? DEFAULT_STACK_MODE,
    showAllocator: has(args, 'show-allocator'),
    symbolized: !has(args, 'no-symbols'),
    session,
    warnings: job.warnings,
    sanitize: sanitize ? { paths: true, maps: true } : {},
    postmortem: whole ? viewForProcesses(whole, kept) : null,
  });
  if (sanitize) for (const l of sanitizeLines(preview)) io.err(l);
  const html = await buildReportHtml(
    bytes,
    { title: packed.title, generator: packed.generator },
    { js: readFileSync(reportApp.js, 'utf8'), css: readFileSync(reportApp.css, 'utf8') },
  );
  await writeFileAtomic(output, html);
  printWarnings(job.warnings, io);
  const stacks = packed.processes.reduce((a, p) => a + p.sourceIds.length, 0);
  io.out(reportWritten(output, Buffer.byteLength(html), packed.processes.length, stacks, packed.notes.length));
  const leftOut = reportLeftOut(packed.leftOut);
  if (leftOut) io.out(leftOut);
  return 0;
}
