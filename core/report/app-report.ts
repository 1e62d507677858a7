// The `report` answer (core/engine/answer.ts) over the loaded job: the app's export of the chosen processes, the
// focused one with its base and target, and the CLI's `heaplens report` of every process, base and target named by
// sequence number — one writer (buildReport), so both files are the same format. The session and notes, sanitized
// as asked; the page is the report app the build inlines.

import type { Session } from '../notes/schema.js';
import type { LoadWarning } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import { DEFAULT_SAMPLE_TYPE } from '../model/sample-type.js';
import type { QuerySession } from '../query/session.js';
import { viewForProcesses, type PostmortemView } from '../query/postmortem-view.js';
import { verdictTitle } from '../query/verdict-title.js';
import { reportInputs } from './report-inputs.js';
import { buildReport, type SanitizeOptions, type SanitizePreview } from './build-report.js';
import { buildReportHtml, type ReportApp } from './html.js';

export interface AppReportRequest {
  /** the processes kept, by the job's index, in this order */
  procs: number[];
  /** the focused process's (the session's selection) base and target by snapshot index: the app's selection */
  base?: number;
  target?: number;
  /** every process's base and target by name (`first`, `last`, a sequence number: the CLI's --base/--target) */
  bySeq?: { base?: string; target?: string };
  /** the notes and selection (null: none, the CLI without --session: the report opens on the process that grew most) */
  session: Session | null;
  title: string;
  /** the verdict's title ("rollout-1 killed: leak in launch.py:59") instead of `title` when the job has one */
  titleByVerdict?: boolean;
  /** who wrote the report, as its header records it (absent: the app) */
  generator?: string;
  /** stacks kept per process (absent: the writer's default) */
  topN?: number;
  /** whether the job is symbolized, as the report's options record it (absent: whether a kept process has symbols) */
  symbolized?: boolean;
  sanitize: SanitizeOptions;
  view: ViewOptions;
  /** only the sanitize preview: no page is built */
  previewOnly: boolean;
}

export interface AppReport {
  html: string | null;
  preview: SanitizePreview;
  /** the page's size in bytes (0 for a preview) */
  bytes: number;
  /** what the report's bounds made its writer leave out (core/report/job-pack.ts LeftOut), null when nothing */
  leftOut: string | null;
  /** what the report holds: its processes, their kept stacks and the notes */
  holds: { processes: number; stacks: number; notes: number };
  /** the job's warnings and the report's own (a process without the sample's values, an unknown base or target) */
  warnings: LoadWarning[];
}

/**
 * `betweenPhases`: called once the verdict is read, before the page is packed (the CLI frees its one-question
 * session's ranking and collects garbage there, for a large job's peak).
 */
export async function appReport(
  s: QuerySession,
  req: AppReportRequest,
  app: ReportApp,
  betweenPhases?: () => void,
): Promise<AppReport> {
  const job = s.job;
  if (s.partial) throw new Error('the job is still loading: a report is made once every dump is read');
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  const focused = req.session?.selection.process ?? '';
  const { inputs, warnings, kept } = reportInputs(job, {
    sample,
    processes: req.procs,
    base: req.bySeq?.base,
    target: req.bySeq?.target,
    ...(req.base !== undefined && req.target !== undefined
      ? { selected: { process: focused, base: req.base, target: req.target } }
      : {}),
  });
  // the verdict over the whole job and its logs, whichever processes the report keeps
  const whole = req.previewOnly ? null : s.postmortem();
  const title = (req.titleByVerdict ? verdictTitle(job, whole) : null) ?? req.title;
  const postmortem = withPostmortem(whole, kept);
  betweenPhases?.();
  const allWarnings = [...job.warnings, ...warnings];
  const {
    job: header,
    bytes,
    preview,
  } = buildReport(inputs, {
    title: title + (sample === DEFAULT_SAMPLE_TYPE ? '' : ` (${sample})`),
    generator: req.generator ?? 'heaplens app',
    ...(req.topN !== undefined ? { topN: req.topN } : {}),
    stackMode: req.view.mode,
    showAllocator: !req.view.hideAllocator,
    symbolized: req.symbolized ?? req.procs.some((i) => s.proc(i).symbols !== null),
    session: req.session,
    warnings: allWarnings,
    sanitize: req.sanitize,
    postmortem,
  });
  const leftOut = header.leftOut?.reason ?? null;
  const holds = {
    processes: header.processes.length,
    stacks: header.processes.reduce((a, p) => a + p.sourceIds.length, 0),
    notes: header.notes.length,
  };
  if (req.previewOnly) return { html: null, preview, bytes: 0, leftOut, holds, warnings: allWarnings };
  const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, app);
  return { html, preview, bytes: new TextEncoder().encode(html).length, leftOut, holds, warnings: allWarnings };
}

function withPostmortem(pm: PostmortemView | null, procs: readonly number[]): PostmortemView | null {
  return pm ? viewForProcesses(pm, procs) : null;
}
