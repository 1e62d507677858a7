// What the commands that write files say on stderr/stdout: the report's sanitize preview and its "wrote" line,
// export's "wrote" line, ingest's progress and summary.

import type { SanitizePreview } from '../../../core/report/build-report.js';
import type { IngestResult } from '../../dataset/ingest.js';
import { formatBytes } from '../format.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What sanitizing removed, for the user to check before sharing the report. */
export function sanitizeLines(preview: SanitizePreview): string[] {
  const out = [
    `sanitized: ${preview.paths.length} paths shortened to their basenames, maps of ${preview.maps.length} processes left out:`,
  ];
  for (const p of preview.paths.slice(0, 50)) out.push(`  ${p.from} → ${p.to}`);
  if (preview.paths.length > 50) out.push(`  … and ${preview.paths.length - 50} more`);
  for (const m of preview.maps) out.push(`  maps of ${m.process}: ${m.mappings} mappings left out`);
  if (preview.notesKeptAsWritten)
    out.push(`  ${preview.notesKeptAsWritten} notes are kept as written (check their text)`);
  return out;
}

export function reportWritten(output: string, bytes: number, processes: number, stacks: number, notes: number): string {
  return `wrote ${output} (${formatBytes(bytes)}): ${processes} processes, ${stacks} stacks, ${notes} notes`;
}

/** What the report's bounds made the writer leave out (core/report/job-pack.ts LeftOut), or null. */
export function reportLeftOut(leftOut: { reason: string } | undefined): string | null {
  return leftOut ? `left out: ${leftOut.reason}` : null;
}

export function exportWritten(output: string, bytes: number, format: string, processes: number, which: string): string {
  return `wrote ${output} (${formatBytes(bytes)}): ${format}, ${plural(processes, 'process', 'processes')}, snapshot ${which}`;
}

export function ingestProgress(p: { mode: string; key: string; dumps: number }): string | null {
  if (p.mode === 'unchanged') return null;
  return `${p.mode === 'full' ? 'wrote' : 'appended'} ${p.key} (${plural(p.dumps, 'dump')})`;
}

export function ingestSummary(out: string, r: IngestResult, bytes: number, seconds: string): string {
  return (
    `${out}: ${plural(r.dumpsRead, 'dump')} read, ${r.dumpsSkipped} already in the dataset; ` +
    `${plural(r.processes.full, 'process', 'processes')} written, ${r.processes.append} appended, ${r.processes.unchanged} unchanged; ${formatBytes(bytes)} in ${seconds} s`
  );
}
