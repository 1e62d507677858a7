// "Missing binaries, said plainly": after symbolizing a process, the modules whose frames stay unresolved (no
// binary found, or one that does not fit the mapping), how many of a snapshot's bytes pass through their frames,
// and what to hand over to resolve them (the path as in the maps, the build-id when a found file told us one).
// Pure: used by the CLI (`heaplens binaries`, the note after each command) and the app's worker.

import type { ProcessSeries } from '../model/model.js';
import { findMapping } from '../formats/proc-maps.js';
import type { ModuleReport } from './symbolize.js';

export interface MissingBinary {
  /** the module's path as in the maps: what to copy off the machine the dumps came from */
  mappingPath: string;
  /** the build-id to hand over: the one the mapping names (pprof profiles), else that of the file found at the
   *  path when it did not match (jemalloc's maps carry none), else null */
  buildId: string | null;
  status: 'missing' | 'mismatch' | 'error';
  /** why, in the symbolizer's words */
  reason: string;
  /** distinct addresses of the snapshot's stacks in the module */
  addresses: number;
  /** stacks of the snapshot with at least one frame in the module, and their bytes (a stack counts once) */
  stacks: number;
  bytes: number;
}

export interface MissingBinariesSummary {
  modules: MissingBinary[];
  /** the snapshot's total bytes, for shares */
  totalBytes: number;
  /** bytes of the stacks with any unresolved frame (each stack once) */
  unresolvedBytes: number;
  /**
   * bytes of the stacks with an unresolved frame the view shows: frames of the modules `folded` says the view
   * folds (the interpreter's own in the Python-first view, core/frames interpreterModules) do not count. Equals unresolvedBytes
   * otherwise. A Python job whose interpreter binary is missing has every stack through it, yet every frame
   * it shows may be resolved: this, not unresolvedBytes, is what the headline says.
   */
  shownUnresolvedBytes: number;
}

function statusOf(m: ModuleReport): MissingBinary['status'] | null {
  if (m.binaryPath === null) return 'missing';
  if (m.binary === 'mismatch') return 'mismatch';
  if (m.error) return 'error';
  return null;
}

/**
 * The unresolved modules of one process at one snapshot, heaviest first. The allocator's own frames (the leading
 * frames views hide) count only with `includeAllocator`: their names matter only to those who show them.
 */
export function missingBinaries(
  proc: ProcessSeries,
  snapshotIndex: number,
  modules: readonly ModuleReport[],
  options: { includeAllocator?: boolean; folded?: (modulePath: string) => boolean } = {},
): MissingBinariesSummary {
  const s = proc.snapshots[snapshotIndex];
  const wanted = new Map<string, { report: ModuleReport; status: MissingBinary['status'] }>();
  for (const m of modules) {
    const st = statusOf(m);
    if (st) wanted.set(m.mappingPath, { report: m, status: st });
  }
  const totalBytes = s ? s.live.bytes : 0;
  if (!s || wanted.size === 0 || !proc.maps)
    return { modules: [], totalBytes, unresolvedBytes: 0, shownUnresolvedBytes: 0 };
  const folded = options.folded ?? ((): boolean => false);
  // module path of every address (null: not in an unresolved module), computed once
  const moduleOf = new Map<number, string | null>();
  const pathOf = (a: number): string | null => {
    let p = moduleOf.get(a);
    if (p === undefined) {
      let m = null;
      try {
        m = findMapping(proc.maps ?? [], BigInt(proc.addresses.hex[a]));
      } catch {
        m = null;
      }
      p = m && wanted.has(m.path) ? m.path : null;
      moduleOf.set(a, p);
    }
    return p;
  };
  const acc = new Map<string, { addresses: Set<number>; stacks: number; bytes: number }>();
  let unresolvedBytes = 0;
  let shownUnresolvedBytes = 0;
  const { offsets, frames, allocatorDepth } = proc.stacks;
  for (let r = 0; r < s.stackIds.length; r++) {
    const id = s.stackIds[r];
    const seen = new Set<string>();
    let shown = false;
    const from = offsets[id] + (options.includeAllocator ? 0 : (allocatorDepth[id] ?? 0));
    for (let k = from; k < offsets[id + 1]; k++) {
      const p = pathOf(frames[k]);
      if (p === null) continue;
      if (!folded(p)) shown = true;
      let e = acc.get(p);
      if (!e) {
        e = { addresses: new Set(), stacks: 0, bytes: 0 };
        acc.set(p, e);
      }
      e.addresses.add(frames[k]);
      if (!seen.has(p)) {
        seen.add(p);
        e.stacks++;
        e.bytes += s.liveBytes[r];
      }
    }
    if (seen.size > 0) unresolvedBytes += s.liveBytes[r];
    if (shown) shownUnresolvedBytes += s.liveBytes[r];
  }
  const out: MissingBinary[] = [];
  for (const [path, e] of acc) {
    const w = wanted.get(path);
    if (!w) continue;
    out.push({
      mappingPath: path,
      buildId: w.report.mappingBuildId ?? w.report.buildId,
      status: w.status,
      reason: w.report.error ?? w.report.reason,
      addresses: e.addresses.size,
      stacks: e.stacks,
      bytes: e.bytes,
    });
  }
  out.sort((a, b) => b.bytes - a.bytes || (a.mappingPath < b.mappingPath ? -1 : 1));
  return { modules: out, totalBytes, unresolvedBytes, shownUnresolvedBytes };
}
