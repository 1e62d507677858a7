// `heaplens export --format pprof|folded|speedscope [--snapshot last|first|<seq>] -o out <paths…>`: one snapshot of
// every process (or --pid) in another tool's format, as the engine exports it for the app too
// (core/export/job-export.ts: pprof gzipped, as pprof files are).

import type { ExportFormat } from '../../../core/engine/api.js';
import { writeFileAtomic } from '../../io/session-file.js';
import { flag, has, UsageError, type ParsedArgs } from '../args.js';
import { ask } from '../ask.js';
import { printWarnings, viewOf, type Output } from '../common.js';
import { loadInput, sampleOf } from '../input.js';
import { exportWritten } from '../text/written.js';

export const EXPORT_FORMATS = ['pprof', 'folded', 'speedscope'] as const;

export async function exportCommand(args: ParsedArgs, io: Output): Promise<number> {
  const format = flag(args, 'format');
  if (!format || !(EXPORT_FORMATS as readonly string[]).includes(format))
    throw new UsageError(
      `--format takes ${EXPORT_FORMATS.join(', ')}${format ? `, got ${JSON.stringify(format)}` : ''}`,
    );
  const output = flag(args, 'output');
  if (!output) throw new UsageError('"export" needs -o <file> (or -o - for folded and speedscope on stdout)');
  if (output === '-' && format === 'pprof') throw new UsageError('pprof is binary: give -o <file>');
  const sample = sampleOf(args);
  // --sample names the unit too; --measure alone keeps its old meaning (live bytes or objects)
  const asked = flag(args, 'measure') ?? 'bytes';
  if (!has(args, 'sample') && asked !== 'bytes' && asked !== 'objects')
    throw new UsageError(`--measure takes bytes or objects, got ${JSON.stringify(asked)}`);
  const which = flag(args, 'snapshot') ?? 'last';
  const job = await loadInput(args, io);
  if (!job) return 1;
  let exported;
  try {
    exported = await ask(job, {
      type: 'export',
      format: format as ExportFormat,
      procs: null,
      snapshot: which,
      view: { ...viewOf(args), sample },
      ...(has(args, 'sample') ? {} : { measure: asked === 'objects' ? ('objects' as const) : ('bytes' as const) }),
    });
  } catch (e) {
    printWarnings(job.warnings, io);
    io.err(`heaplens: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  printWarnings([...job.warnings, ...exported.warnings], io);
  const { data } = exported;
  if (output === '-' && typeof data === 'string') {
    io.out(data.endsWith('\n') ? data.slice(0, -1) : data);
    return 0;
  }
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  await writeFileAtomic(output, bytes);
  io.err(exportWritten(output, bytes.length, format, exported.processes, which));
  return 0;
}
