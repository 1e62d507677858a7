// One maps list per process, chosen from its dumps' MAPPED_LIBRARIES copies so that no dump's damaged
// maps silently move another dump's frames to a different module.
//
// The newest undamaged, complete copy is the base (a process's mappings only grow, short of dlclose).
// Every other dump whose file mappings differ is checked address by address over its own frames: a
// mapping the base lacks is taken from that dump's own maps; an address the base puts in a different
// file than the dump's own maps do is reported, naming both.

import { findMapping, isFileMapping, type MapsEntry } from '../formats/proc-maps.js';
import type { LoadWarning } from '../model/model.js';

export interface DumpMaps {
  file: string;
  entries: MapsEntry[];
  /** the section reached the end of the file intact */
  complete: boolean;
  /** lines of the section that were not maps lines */
  dropped: number;
}

export interface ProcessMapsChoice {
  entries: MapsEntry[];
  /** the dump whose maps are the base */
  base: string;
}

/** The base: newest complete and undamaged, else newest complete, else newest with any mappings. */
function pickBase(dumps: readonly (DumpMaps | null)[]): DumpMaps | null {
  const withEntries = dumps.filter((d): d is DumpMaps => d !== null && d.entries.length > 0);
  for (const ok of [(d: DumpMaps) => d.complete && d.dropped === 0, (d: DumpMaps) => d.complete, () => true]) {
    for (let i = withEntries.length - 1; i >= 0; i--) if (ok(withEntries[i])) return withEntries[i];
  }
  return null;
}

function fileSignature(entries: readonly MapsEntry[]): string {
  return entries
    .filter(isFileMapping)
    .map((e) => `${e.start.toString(16)}-${e.end.toString(16)} ${e.path}`)
    .join('\n');
}

function overlapsAny(sorted: readonly MapsEntry[], e: MapsEntry): boolean {
  return sorted.some((m) => m.start < e.end && e.start < m.end);
}

/**
 * `dumps[i]` are the maps of snapshot i (null when it has none); `addressesOf(i)` the frame addresses its
 * records use. Returns null when no dump has mappings.
 */
export function chooseProcessMaps(
  dumps: readonly (DumpMaps | null)[],
  addressesOf: (i: number) => Iterable<bigint>,
  warnings: LoadWarning[],
): ProcessMapsChoice | null {
  const base = pickBase(dumps);
  if (!base) return null;
  const merged = [...base.entries];
  const replaced = new Set<MapsEntry>();
  const baseSig = fileSignature(base.entries);
  if (base !== dumps[dumps.length - 1] && dumps[dumps.length - 1]) {
    const newest = dumps[dumps.length - 1]!;
    warnings.push({
      file: newest.file,
      message: `its maps are not used for the process (${newest.entries.length === 0 ? 'no readable mappings' : !newest.complete ? 'cut off' : `${newest.dropped} damaged line(s)`}); the maps of ${base.file} are`,
    });
  }
  dumps.forEach((d, i) => {
    if (!d || d === base || d.entries.length === 0 || fileSignature(d.entries) === baseSig) return;
    let added = 0;
    const moved = new Map<string, number>();
    const kept = new Set<string>();
    for (const a of addressesOf(i)) {
      const own = findMapping(d.entries, a);
      if (!own || !isFileMapping(own)) continue;
      const chosen = findMapping(merged, a);
      if (!chosen) {
        if (!overlapsAny(merged, own)) {
          merged.push(own);
          merged.sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
          added++;
        }
        continue;
      }
      if (chosen.path !== own.path) {
        const key = `${own.path} → ${chosen.path || '(anonymous)'}`;
        moved.set(key, (moved.get(key) ?? 0) + 1);
        // Two copies disagree: one is damaged. A dump's own undamaged maps keep its frames where they are
        // (issue 21 item 8): the disagreeing entries are replaced by its own, once (a region already taken
        // from one dump is not flipped by the next).
        if (d.complete && d.dropped === 0 && !replaced.has(chosen)) {
          for (let k = merged.length - 1; k >= 0; k--)
            if (merged[k].start < own.end && own.start < merged[k].end) merged.splice(k, 1);
          merged.push(own);
          replaced.add(own);
          merged.sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
          kept.add(key);
        }
      }
    }
    for (const [key, n] of moved) {
      warnings.push({
        file: d.file,
        message: kept.has(key)
          ? `${n} frame address(es) lie in another file by this dump's own maps than by ${base.file}'s (${key}): this dump's own mappings are used there, for every dump of the process`
          : `${n} frame address(es) lie in another file by this dump's own maps than by the maps used for the process (${base.file}): ${key}`,
      });
    }
    if (added > 0)
      warnings.push({
        file: d.file,
        message: `${added} mapping(s) taken from this dump's own maps, which ${base.file}'s maps lack`,
      });
  });
  return { entries: merged, base: base.file };
}
