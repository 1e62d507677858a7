// Sample types, with pprof's names: what a view counts. jemalloc records per stack the live (in use) objects and
// bytes and, with prof_accum:true, the objects and bytes allocated since start ([cur: accum] pairs); both are
// unbiased like everything else (unbias.ts). `sampleSeries` re-expresses a process with the chosen values in the
// columns every analysis reads (Snapshot.liveBytes / .live.bytes), so top, diff, growth, flame graphs and exports
// count what was asked without knowing about sample types. Objects go into the byte columns as counts.
// Any other type a pprof profile declares (Snapshot.extraSamples: Java's `tlab`, a `samples/count`) is chosen by
// its name the same way; its unit says whether it reads as bytes or as a count.

import type { Job, LoadWarning, ProcessSeries, Snapshot } from './model.js';

import type { BuiltinSampleType, SampleType } from './vocab.js';

export type { BuiltinSampleType, SampleType };
export const SAMPLE_TYPES: readonly BuiltinSampleType[] = [
  'inuse_space',
  'inuse_objects',
  'alloc_space',
  'alloc_objects',
];
export const DEFAULT_SAMPLE_TYPE: SampleType = 'inuse_space';
/** tcmalloc's names (profile_builder.cc: `space`, `objects`) */
const ALIASES: Record<string, BuiltinSampleType> = { space: 'inuse_space', objects: 'inuse_objects' };

export function isBuiltinSample(t: SampleType): t is BuiltinSampleType {
  return (SAMPLE_TYPES as readonly string[]).includes(t);
}

/** A built-in `--sample` value (pprof's names, or tcmalloc's aliases); null for any other name. */
export function parseSampleType(s: string): BuiltinSampleType | null {
  if (isBuiltinSample(s)) return s;
  return ALIASES[s] ?? null;
}

export interface DeclaredSample {
  type: string;
  unit: string;
}

/** The sample types beyond the built-in four that the process's profiles declare, first declaration first. */
export function declaredSamples(proc: Pick<ProcessSeries, 'snapshots'>): DeclaredSample[] {
  const seen = new Map<string, DeclaredSample>();
  for (const s of proc.snapshots)
    for (const e of s.extraSamples ?? []) if (!seen.has(e.type)) seen.set(e.type, { type: e.type, unit: e.unit });
  return [...seen.values()];
}

/** Every process's declared extra types, once each by name (the sample selector's options after the four). */
export function jobDeclaredSamples(job: Pick<Job, 'processes'>): DeclaredSample[] {
  const seen = new Map<string, DeclaredSample>();
  for (const p of job.processes) for (const d of declaredSamples(p)) if (!seen.has(d.type)) seen.set(d.type, d);
  return [...seen.values()];
}

/**
 * A `--sample` value against what the job has: a built-in name or alias, or a type its profiles declare; else
 * an error naming the declared ones.
 */
export function resolveSampleType(s: string, job: Pick<Job, 'processes'>): SampleType | { error: string } {
  const builtin = parseSampleType(s);
  if (builtin) return builtin;
  const declared = jobDeclaredSamples(job);
  if (declared.some((d) => d.type === s)) return s;
  const names = [...SAMPLE_TYPE_NAMES, ...declared.map((d) => d.type)].join(', ');
  return {
    error: `--sample ${s}: no profile of this job declares that sample type; the types it can show are ${names}`,
  };
}

export const SAMPLE_TYPE_NAMES: readonly string[] = [...SAMPLE_TYPES, ...Object.keys(ALIASES)];

export function isAllocSample(t: SampleType): boolean {
  return t === 'alloc_space' || t === 'alloc_objects';
}

/** How the sample's values read; a declared type by its unit (pprof's `bytes`), other units as counts. */
export function sampleUnit(t: SampleType, declared: readonly DeclaredSample[] = []): 'bytes' | 'objects' {
  if (isBuiltinSample(t)) return t.endsWith('_space') ? 'bytes' : 'objects';
  return declared.find((d) => d.type === t)?.unit === 'bytes' ? 'bytes' : 'objects';
}

