// Reopening a report: its embedded job back into the model (the app's analysis runs on it) and a read-only
// session (notes included). Everything from the file is validated as untrusted input (job-unpack.ts unpackJob,
// core/notes/validate.ts).

import { revealControls } from '../model/display-text.js';
import type { Job } from '../model/model.js';
import type { Session } from '../notes/schema.js';
import { validateSession } from '../notes/validate.js';
import { extractPayload } from './html.js';
import type { PackedJob } from './job-pack.js';
import { unpackJob } from './job-unpack.js';
import { ReportError } from './errors.js';
import { readPostmortemView, type PostmortemView } from '../query/postmortem-view.js';

export interface ReopenedReport {
  /** read-only: the app shows it, never saves over it */
  session: Session;
  header: PackedJob;
  /** its processes carry their symbols (ProcessSeries.symbols) */
  job: Job;
  /** why the job died, as the report's maker computed it; null in reports without one */
  postmortem: PostmortemView | null;
}

export function reportToSession(header: PackedJob): Session {
  return validateSession({
    ...header.session,
    notes: header.notes,
    readOnly: true,
    // the title comes from a folder name: shown in the banner, so marked as every name is
    source: {
      kind: 'report',
      title: revealControls(header.title),
      createdAt: header.createdAt,
      ...(header.leftOut ? { leftOut: revealControls(header.leftOut.reason) } : {}),
    },
  });
}

/** From the payload's bytes. Throws ReportError (not a report, damaged, newer) or SessionError. */
export function reopenPayload(payload: Uint8Array): ReopenedReport {
  const { header, job } = unpackJob(payload);
  let postmortem: PostmortemView | null;
  try {
    postmortem = readPostmortemView(header.postmortem, job.processes.length);
  } catch (e) {
    throw new ReportError(`the report's data is damaged: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { session: reportToSession(header), header, job, postmortem };
}

/** From the text of a `.html` report. */
export function reopenReport(html: string): ReopenedReport {
  return reopenPayload(extractPayload(html));
}
