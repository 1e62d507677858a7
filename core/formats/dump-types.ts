// Types shared by the dump readers.

/**
 * heap_v2: jemalloc 4.0–5.3 threaded format; heap_profile: jemalloc 3.x / gperftools "heap profile:" format;
 * memleak: a bcc memleak / memleak.bt report; torch-snapshot: a PyTorch CUDA memory snapshot (core/load/capture-series.ts);
 * pprof: pprof's protobuf profile (pprof.ts); massif: one snapshot of valgrind massif's output (massif.ts)
 */
export type DumpFormat = 'heap_v2' | 'heap_profile' | 'memleak' | 'torch-snapshot' | 'pprof' | 'massif';

/** A frame named by the profile itself (pprof's locations, massif's trees), innermost inlined frame first. */
export interface ProfileFrame {
  function: string;
  file: string | null;
  line: number | null;
}

/** What made jemalloc write the dump, from the file name's letter (i, m, u, f). */
export type Trigger = 'interval' | 'manual' | 'high-water' | 'final' | 'unknown';

/** curobjs: curbytes [accumobjs: accumbytes] as written (raw, before unbiasing) */
export interface RawCounts {
  liveObjects: number;
  liveBytes: number;
  accumObjects: number;
  accumBytes: number;
}
