// Sampling error of the unbiased estimates (jemalloc's model, doc_internal/PROFILING_INTERNALS.md
// "Evaluating sampling strategies"; research in shared/docs/next-features.md §3).
//
// jemalloc samples bytes as a Poisson process of mean gap R (the sample period). A record with raw
// `c` objects and `b` bytes has average size x = b/c, sampling probability p = 1 − e^(−x/R), and the
// unbiased estimate B̂ = b/p (what unbias.ts computes). Its variance is B̂²·(1 − p)/c: for small
// objects about R²·K (K samples), a relative error of 1/√K; for objects much larger than R it is 0.
// Variances of records add (independent samples), so a snapshot keeps one variance per stack cell.

import type { Sampling } from '../formats/heap-dump.js';
import { newUnbiased, unbiasInto } from './unbias.js';

/** σ multiple below which a change is "within sampling noise" (≈ 95 % two-sided under a normal approximation). */
export const NOISE_Z = 2;

/** Variance (bytes²) of the unbiased live-bytes estimate of one record; 0 when every allocation was recorded. */
export function recordVariance(sampling: Sampling, objects: number, bytes: number): number {
  return varianceAtP(sampling, objects, bytes, unbiasInto(newUnbiased(), sampling, objects, bytes).p);
}

/**
 * recordVariance given the sampling probability p that unbiasInto found for the same record (a snapshot builder has
 * it already: no second expm1 per record). Poisson: p = 1 − e^(−x/R); jeprof's version 1: p = x/R below the period.
 */
export function varianceAtP(sampling: Sampling, objects: number, bytes: number, p: number): number {
  if (objects <= 0 || bytes <= 0 || sampling.kind === 'none') return 0;
  if (sampling.period <= 1) return 0; // lg_prof_sample:0 records every allocation
  if (p >= 1) return 0; // exact above the period
  const est = bytes / p;
  return (est * est * (1 - p)) / objects;
}

/** 1σ of an estimate from its variance. */
export function sigma(variance: number): number {
  return variance > 0 ? Math.sqrt(variance) : 0;
}

/**
 * σ of B − A for two snapshots. Within one process the two are correlated (a sampled object stays
 * sampled until freed), so the true variance comes only from births and deaths between them; without
 * those counts Var_A + Var_B is the conservative bound (and exact for two different processes).
 */
export function deltaSigma(varA: number, varB: number): number {
  return sigma(varA + varB);
}

/** z of a delta given its σ: +∞/−∞ for a non-zero change measured exactly, 0 for no change. */
export function zScore(delta: number, sd: number): number {
  if (sd > 0) return delta / sd;
  return delta === 0 ? 0 : delta > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}

/** True when |delta| < NOISE_Z·σ: sampling alone can explain the change. */
export function withinNoise(delta: number, sd: number, z: number = NOISE_Z): boolean {
  return Math.abs(delta) < z * sd;
}

/** The variance of each stack in a snapshot, dense by stack id (0 for stacks absent from it). */
export function denseVariances(
  stackCount: number,
  snap: { stackIds: Uint32Array; liveVarBytes: Float64Array },
): Float64Array {
  const out = new Float64Array(stackCount);
  for (let i = 0; i < snap.stackIds.length; i++) out[snap.stackIds[i]] += snap.liveVarBytes[i];
  return out;
}

/** Sum of a snapshot's variances: the variance of its total (records are sampled independently). */
export function totalVariance(snap: { liveVarBytes: Float64Array }): number {
  let v = 0;
  for (let i = 0; i < snap.liveVarBytes.length; i++) v += snap.liveVarBytes[i];
  return v;
}
