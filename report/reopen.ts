// Reopening a report: its embedded data back into a read-only session (notes included) that the app can show
// without the dumps. Everything from the file is validated as untrusted input (session/validate.ts).

import type { Session } from '../session/schema.js';
import { validateSession } from '../session/validate.js';
import type { ReportData } from './data.js';
import { extractReportData } from './html.js';

export interface ReopenedReport {
  /** read-only: the app shows it, never saves over it */
  session: Session;
  /** what the report shows (processes, stacks, frames), for the app's views */
  data: ReportData;
}

export function reportToSession(data: ReportData): Session {
  return validateSession({
    ...data.session,
    notes: data.notes,
    readOnly: true,
    source: { kind: 'report', title: data.title, createdAt: data.createdAt },
  });
}

/** From the text of a `.html` report. Throws ReportError (not a report, damaged, newer) or SessionError. */
export function reopenReport(html: string): ReopenedReport {
  const data = extractReportData(html);
  return { session: reportToSession(data), data };
}
