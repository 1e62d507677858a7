// The app's report of the loaded job (the worker's `report` answer): the chosen processes, the focused one with its
// base and target, the session and notes, sanitized as asked; the page is the report app the build inlines.

import type { Session } from '../notes/schema.js';
import type { ViewOptions } from '../model/vocab.js';
import { DEFAULT_SAMPLE_TYPE } from '../model/sample-type.js';
import type { QuerySession } from '../query/session.js';
import { viewForProcesses, type PostmortemView } from '../query/postmortem-view.js';
import { reportInputs } from './report-inputs.js';
import { buildReport, type SanitizeOptions, type SanitizePreview } from './build-report.js';
import { buildReportHtml, type ReportApp } from './html.js';

export interface AppReportRequest {
  procs: number[];
  base: number;
  target: number;
  session: Session;
  title: string;
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
}

export async function appReport(s: QuerySession, req: AppReportRequest, app: ReportApp): Promise<AppReport> {
  const job = s.job;
  if (s.partial) throw new Error('the job is still loading: a report is made once every dump is read');
  const sample = req.view.sample ?? DEFAULT_SAMPLE_TYPE;
  const { inputs, warnings, kept } = reportInputs(job, {
    sample,
    processes: req.procs,
    selected: { process: req.session.selection.process ?? '', base: req.base, target: req.target },
  });
  const {
    job: header,
    bytes,
    preview,
  } = buildReport(inputs, {
    title: req.title + (sample === DEFAULT_SAMPLE_TYPE ? '' : ` (${sample})`),
    generator: 'heaplens app',
    stackMode: req.view.mode,
    showAllocator: !req.view.hideAllocator,
    symbolized: req.procs.some((i) => s.proc(i).symbols !== null),
    session: req.session,
    warnings: [...job.warnings, ...warnings],
    sanitize: req.sanitize,
    // the verdict over the whole job and its logs, whichever processes the report keeps
    postmortem: req.previewOnly ? null : withPostmortem(s.postmortem(), kept),
  });
  const leftOut = header.leftOut?.reason ?? null;
  if (req.previewOnly) return { html: null, preview, bytes: 0, leftOut };
  const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, app);
  return { html, preview, bytes: new TextEncoder().encode(html).length, leftOut };
}

function withPostmortem(pm: PostmortemView | null, procs: readonly number[]): PostmortemView | null {
  return pm ? viewForProcesses(pm, procs) : null;
}
