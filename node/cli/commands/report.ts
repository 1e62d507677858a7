// `heaplens report <paths…> -o report.html [--base <seq> --target <seq>] [--session file] [--sanitize]`: a
// single-file HTML report (core/report/) of the job, with the notes of a session. Same symbol options as `top`.

import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { answer } from '../../../core/engine/answer.js';
import type { Session } from '../../../core/notes/schema.js';
import { QuerySession } from '../../../core/query/session.js';
import { reportAppFrom } from '../../engine/engine.js';
import { loadSessionFile, writeFileAtomic } from '../../io/session-file.js';
import { flag, has, intFlag, UsageError, type ParsedArgs } from '../args.js';
import { printWarnings, viewOf, type Output } from '../common.js';
import { loadInput, sampleOf } from '../input.js';
import { reportLeftOut, reportWritten, sanitizeLines } from '../text/written.js';

/** Where the report page's code is: beside the built CLI (dist/node/cli/commands) or in dist/ of a checkout (tsx). */
export const REPORT_APP_DIRS = ['../../../report-app/', '../../../dist/report-app/'].map(
  (rel) => new URL(rel, import.meta.url),
);

/** The report page's files (dist/report-app/report.js + .css), or null when it is not built. */
export function findReportApp(): { js: string; css: string } | null {
  for (const dir of REPORT_APP_DIRS) {
    const js = fileURLToPath(new URL('report.js', dir));
    const css = fileURLToPath(new URL('report.css', dir));
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
  const reportApp = reportAppFrom(REPORT_APP_DIRS)();
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
  const s = new QuerySession();
  s.attach(job);
  // the verdict over the whole job and the logs given with it, as `heaplens postmortem` says it: the job ranked
  // unsymbolized (stack identities are not symbols); the engine reads the verdict over that ranking once the job is
  // symbolized (its call sites name functions)
  s.rankBeforeSymbols();
  collectGarbage();
  await (symbolize as (() => Promise<void>) | null)?.();
  const sample = sampleOf(args);
  const sanitize = has(args, 'sanitize');
  const { res } = await answer(
    s,
    {
      type: 'report',
      procs: job.processes.map((_, i) => i),
      bySeq: { base: flag(args, 'base'), target: flag(args, 'target') },
      session,
      // titled by the verdict ("rollout-1 killed: leak in launch.py:59"), else by the paths given
      title:
        flag(args, 'title') ??
        `heaplens report: ${args.positional.map((x) => x.replace(/\/+$/, '').split('/').pop()).join(', ')}`,
      titleByVerdict: !has(args, 'title'),
      generator: 'heaplens 0.1.0',
      topN: intFlag(args, 'top', 50),
      symbolized: !has(args, 'no-symbols'),
      sanitize: sanitize ? { paths: true, maps: true } : {},
      view: { ...viewOf(args), sample },
      previewOnly: false,
    },
    {
      reportApp,
      // the ranking is not held while the report is packed
      betweenPhases: () => {
        s.dropRankings();
        collectGarbage();
      },
    },
  );
  if (res.type !== 'report' || res.html === null) throw new Error(`the engine answered ${res.type} to report`);
  if (sanitize) for (const l of sanitizeLines(res.preview)) io.err(l);
  await writeFileAtomic(output, res.html);
  printWarnings(res.warnings, io);
  io.out(reportWritten(output, res.bytes, res.holds.processes, res.holds.stacks, res.holds.notes));
  const leftOut = reportLeftOut(res.leftOut === null ? undefined : { reason: res.leftOut });
  if (leftOut) io.out(leftOut);
  return 0;
}
