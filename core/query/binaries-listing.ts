// `heaplens binaries` as the engine answers it (core/engine/api.ts 'binariesListing'): at one snapshot of each
// process, the modules whose frames stay unresolved with the bytes through them (core/query/missing-binaries.ts) —
// the --json document — and what the text says besides: whether the process was symbolized or has maps at all, and
// for a process with nothing missing, the modules found whose binary still names none of some addresses.

import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import { symbolEntry } from '../model/symbol-table.js';
import type { MissingBinariesSummary } from '../symbolize/missing-binaries.js';
import { missingBinariesAt } from './missing-binaries.js';
import { snapshotsAsked } from './snapshot-choice.js';
import { processFacts, snapshotFacts, type ProcessFacts, type SnapshotFacts } from './summary.js';

export interface BinariesRequest {
  /** last, first, peak or a sequence number; null: each process's series end (an exit dump after teardown out) */
  snapshot: string | null;
  /** the allocator's own frames count (--show-allocator) */
  includeAllocator: boolean;
}

export type BinariesProcess = ProcessFacts & { snapshot: SnapshotFacts; symbolized: boolean } & MissingBinariesSummary;

/** What the text shows of a process beside its JSON facts. */
export interface BinariesBlock {
  processIndex: number;
  snapshotIndex: number;
  /** symbolized; else whether it had maps (without them frames cannot be attributed to binaries) */
  symbols: 'symbolized' | 'not symbolized' | 'no maps';
  /** every frame is named by the profile itself (pprof, massif): no module was looked for */
  profileNamed: boolean;
  /** modules found (and matching) whose binary named none of some addresses: stripped of symbols */
  unnamed: { module: string; addresses: number }[];
}

export interface BinariesListing {
  processes: BinariesProcess[];
  warnings: LoadWarning[];
  /** one per entry of `processes` */
  blocks: BinariesBlock[];
}

/** Modules found (and matching) whose binary named none of some addresses, most addresses first. */
function unnamedByModule(proc: ProcessSeries): { module: string; addresses: number }[] {
  const count = new Map<string, Set<string>>();
  const n = proc.addresses.hex.length;
  for (const caller of [false, true])
    for (let a = 0; a < n; a++) {
      const e = symbolEntry(proc, a, caller);
      if (!e || e.status !== 'unresolved' || !e.modulePath || e.frames.length > 0 || e.python) continue;
      let set = count.get(e.modulePath);
      if (!set) count.set(e.modulePath, (set = new Set()));
      set.add(e.address);
    }
  return [...count].map(([module, set]) => ({ module, addresses: set.size })).sort((a, b) => b.addresses - a.addresses);
}

/** Modules whose frames stay unresolved, heaviest first, with what to hand over to resolve them. */
export function binariesListing(job: Job, req: BinariesRequest): BinariesListing {
  const out: BinariesListing = { processes: [], warnings: [...job.warnings], blocks: [] };
  const which = req.snapshot;
  // without a name: each process's series end (an exit dump after teardown holds few of its stacks)
  const at = snapshotsAsked(job.processes, which, out.warnings);
  for (const [pi, p] of job.processes.entries()) {
    const si = at[pi];
    if (si < 0) continue;
    const { summary, symbolized } = missingBinariesAt(p, si, { includeAllocator: req.includeAllocator });
    out.processes.push({ ...processFacts(p), snapshot: snapshotFacts(p.snapshots[si]), symbolized, ...summary });
    const symbols = p.symbols;
    out.blocks.push({
      processIndex: pi,
      snapshotIndex: si,
      symbols: symbols ? 'symbolized' : p.maps ? 'not symbolized' : 'no maps',
      profileNamed: symbols !== null && symbols.modules.length === 0 && p.profileSymbols !== undefined,
      unnamed: symbols && summary.modules.length === 0 ? unnamedByModule(p) : [],
    });
  }
  return out;
}
