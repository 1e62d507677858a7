// Sample types, with pprof's names: what a view counts. jemalloc records per stack the live (in use) objects and
// bytes and, with prof_accum:true, the objects and bytes allocated since start ([cur: accum] pairs); both are
// unbiased like everything else (unbias.ts). `sampleSeries` re-expresses a process with the chosen values in the
// columns every analysis reads (Snapshot.liveBytes / .live.bytes), so top, diff, growth, flame graphs and exports
// count what was asked without knowing about sample types. Objects go into the byte columns as counts.

import type { Job, ProcessSeries, Snapshot } from './model.js';

import type { SampleType } from './vocab.js';

export type { SampleType };
export const SAMPLE_TYPES: readonly SampleType[] = ['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects'];
export const DEFAULT_SAMPLE_TYPE: SampleType = 'inuse_space';
/** tcmalloc's names (profile_builder.cc: `space`, `objects`) */
const ALIASES: Record<string, SampleType> = { space: 'inuse_space', objects: 'inuse_objects' };

/** A `--sample` value (pprof's names, or tcmalloc's aliases); null when invalid. */
export function parseSampleType(s: string): SampleType | null {
  if ((SAMPLE_TYPES as readonly string[]).includes(s)) return s as SampleType;
  return ALIASES[s] ?? null;
}

export const SAMPLE_TYPE_NAMES: readonly string[] = [...SAMPLE_TYPES, ...Object.keys(ALIASES)];

export function isAllocSample(t: SampleType): boolean {
  return t === 'alloc_space' || t === 'alloc_objects';
}

export function sampleUnit(t: SampleType): 'bytes' | 'objects' {
  return t.endsWith('_space') ? 'bytes' : 'objects';
}

/** Whether any snapshot of the process has accumulated counts (jemalloc's prof_accum was on). */
export function hasAccumulated(proc: ProcessSeries): boolean {
  return proc.snapshots.some((s) => s.hasAccumulated && s.accumBytes !== null);
}

/** Why an alloc_* sample cannot be shown for this process; null when it can. */
export function sampleUnavailable(proc: ProcessSeries, t: SampleType): string | null {
  if (!isAllocSample(t) || hasAccumulated(proc)) return null;
  return `no accumulated counts: jemalloc's prof_accum was off when these dumps were written (MALLOC_CONF=prof_accum:true records them), so --sample ${t} has nothing to show rather than zeros`;
}

function sumOf(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return s;
}

function snapshotFor(s: Snapshot, t: SampleType): Snapshot {
  if (t === 'inuse_space') return s;
  const empty = new Float64Array(s.stackIds.length);
  const values =
    t === 'inuse_objects' ? s.liveObjects : t === 'alloc_space' ? (s.accumBytes ?? empty) : (s.accumObjects ?? empty);
  const objects = isAllocSample(t) ? (s.accumObjects ?? empty) : s.liveObjects;
  const total = t === 'inuse_objects' ? s.live.objects : isAllocSample(t) ? sumOf(values) : s.live.bytes;
  return {
    ...s,
    liveBytes: values,
    liveObjects: objects,
    live: { bytes: total, objects: isAllocSample(t) ? sumOf(objects) : s.live.objects },
  };
}

/**
 * The process with the sample's values in the live columns (inuse_space: the process itself). null when the
 * sample needs accumulated counts the dumps do not have (see sampleUnavailable).
 */
export function sampleSeries(proc: ProcessSeries, t: SampleType): ProcessSeries | null {
  if (t === 'inuse_space') return proc;
  if (sampleUnavailable(proc, t)) return null;
  return { ...proc, snapshots: proc.snapshots.map((s) => snapshotFor(s, t)) };
}

/**
 * What a job's views count when nobody chose: the sample type the profiles ask for (pprof's default_sample_type,
 * e.g. alloc_space in Go's `allocs` profile), when every process's profiles ask for the same one; else inuse_space
 * (a jemalloc dump asks for nothing, and one process's default must not hide another's live bytes).
 */
export function jobDefaultSample(job: Pick<Job, 'processes'>): SampleType {
  let found: SampleType | null = null;
  for (const p of job.processes) {
    const d = [...p.snapshots].reverse().find((s) => s.defaultSample !== undefined)?.defaultSample;
    if (d === undefined || (found !== null && d !== found)) return DEFAULT_SAMPLE_TYPE;
    found = d;
  }
  return found ?? DEFAULT_SAMPLE_TYPE;
}
