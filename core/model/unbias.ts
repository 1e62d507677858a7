// Unsampling: jemalloc records an allocation of size s with probability 1 - exp(-s/period), so each
// record is scaled by 1 / (1 - exp(-avg/period)) with avg = bytes/objects of that record, before any
// sum (jeprof's AdjustSamples, pprof's scaleHeapSample; jemalloc's docs say unbias, then sum).

import type { Sampling } from '../formats/heap-dump.js';

export interface Scaled {
  objects: number;
  bytes: number;
}

/** Scales one (objects, bytes) pair; objects 0 or sampling "none" leaves it unchanged. */
export function unbias(sampling: Sampling, objects: number, bytes: number): Scaled {
  if (objects === 0 || sampling.kind === 'none') return { objects, bytes };
  const ratio = bytes / objects / sampling.period;
  if (sampling.kind === 'poisson') {
    // -expm1(-x) = 1 - e^(-x) without cancellation: for a huge period 1 - exp(-x) rounds to 0 (Infinity).
    const scale = 1 / -Math.expm1(-ratio);
    return { objects: objects * scale, bytes: bytes * scale };
  }
  // jeprof's remote-heap version 1: scale only records whose average is below the (halved) period.
  if (ratio < 1) return { objects: objects / ratio, bytes: bytes / ratio };
  return { objects, bytes };
}
