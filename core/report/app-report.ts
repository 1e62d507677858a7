// The app's report of the loaded job (the worker's `report` answer): the chosen processes, the focused one with its
// base and target, the session and notes, sanitized as asked; the page is the report app the build inlines.

import type { Session } from '../notes/schema.js';
import type { ViewOptions } from '../model/vocab.js';
import type { ProcessSeries } from '../model/model.js';
import type { QuerySession } from '../query/session.js';
import { viewForProcesses, type PostmortemView } from '../query/postmortem-view.js';
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
}

export async function appReport(s: QuerySession, req: AppReportRequest, app: ReportApp): Promise<AppReport> {
  const job = s.job;
  if (s.partial) throw new Error('the job is still loading: a report is made once every dump is read');
  const { base, target } = req;
  const inputs = req.procs.map((i) => {
    const p = s.proc(i);
    const input: { proc: ProcessSeries; base?: number; target?: number } = { proc: p };
    // base and target are of the focused process
    if (
      p.key === req.session.selection.process &&
      base >= 0 &&
      target >= 0 &&
      base < p.snapshots.length &&
      target < p.snapshots.length
    ) {
      input.base = base;
      input.target = target;
    }
    return input;
  });
  const {
    job: header,
    bytes,
    preview,
  } = buildReport(inputs, {
    title: req.title,
    generator: 'heaplens app',
    stackMode: req.view.mode,
    showAllocator: !req.view.hideAllocator,
    symbolized: req.procs.some((i) => s.proc(i).symbols !== null),
    session: req.session,
    warnings: job.warnings,
    sanitize: req.sanitize,
    // the verdict over the whole job and its logs, whichever processes the report keeps
    postmortem: req.previewOnly ? null : withPostmortem(s.postmortem(), req.procs),
  });
  if (req.previewOnly) return { html: null, preview, bytes: 0 };
  const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, app);
  return { html, preview, bytes: new TextEncoder().encode(html).length };
}

function withPostmortem(pm: PostmortemView | null, procs: readonly number[]): PostmortemView | null {
  return pm ? viewForProcesses(pm, procs) : null;
}
