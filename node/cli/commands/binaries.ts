// `heaplens binaries`: the modules whose frames stay unresolved, the bytes through them, and what to hand over, as
// the engine lists them (core/query/binaries-listing.ts binariesListing); this is its text, or its JSON document.

import type { Job } from '../../../core/model/model.js';
import { flag, has, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { formatBytes, formatInt, formatPercent, table } from '../format.js';
import { indent, printWarnings, processTitle, type Output } from '../common.js';

/** Modules whose frames stay unresolved, heaviest first, with what to hand over to resolve them. */
export async function binaries(job: Job, args: ParsedArgs, io: Output): Promise<void> {
  const { listing } = await ask(job, {
    type: 'binariesListing',
    snapshot: flag(args, 'snapshot') ?? null,
    includeAllocator: has(args, 'show-allocator'),
  });
  if (has(args, 'json')) {
    io.out(JSON.stringify({ processes: listing.processes, warnings: listing.warnings }, null, 2));
    return;
  }
  listing.blocks.forEach((b, k) => {
    const sum = listing.processes[k];
    const s = sum.snapshot;
    io.out(`${processTitle(job.processes[b.processIndex], job)}\n  snapshot ${s.seq ?? '-'} ${s.file}`);
    if (b.symbols !== 'symbolized') {
      io.out(
        b.symbols === 'not symbolized'
          ? '  not symbolized\n'
          : '  no maps: frames cannot be attributed to binaries (give the maps file beside the dumps)\n',
      );
      return;
    }
    if (sum.modules.length === 0) {
      // found and matching, yet frames may still read module+0x…: the binary has no name for those addresses
      if (b.unnamed.length === 0 && b.profileNamed)
        io.out('  every frame is named by the profile itself (pprof, massif): no binary is needed\n');
      else if (b.unnamed.length === 0) io.out('  every module with frames was found and matches its mapping\n');
      else {
        io.out('  every module with frames was found and matches its mapping, but some frames stay module+offset:');
        for (const u of b.unnamed)
          io.out(
            `    ${u.module}: ${formatInt(u.addresses)} address${u.addresses === 1 ? '' : 'es'} with no name in it (a binary stripped of its symbols); hand over its debug file (a -dbg/-debuginfo package or the build-id .debug) and pass its folder with --symbols`,
          );
        io.out('');
      }
      return;
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
  });
  printWarnings(listing.warnings, io);
}
