// How a sample's values read in text: bytes, or counts of objects (`--sample`).

import type { ParsedArgs } from '../args.js';
import type { Job } from '../../../core/model/model.js';
import { jobDeclaredSamples, sampleUnit } from '../../../core/model/sample-type.js';
import { formatValue, type ValueUnit } from '../../../core/model/units.js';
import { sampleOf } from '../input.js';

export interface ValueFormat {
  plain: (n: number) => string;
  signed: (n: number) => string;
  unit: ValueUnit;
  /** the sample type's name (pprof's: inuse_space, alloc_objects, or one a profile declares) */
  name: string;
}

/** A sample's format given its unit: bytes in binary units, counts as counts. */
export function valueFormatOf(unit: ValueUnit, name: string): ValueFormat {
  return { plain: (n) => formatValue(n, unit), signed: (n) => formatValue(n, unit, true), unit, name };
}

/** Live bytes (inuse_space): what growth and postmortem show unless --sample says otherwise. */
export const BYTE_VALUES: ValueFormat = valueFormatOf('bytes', 'inuse_space');

/** Value formatting for the sample: bytes, or counts of objects (a declared type's by its unit in the job). */
export function valueFormat(args: ParsedArgs, job?: Pick<Job, 'processes'>): ValueFormat {
  const t = sampleOf(args);
  return valueFormatOf(sampleUnit(t, job ? jobDeclaredSamples(job) : []), t);
}

/** What follows a figure in a sentence: nothing for bytes (their unit is in the figure), the sample's name after a
 *  count ("7,014 alloc_objects"). */
export function countName(fmt: ValueFormat): string {
  return fmt.unit === 'bytes' ? '' : ` ${fmt.name}`;
}

/** A column's title for the sample's values: bytes keep the title given, counts are titled by the sample's name. */
export function valueTitle(fmt: ValueFormat, bytesTitle: string, countTitle: string = fmt.name): string {
  return fmt.unit === 'bytes' ? bytesTitle : countTitle;
}
