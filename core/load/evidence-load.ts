// Reads the files given beside the dumps that are neither dumps nor side files, by content: kernel logs with
// an OOM report, cgroup memory files, job logs with kill lines and roles, smaps_rollup samples; and names the
// processes by the roles the job logs give them. A file none of the readers knows, and documentation (a README,
// Markdown, source code: `isDocumentation`), stays "ignored"; one a reader knows is listed as read (with what it gave, core/stats/).

import type { InputFile } from '../formats/input-file.js';
import { parseKernelOomLog } from '../formats/kernel-oom.js';
import { parseCgroupFile } from '../formats/cgroup-memory.js';
import { parseJobLog } from '../formats/job-log.js';
import { parseSmapsRollup } from '../formats/smaps-rollup.js';
import type { JobEvidence, LoadWarning, ProcessSeries, Snapshot } from '../model/model.js';
import { logScopes } from '../model/process-host.js';

/** Logs above this are read only up to it (a kernel log of a day is a few MiB). */
export const MAX_EVIDENCE_BYTES = 64 * 1024 * 1024;

/**
 * Documentation and source code beside the dumps, by its name: any Markdown file, a README (bare or with an
 * extension), and program sources (the workload and the scripts that ran it, copied with the dumps). They quote log
 * lines as examples or patterns (a fixture's README quotes its launcher's, its checker the kernel's), which are no
 * evidence of this job; a log is known by its content whatever its name, so a log with any other name is still read.
 */
export function isDocumentation(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return (
    /\.(?:md|markdown|py|sh|bash|c|h|cc|cpp|hpp|rs|go|js|mjs|cjs|ts)$/i.test(name) || /^readme(?:\.[^.]*)?$/i.test(name)
  );
}

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
    if (file.size === 0 || isDocumentation(file.path)) {
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
    // a node's log may hold the kernel's report and the job's own lines (a journal, a container runtime's log)
    const k = parseKernelOomLog(text, year);
    const j = parseJobLog(text);
    const c = k || j ? null : parseCgroupFile(file.path, text);
    const s = k || j || c ? null : parseSmapsRollup(text, pidFromPath(file.path));
    const found = [k, j, c, s].filter((x) => x !== null);
    if (found.length === 0) {
      unread.push(file.path);
      continue;
    }
    if (cut) note(undefined, `only the first ${MAX_EVIDENCE_BYTES} bytes were read`);
    for (const f of found) for (const w of f.warnings) note(w.line, w.message);
    if (k) ev.kernel.push({ file: file.path, log: k });
    if (j) ev.jobLogs.push({ file: file.path, log: j });
    if (c) ev.cgroup.push({ file: file.path, cg: c });
    if (s) ev.smaps.push({ file: file.path, rollup: s });
  }
  const any = ev.kernel.length + ev.cgroup.length + ev.jobLogs.length + ev.smaps.length > 0;
  return { evidence: any ? ev : undefined, unread };
}

/**
 * The evidence of the job's other files applied to its processes, as every reader of a job does (loadJob on the
 * dumps, node/dataset/read-dataset.ts on a dataset's kept copies): read (syslog years from the job's first dump),
 * processes named by role, dumps without a clock timed from the logs. Returns what readEvidence returns.
 */
export async function applyEvidence(
  processes: ProcessSeries[],
  files: readonly InputFile[],
  warnings: LoadWarning[],
): Promise<{ evidence: JobEvidence | undefined; unread: string[] }> {
  const read = await readEvidence(files, jobYear(processes), warnings);
  nameProcessesByRole(processes, read.evidence, warnings);
  timeDumpsFromLogs(processes, read.evidence, warnings);
  return read;
}

/** The year of the job's first dump (context clock, else mtime), for log lines that carry none. */
function jobYear(processes: readonly ProcessSeries[]): number {
  for (const p of processes)
    for (const s of p.snapshots) {
      const t = s.context?.timeRealMs ?? s.mtimeMs;
      if (t !== null && t !== undefined) return new Date(t).getUTCFullYear();
    }
  return new Date().getUTCFullYear();
}

/**
 * Names processes by the roles the job logs give their pids (`[rollout-1 pid=N]`, `started loader-1 pid=N`): the
 * role most lines give a pid, when exactly one process the log speaks for has that pid (pids repeat across nodes and
 * runs: a role is no guess). A log in a host's folder (`node-b/logs/…`) speaks for that host's processes only
 * (core/model/process-host.ts logScopes). Two roles for one process is said in a warning.
 */
