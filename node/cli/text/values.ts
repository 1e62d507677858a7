// How a sample's values read in text: bytes, or counts of objects (`--sample`).

import type { ParsedArgs } from '../args.js';
import type { Job } from '../../../core/model/model.js';
import { jobDeclaredSamples, sampleUnit } from '../../../core/model/sample-type.js';
import { formatBytes, formatInt, formatSignedBytes } from '../format.js';
import { sampleOf } from '../input.js';

export interface ValueFormat {
  plain: (n: number) => string;
  signed: (n: number) => string;
  unit: 'bytes' | 'objects';
  name: string;
}

/** Value formatting for the sample: bytes, or counts of objects (a declared type's by its unit in the job). */
export function valueFormat(args: ParsedArgs, job?: Pick<Job, 'processes'>): ValueFormat {
  const t = sampleOf(args);
  const unit = sampleUnit(t, job ? jobDeclaredSamples(job) : []);
  if (unit === 'bytes') return { plain: formatBytes, signed: formatSignedBytes, unit, name: t };
  return { plain: formatInt, signed: (n) => (n > 0 ? '+' : n < 0 ? '-' : '') + formatInt(Math.abs(n)), unit, name: t };
}
