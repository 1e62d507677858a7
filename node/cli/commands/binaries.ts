// `heaplens binaries`: the modules whose frames stay unresolved, the bytes through them, and what to hand over.

import type { Job } from '../../../core/model/model.js';
import type { SymbolTable } from '../../../core/model/symbol-table.js';
import { flag, has, type ParsedArgs } from '../args.js';
import { formatBytes, formatInt, formatPercent, table } from '../format.js';
import { missingBinariesAt } from '../../../core/query/missing-binaries.js';
import { indent, printWarnings, processJson, processTitle, snapshotJson, type Output } from '../common.js';
import { defaultSnapshot, snapshotIndices } from '../../../core/query/snapshot-choice.js';

/** Modules found (and matching) whose binary named none of some addresses: stripped of symbols. */
function unnamedByModule(symbols: SymbolTable): { module: string; addresses: number }[] {
  const count = new Map<string, Set<string>>();
  for (const e of [...symbols.leaf, ...symbols.caller])
    if (e && e.status === 'unresolved' && e.modulePath && e.frames.length === 0 && !e.python) {
      let set = count.get(e.modulePath);
      if (!set) count.set(e.modulePath, (set = new Set()));
      set.add(e.address);
    }
  return [...count].map(([module, set]) => ({ module, addresses: set.size })).sort((a, b) => b.addresses - a.addresses);
}

/** Modules whose frames stay unresolved, heaviest first, with what to hand over to resolve them. */
export function binaries(job: Job, args: ParsedArgs, io: Output): void {
  const which = flag(args, 'snapshot');
  const json = has(args, 'json');
  const procsJson: unknown[] = [];
  // without --snapshot: each process's series end (an exit dump after teardown holds few of its stacks)
  const at =
    which !== undefined ? snapshotIndices(job.processes, which, 'snapshot') : job.processes.map(defaultSnapshot);
  for (const [pi, p] of job.processes.entries()) {
    const si = at[pi];
    if (si < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    const symbols = p.symbols;
    const { summary: sum, symbolized } = missingBinariesAt(p, si, { includeAllocator: has(args, 'show-allocator') });
    const s = p.snapshots[si];
    procsJson.push({ ...processJson(p), snapshot: snapshotJson(s), symbolized, ...sum });
    if (json) continue;
    io.out(`${processTitle(p, job)}\n  snapshot ${s.seq ?? '-'} ${s.file}`);
    if (!symbols) {
      io.out(
        p.maps
          ? '  not symbolized\n'
          : '  no maps: frames cannot be attributed to binaries (give the maps file beside the dumps)\n',
      );
      continue;
    }
    if (sum.modules.length === 0) {
      // found and matching, yet frames may still read module+0x…: the binary has no name for those addresses
      const unnamed = unnamedByModule(symbols);
      if (unnamed.length === 0 && symbols.modules.length === 0 && p.profileSymbols)
        io.out('  every frame is named by the profile itself (pprof, massif): no binary is needed\n');
      else if (unnamed.length === 0) io.out('  every module with frames was found and matches its mapping\n');
      else {
        io.out('  every module with frames was found and matches its mapping, but some frames stay module+offset:');
        for (const u of unnamed)
          io.out(
            `    ${u.module}: ${formatInt(u.addresses)} address${u.addresses === 1 ? '' : 'es'} with no name in it (a binary stripped of its symbols); hand over its debug file (a -dbg/-debuginfo package or the build-id .debug) and pass its folder with --symbols`,
          );
        io.out('');
      }
      continue;
    }
    io.out(
      `  ${formatBytes(sum.unresolvedBytes)} of ${formatBytes(sum.totalBytes)} (${formatPercent(sum.unresolvedBytes, sum.totalBytes)}) is in stacks with unresolved frames.`,
    );
    io.out('  Hand over these files (or their debug files) and pass their folder with --symbols:');
    // Paths are what to copy: never cut (the JSON has each module's reason in full)
    const rows = sum.modules.map((m) => [
      formatBytes(m.bytes),
      formatPercent(m.bytes, sum.totalBytes),
      formatInt(m.stacks),
      formatInt(m.addresses),
      m.status,
      m.buildId ?? '-',
      m.mappingPath,
    ]);
    io.out(
      indent(
        table(['bytes', 'share', 'stacks', 'addresses', 'status', 'build-id', 'path as in the maps'], rows, [
          true,
          true,
          true,
          true,
          false,
          false,
          false,
        ]),
      ) + '\n',
    );
  }
  if (json) io.out(JSON.stringify({ processes: procsJson, warnings: job.warnings }, null, 2));
  else printWarnings(job.warnings, io);
}