export function nameProcessesByRole(
  processes: ProcessSeries[],
  evidence: JobEvidence | undefined,
  warnings: LoadWarning[],
): void {
  if (!evidence) return;
  const scopes = logScopes(
    processes,
    evidence.jobLogs.map((l) => l.file),
  );
  const all = processes.map((_, i) => i);
  // votes by process (pid, in the log's scope), and the processes a log's pid could be
  const votes = new Map<ProcessSeries, Map<string, { n: number; file: string; line: number }>>();
  const shared: { pid: number; n: number; role: string; file: string; line: number }[] = [];
  for (const { file, log } of evidence.jobLogs) {
    const byPid = new Map<number, ProcessSeries[]>();
    for (const i of scopes.get(file) ?? all) {
      const p = processes[i];
      if (p.pid !== null) byPid.set(p.pid, [...(byPid.get(p.pid) ?? []), p]);
    }
    for (const r of log.roles) {
      const ps = byPid.get(r.pid);
      if (!ps) continue;
      if (ps.length > 1) {
        shared.push({ pid: r.pid, n: ps.length, role: r.role, file, line: r.line });
        continue;
      }
      const v = votes.get(ps[0]) ?? new Map<string, { n: number; file: string; line: number }>();
      const cur = v.get(r.role) ?? { n: 0, file, line: r.line };
      cur.n += r.count;
      v.set(r.role, cur);
      votes.set(ps[0], v);
    }
  }
  const said = new Set<number>();
  for (const s of shared) {
    if (said.has(s.pid)) continue; // once per pid
    said.add(s.pid);
    warnings.push({
      file: s.file,
      line: s.line,
      message: `the log names pid ${s.pid} "${s.role}", but ${s.n} processes of the dumps have that pid: none is named by it`,
    });
  }
  for (const [p, v] of votes) {
    const ranked = [...v.entries()].sort((a, b) => b[1].n - a[1].n);
    const [name, at] = ranked[0];
    if (ranked.length > 1)
      warnings.push({
        file: at.file,
        line: at.line,
        message: `the logs give pid ${p.pid} ${ranked.length} roles (${ranked.map(([r, x]) => `"${r}" ×${x.n}`).join(', ')}): named "${name}", the most given`,
      });
    p.role = { name, file: at.file, line: at.line };
  }
}

/** A dump's file name as a log writes it: no folders, no compression suffix. */
const dumpName = (path: string): string => path.slice(path.lastIndexOf('/') + 1).replace(/\.(?:gz|zst|bz2|xz)$/, '');

/**
 * Gives the dumps without a capture clock the time a log writes beside their file name (Snapshot.logTime): a
 * listing made on the node before the copy, a job's "wrote …heap" line. A name two lines give different times
 * keeps the first and says so; a log that names no dump of the job gives nothing. core/model/snapshot-time.ts
 * uses them when they cover every such dump of a process and run forward.
 */
export function timeDumpsFromLogs(
  processes: ProcessSeries[],
  evidence: JobEvidence | undefined,
  warnings: LoadWarning[],
): void {
  if (!evidence) return;
  const wanted = new Map<string, Snapshot[]>();
  for (const p of processes)
    for (const s of p.snapshots)
      if (!s.context) {
        const n = dumpName(s.file);
        wanted.set(n, [...(wanted.get(n) ?? []), s]);
      }
  if (wanted.size === 0) return;
  const found = new Map<string, { ms: number; file: string; line: number }>();
  for (const { file, log } of evidence.jobLogs)
    for (const t of log.dumpTimes) {
      if (!wanted.has(t.name)) continue;
      const had = found.get(t.name);
      if (!had) found.set(t.name, { ms: t.atMs, file, line: t.line });
      else if (Math.abs(had.ms - t.atMs) > 1000)
        warnings.push({
          file,
          line: t.line,
          message: `${t.name} is written at ${new Date(t.atMs).toISOString()} here, at ${new Date(had.ms).toISOString()} in ${had.file}:${had.line}: the first is used`,
        });
    }
  for (const [name, at] of found) {
    const snaps = wanted.get(name)!;
    // one name in two folders (two nodes' dumps): the log cannot say which
    if (snaps.length === 1) snaps[0].logTime = at;
  }
}
