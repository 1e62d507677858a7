// Missing binaries on a real Python job (fixtures/oom-job: CPython 3.12 under jemalloc, every stack through the
// python3.12 executable, whose binary is not among the dumps): every stack passes through an unresolved module,
// yet the Python-first view folds the interpreter's own frames, so the bytes it shows unresolved are only those of
// stacks through another missing module. Expected figures: the dump's own records, summed here by module path.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeInputFile } from '../../node/io/node-files.js';
import { loadJob } from '../load/load-job.js';
import { findMapping } from '../formats/proc-maps.js';
import { interpreterModules } from '../frames/stack-labels.js';
import type { Job } from '../model/model.js';
import type { ModuleReport } from '../model/symbol-table.js';
import { missingBinaries } from './missing-binaries.js';

const dir = fileURLToPath(new URL('../../fixtures/oom-job/dumps/', import.meta.url));
let job: Job;
beforeAll(async () => {
  job = await loadJob(
    readdirSync(dir).map((n) => nodeInputFile(join(dir, n), `dumps/${n}`, statSync(join(dir, n)).size, null)),
  );
}, 60_000);

/** every mapped file reported missing, as the symbolizer reports it with no binaries given */
function allMissing(paths: Iterable<string>): ModuleReport[] {
  return [...paths].map((mappingPath) => ({
    mappingPath,
    binaryPath: null,
    debugPath: null,
    buildId: null,
    binary: null,
    reason: 'not found',
    addresses: 0,
    error: null,
  }));
}

describe('missing binaries in a Python job', () => {
  it('the folded interpreter frames do not count as shown unresolved; other missing modules do', () => {
    const p = job.processes.find((q) => q.pythonFrames && q.maps)!;
    expect(p).toBeDefined();
    const si = p.snapshots.length - 2;
    const s = p.snapshots[si];
    const isInterp = interpreterModules(p);
    // by hand from the records: a stack's modules (allocator frames left out), bytes through a non-interpreter file
    const { offsets, frames, allocatorDepth } = p.stacks;
    let total = 0;
    let through = 0;
    let throughOther = 0;
    for (let r = 0; r < s.stackIds.length; r++) {
      const id = s.stackIds[r];
      const mods = new Set<string>();
      for (let k = offsets[id] + (allocatorDepth[id] ?? 0); k < offsets[id + 1]; k++) {
        const m = findMapping(p.maps ?? [], BigInt(p.addresses.hex[frames[k]]));
        if (m && m.path.startsWith('/')) mods.add(m.path);
      }
      total += s.liveBytes[r];
      if (mods.size > 0) through += s.liveBytes[r];
      if ([...mods].some((m) => !isInterp(m))) throughOther += s.liveBytes[r];
    }
    const paths = new Set((p.maps ?? []).map((m) => m.path).filter((x) => x.startsWith('/')));
    const interp = [...paths].filter((x) => isInterp(x));
    expect(interp.length, 'the python3.12 executable is mapped').toBeGreaterThan(0);

    // only the interpreter missing: every byte goes through it, none is shown unresolved in Python-first
    const onlyInterp = missingBinaries(p, si, allMissing(interp), { folded: isInterp });
    expect(onlyInterp.totalBytes).toBe(total);
    expect(onlyInterp.unresolvedBytes).toBeGreaterThan(0.9 * total);
    expect(onlyInterp.shownUnresolvedBytes).toBe(0);
    // without the fold (merged/native views) they are shown
    expect(missingBinaries(p, si, allMissing(interp)).shownUnresolvedBytes).toBe(onlyInterp.unresolvedBytes);

    // every binary missing: shown unresolved = the stacks through a file that is not the interpreter's
    const all = missingBinaries(p, si, allMissing(paths), { folded: isInterp });
    expect(all.unresolvedBytes).toBe(through);
    // (here every stack also passes libc's start-up frames, so that is all of them: the headline is right to say so)
    expect(all.shownUnresolvedBytes).toBe(throughOther);
  });
});
