// Unsampling: jemalloc records an allocation of size s with probability 1 - exp(-s/period), so each
// record is scaled by 1 / (1 - exp(-avg/period)) with avg = bytes/objects of that record, before any
// sum (jeprof's AdjustSamples, pprof's scaleHeapSample; jemalloc's docs say unbias, then sum).

import type { Sampling } from '../formats/heap-dump.js';

export interface Scaled {
  objects: number;
  bytes: number;
}

/** A scaled pair and the sampling probability it was divided by (1 when left unchanged), for the variance. */
export interface Unbiased extends Scaled {
  p: number;
}

/** Scales one (objects, bytes) pair; objects 0 or sampling "none" leaves it unchanged. */
export function unbias(sampling: Sampling, objects: number, bytes: number): Scaled {
  const { objects: o, bytes: b } = unbiasInto(newUnbiased(), sampling, objects, bytes);
  return { objects: o, bytes: b };
}

/** A scratch result for unbiasInto; its fields start as doubles so V8 never changes their representation. */
export function newUnbiased(): Unbiased {
  return { objects: 0.5, bytes: 0.5, p: 0.5 };
}

/** unbias written into `out`: a builder reuses one object per record instead of allocating two. */
export function unbiasInto(out: Unbiased, sampling: Sampling, objects: number, bytes: number): Unbiased {
  out.p = 1;
  out.objects = objects;
  out.bytes = bytes;
  if (objects === 0 || sampling.kind === 'none') return out;
  const ratio = bytes / objects / sampling.period;
  if (sampling.kind === 'poisson') {
    // -expm1(-x) = 1 - e^(-x) without cancellation: for a huge period 1 - exp(-x) rounds to 0 (Infinity).
    const p = -Math.expm1(-ratio);
    const scale = 1 / p;
    out.p = p;
    out.objects = objects * scale;
    out.bytes = bytes * scale;
    return out;
  }
  // jeprof's remote-heap version 1: scale only records whose average is below the (halved) period.
  if (ratio < 1) {
    out.p = ratio;
    out.objects = objects / ratio;
    out.bytes = bytes / ratio;
  }
  return out;
}