/** Whether any snapshot of the process has accumulated counts (jemalloc's prof_accum was on). */
export function hasAccumulated(proc: ProcessSeries): boolean {
  return proc.snapshots.some((s) => s.hasAccumulated && s.accumBytes !== null);
}

/** Why an alloc_* sample cannot be shown for this process; null when it can. */
export function sampleUnavailable(proc: ProcessSeries, t: SampleType): string | null {
  if (!isBuiltinSample(t)) {
    if (declaredSamples(proc).some((d) => d.type === t)) return null;
    const names = declaredSamples(proc).map((d) => d.type);
    return `its profiles do not declare the sample type ${t}${names.length > 0 ? ` (they declare ${names.join(', ')} beyond the four)` : ''}`;
  }
  if (!isAllocSample(t) || hasAccumulated(proc)) return null;
  return `no accumulated counts: jemalloc's prof_accum was off when these dumps were written (MALLOC_CONF=prof_accum:true records them), so --sample ${t} has nothing to show rather than zeros`;
}

function sumOf(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return s;
}

/** A declared type's values in the live columns: bytes as bytes, counts in both (as inuse_objects does). */
function extraSnapshotFor(s: Snapshot, t: string): Snapshot {
  const e = s.extraSamples?.find((x) => x.type === t);
  const values = e?.values ?? new Float64Array(s.stackIds.length);
  const total = e?.total ?? 0;
  const bytes = e?.unit === 'bytes';
  return {
    ...s,
    liveBytes: values,
    liveObjects: bytes ? s.liveObjects : values,
    liveVarBytes: new Float64Array(s.stackIds.length),
    live: { bytes: total, objects: bytes ? s.live.objects : total },
  };
}

/**
 * The variance of each cell's object count from its bytes' (sampling-error.ts): a record's count Ô = c/p and bytes
 * B̂ = b/p share p, so Var(Ô) = Ô²(1 − p)/c = Var(B̂)·(Ô/B̂)². Counts are not bytes: σ in bytes² beside a count
 * once read as ±10,537,843 objects of a process holding 1,566,767.
 */
function objectVariances(s: Snapshot): Float64Array {
  const out = new Float64Array(s.stackIds.length);
  for (let i = 0; i < out.length; i++) {
    const b = s.liveBytes[i];
    if (b > 0) out[i] = s.liveVarBytes[i] * (s.liveObjects[i] / b) ** 2;
  }
  return out;
}

function snapshotFor(s: Snapshot, t: SampleType): Snapshot {
  if (t === 'inuse_space') return s;
  if (!isBuiltinSample(t)) return extraSnapshotFor(s, t);
  if (t === 'inuse_objects')
    return {
      ...s,
      liveBytes: s.liveObjects,
      liveVarBytes: objectVariances(s),
      live: { bytes: s.live.objects, objects: s.live.objects },
    };
  // alloc_space, alloc_objects: the accumulated counts (their σ is still the live bytes' variance, as before: the
  // accumulated records' own is not computed at load)
  const empty = new Float64Array(s.stackIds.length);
  const values = t === 'alloc_space' ? (s.accumBytes ?? empty) : (s.accumObjects ?? empty);
  const objects = s.accumObjects ?? empty;
  return {
    ...s,
    liveBytes: values,
    liveObjects: objects,
    live: { bytes: sumOf(values), objects: sumOf(objects) },
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

/** sampleSeries, or null with a warning naming the process and why its dumps lack the sample's values. */
export function sampleSeriesOrWarn(proc: ProcessSeries, t: SampleType, warnings: LoadWarning[]): ProcessSeries | null {
  const sp = sampleSeries(proc, t);
  if (!sp) warnings.push({ file: proc.key, message: sampleUnavailable(proc, t) ?? `no ${t} values` });
  return sp;
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

/**
 * Whether the job has live bytes to read: false when every profile of it records none (allocation profiles), and a
 * command that reads live bytes (growth, postmortem) then reads the profiles' default instead.
 */
export function jobRecordsLive(job: Pick<Job, 'processes'>): boolean {
  return job.processes.some((p) => p.snapshots.some((s) => !s.noLive));
}
