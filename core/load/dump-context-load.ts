// The context of one dump (core/formats/dump-context.ts) from the PYFRAMES table that came with it: the
// pids it must agree with, and a warning naming the file when it is ignored. The dump itself and its
// Python frames are read either way.

import type { InputFile } from '../formats/input-file.js';
import { parseDumpContext, type DumpContext } from '../formats/dump-context.js';
import { sidecarPathsFor, type PyFrameTable } from '../formats/pyframes.js';
import type { LoadWarning } from '../model/model.js';

export function contextForDump(
  table: PyFrameTable,
  dumpPath: string,
  namePid: number | null,
  sidecars: ReadonlyMap<string, InputFile>,
  warnings: LoadWarning[],
): DumpContext | null {
  if (!table.contextRecords || table.contextRecords.length === 0) return null;
  const r = parseDumpContext(table.contextRecords, { pids: [table.pid, namePid] });
  if (r.problem) {
    const file =
      table.source === 'sidecar' ? (sidecarPathsFor(dumpPath).find((p) => sidecars.has(p)) ?? dumpPath) : dumpPath;
    warnings.push({
      file,
      ...(r.problem.line !== undefined ? { line: r.problem.line } : {}),
      message: `context ignored: ${r.problem.message}`,
    });
  }
  return r.context;
}

/** A table that carries only a context (a process without Python frames): not a Python frame table. */
export function isContextOnlyTable(t: PyFrameTable): boolean {
  return t.python === null && t.frames.size === 0;
}
