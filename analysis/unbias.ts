// Unsampling: jemalloc records an allocation of size s with probability 1 - exp(-s/period), so each
// record is scaled by 1 / (1 - exp(-avg/period)) with avg = bytes/objects of that record, before any
// sum (jeprof's AdjustSamples, pprof's scaleHeapSample; jemalloc's docs say unbias, then sum).

import type { Sampling } from '../parsers/heap-dump.js';

export interface Scaled {
  objects: number;
  bytes: number;
}

/** Scales one (objects, bytes) pair; objects 0 or sampling "none" leaves it unchanged. */
export function unbias(sampling: Sampling, objects: number, bytes: number): Scaled {
  if (objects === 0 || sampling.kind === 'none') return { objects, bytes };
  const ratio = bytes / objects / sampling.period;
  if (sampling.kind === 'poisson') {
    const scale = 1 / (1 - Math.exp(-ratio));
    return { objects: objects * scale, bytes: bytes * scale };
  }
  // jeprof's remote-heap version 1: scale only records whose average is below the (halved) period.
  if (ratio < 1) return { objects: objects / ratio, bytes: bytes / ratio };
  return { objects, bytes };
}
