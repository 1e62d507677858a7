// `heaplens export --format pprof|folded|speedscope [--snapshot last|first|<seq>] -o out <paths…>`: one snapshot of
// every process (or --pid) in another tool's format (core/export/). pprof is written gzipped, as pprof files are.

import { gzipSync } from 'node:zlib';
import { writeFileAtomic } from '../io/session-file.js';
import type { ExportInput } from '../../core/export/samples.js';
import { toPprof } from '../../core/export/pprof.js';
import { toFolded } from '../../core/export/folded.js';
import { toSpeedscope } from '../../core/export/speedscope.js';
import { checkFlags, flag, has, UsageError, type ParsedArgs } from './args.js';
import { formatBytes } from './format.js';
import {
  DEFAULT_SAMPLE_TYPE,
  parseSampleType,
  sampleSeries,
  sampleUnavailable,
  sampleUnit,
} from '../../core/model/sample-type.js';
import { SYMBOL_FLAGS } from './symbols.js';
import { commandDescriber, type CommandIO } from './report-command.js';
import { loadInput } from './input.js';
import { snapshotBySeq } from './snapshot-choice.js';

const FORMATS = ['pprof', 'folded', 'speedscope'] as const;

export async function exportCommand(args: ParsedArgs, io: CommandIO): Promise<number> {
  checkFlags(args, [
    'format',
    'output',
    'snapshot',
    'measure',
    'pid',
    'stacks',
    'fold-imports',
    'sample',
    'focus',
    'ignore',
    'hide',
    'show',
    'show-allocator',
    'help',
    ...SYMBOL_FLAGS,
  ]);
  const format = flag(args, 'format');
  if (!format || !(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format takes ${FORMATS.join(', ')}${format ? `, got ${JSON.stringify(format)}` : ''}`);
  const output = flag(args, 'output');
  if (!output) throw new UsageError('"export" needs -o <file> (or -o - for folded and speedscope on stdout)');
  if (output === '-' && format === 'pprof') throw new UsageError('pprof is binary: give -o <file>');
  const sample = parseSampleType(flag(args, 'sample') ?? DEFAULT_SAMPLE_TYPE) ?? DEFAULT_SAMPLE_TYPE;
  // --sample names the unit too; --measure alone keeps its old meaning (live bytes or objects)
  const measure = has(args, 'sample') ? sampleUnit(sample) : (flag(args, 'measure') ?? 'bytes');
  if (measure !== 'bytes' && measure !== 'objects')
    throw new UsageError(`--measure takes bytes or objects, got ${JSON.stringify(measure)}`);
  const which = flag(args, 'snapshot') ?? 'last';
  const job = await loadInput(args, io);
  if (!job) return 1;
  const inputs: ExportInput[] = [];
  for (const p of job.processes) {
    const i = snapshotBySeq(p, which, 'snapshot');
    if (i < 0) {
      job.warnings.push({ file: p.key, message: `no snapshot with sequence number ${which}` });
      continue;
    }
    // pprof carries every sample type (the default one first); the other formats carry the sample's values
    const values = format === 'pprof' ? p : sampleSeries(p, sample);
    if (!values) {
      job.warnings.push({ file: p.key, message: sampleUnavailable(p, sample) ?? `no ${sample} values` });
      continue;
    }
    inputs.push({ proc: values, snapshotIndex: i, frames: commandDescriber(p, args) });
  }
  for (const w of job.warnings) io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
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
  io.err(
    `wrote ${output} (${formatBytes(bytes.length)}): ${format}, ${inputs.length} process${inputs.length === 1 ? '' : 'es'}, snapshot ${which}`,
  );
  return 0;
}
