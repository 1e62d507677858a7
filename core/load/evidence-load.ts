// Reads the files given beside the dumps that are neither dumps nor side files, by content: kernel logs with
// an OOM report, cgroup memory files, job logs with kill lines, smaps_rollup samples. A file none of the
// readers knows stays "ignored"; one a reader knows is listed as read (with what it gave, core/stats/).

import type { InputFile } from '../formats/input-file.js';
import { parseKernelOomLog } from '../formats/kernel-oom.js';
import { parseCgroupFile } from '../formats/cgroup-memory.js';
import { parseJobLog } from '../formats/job-log.js';
import { parseSmapsRollup } from '../formats/smaps-rollup.js';
import type { JobEvidence, LoadWarning } from '../model/model.js';

/** Logs above this are read only up to it (a kernel log of a day is a few MiB). */
export const MAX_EVIDENCE_BYTES = 64 * 1024 * 1024;

function pidFromPath(path: string): number | null {
  const m = /(?:^|\/)(\d{1,10})\/smaps_rollup$/.exec(path) ?? /smaps_rollup[._-](\d{1,10})(?:\.txt)?$/.exec(path);
  return m ? Number(m[1]) : null;
}

/**
 * `year`: the year of syslog/journal lines, which carry none (the dumps' year). Returns the evidence and
 * the paths no reader knew.
 */
export async function readEvidence(
  files: readonly InputFile[],
  year: number,
  warnings: LoadWarning[],
): Promise<{ evidence: JobEvidence | undefined; unread: string[] }> {
  const ev: JobEvidence = { kernel: [], cgroup: [], jobLogs: [], smaps: [] };
  const unread: string[] = [];
  for (const file of files) {
    if (file.size === 0) {
      unread.push(file.path);
      continue;
    }
    let bytes: Uint8Array;
    try {
      bytes = await file.read(0, Math.min(file.size, MAX_EVIDENCE_BYTES));
    } catch (e) {
      warnings.push({ file: file.path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    }
    // binaries are not logs
    if (bytes.subarray(0, 4096).includes(0)) {
      unread.push(file.path);
      continue;
    }
    const text = new TextDecoder('utf-8').decode(bytes);
    const cut = file.size > MAX_EVIDENCE_BYTES;
    const note = (line?: number, message?: string): void => {
      if (message) warnings.push({ file: file.path, ...(line ? { line } : {}), message });
    };
    const k = parseKernelOomLog(text, year);
    const j = k ? null : parseJobLog(text);
    const c = k || j ? null : parseCgroupFile(file.path, text);
    const s = k || j || c ? null : parseSmapsRollup(text, pidFromPath(file.path));
    const found = k ?? j ?? c ?? s;
    if (!found) {
      unread.push(file.path);
      continue;
    }
    if (cut) note(undefined, `only the first ${MAX_EVIDENCE_BYTES} bytes were read`);
    for (const w of found.warnings) note(w.line, w.message);
    if (k) ev.kernel.push({ file: file.path, log: k });
    else if (j) ev.jobLogs.push({ file: file.path, log: j });
    else if (c) ev.cgroup.push({ file: file.path, cg: c });
    else if (s) ev.smaps.push({ file: file.path, rollup: s });
  }
  const any = ev.kernel.length + ev.cgroup.length + ev.jobLogs.length + ev.smaps.length > 0;
  return { evidence: any ? ev : undefined, unread };
}
