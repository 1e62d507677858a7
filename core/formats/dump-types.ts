// Types shared by the dump readers.

/**
 * heap_v2: jemalloc 4.0–5.3 threaded format; heap_profile: jemalloc 3.x / gperftools "heap profile:" format;
 * memleak: a bcc memleak / memleak.bt report; torch-snapshot: a PyTorch CUDA memory snapshot (core/load/capture-series.ts)
 */
export type DumpFormat = 'heap_v2' | 'heap_profile' | 'memleak' | 'torch-snapshot';

/** What made jemalloc write the dump, from the file name's letter (i, m, u, f). */
export type Trigger = 'interval' | 'manual' | 'high-water' | 'final' | 'unknown';

/** curobjs: curbytes [accumobjs: accumbytes] as written (raw, before unbiasing) */
export interface RawCounts {
  liveObjects: number;
  liveBytes: number;
  accumObjects: number;
  accumBytes: number;
}
