// `heaplens export --format pprof|folded|speedscope [--snapshot last|first|<seq>] -o out <paths…>`: one snapshot of
// every process (or --pid) in another tool's format (core/export/). pprof is written gzipped, as pprof files are.

import { gzipSync } from 'node:zlib';
import { exportInputs } from '../../../core/export/export-inputs.js';
import { toFolded } from '../../../core/export/folded.js';
import { toPprof } from '../../../core/export/pprof.js';
import { toSpeedscope } from '../../../core/export/speedscope.js';
import { jobDeclaredSamples, sampleUnit } from '../../../core/model/sample-type.js';
import { writeFileAtomic } from '../../io/session-file.js';
import { flag, has, UsageError, type ParsedArgs } from '../args.js';
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
  const view = viewOf(args);
  const job = await loadInput(args, io);
  if (!job) return 1;
  // a declared type's unit is the job's (its profiles say bytes or a count)
  const measure = has(args, 'sample')
    ? sampleUnit(sample, jobDeclaredSamples(job))
    : asked === 'objects'
      ? 'objects'
      : 'bytes';
  const { inputs, warnings } = exportInputs(job, { allSamples: format === 'pprof', sample, snapshot: which, view });
  job.warnings.push(...warnings);
  printWarnings(job.warnings, io);
  if (inputs.length === 0) {
    io.err(`heaplens: no process has snapshot ${which}`);
    return 1;
  }
  const showAllocator = has(args, 'show-allocator');
  let bytes: Uint8Array;
  if (format === 'pprof') {
    const comments = inputs.map((x) => `heaplens: ${x.proc.key} ${x.proc.snapshots[x.snapshotIndex].file}`);
    bytes = gzipSync(toPprof(inputs, { showAllocator, comments, defaultSample: sample }));
  } else {
    const text =
      format === 'folded'
        ? toFolded(inputs, { showAllocator, measure })
        : JSON.stringify(toSpeedscope(inputs, { showAllocator, measure }));
    if (output === '-') {
      io.out(text.endsWith('\n') ? text.slice(0, -1) : text);
      return 0;
    }
    bytes = new TextEncoder().encode(text);
  }
  await writeFileAtomic(output, bytes);
  io.err(exportWritten(output, bytes.length, format, inputs.length, which));
  return 0;
}
