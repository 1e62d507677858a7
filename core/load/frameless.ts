// Stacks the profiler could not unwind (issue 21 item 5): records with no frames at all (ARM or MIPS without
// frame pointers, a JIT, a static binary without unwind tables) and records whose only frames are the
// profiler's own (je_prof_backtrace, prof_backtrace_impl, imalloc… in the allocator library: the unwinder
// stopped at the allocator's edge). Views hide the allocator's leading frames, so both read "(no frames)".
// Judged per snapshot once the process's maps are known (allocatorDepth needs them).

import type { LoadWarning, ProcessSeries } from '../model/model.js';

/** The one warning when most of a snapshot's live bytes are in such records; null for a few. */
export function framelessWarning(noFrames: number, profilerOnly: number, total: number): string | null {
  if (total <= 0 || (noFrames + profilerOnly) * 2 <= total) return null;
  const pct = Math.round((100 * (noFrames + profilerOnly)) / total);
  const what =
    profilerOnly === 0
      ? 'in records with no frames'
      : noFrames === 0
        ? "in records whose only frames are the profiler's own (jemalloc's prof_backtrace, imalloc…)"
        : "in records with no frames or only the profiler's own (jemalloc's prof_backtrace, imalloc…)";
  return (
    `${pct} % of the live bytes are ${what}: the profiler could not unwind the stacks. ` +
    'Likely causes: code built without frame pointers on ARM or MIPS, a JIT or a JVM, a static binary without ' +
    'unwind tables. What to set: a jemalloc whose prof backtrace uses an unwinder (configure ' +
    '--enable-prof-libunwind or --enable-prof-libgcc), or rebuild the program with -fno-omit-frame-pointer'
  );
}

/** Adds the warning for each snapshot of the process where it holds, naming the snapshot's file. */
export function framelessWarnings(series: ProcessSeries, warnings: LoadWarning[]): void {
  const { offsets, allocatorDepth } = series.stacks;
  for (const s of series.snapshots) {
    let none = 0;
    let own = 0;
    let total = 0;
    for (let r = 0; r < s.stackIds.length; r++) {
      const id = s.stackIds[r];
      const n = offsets[id + 1] - offsets[id];
      const b = s.liveBytes[r];
      total += b;
      if (n === 0) none += b;
      else if ((allocatorDepth[id] ?? 0) >= n) own += b;
    }
    const message = framelessWarning(none, own, total);
    if (message) warnings.push({ file: s.file, message });
  }
}
