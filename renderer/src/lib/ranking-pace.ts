// While a job loads, how often the page asks the ranking of the job so far again. Each answer costs the engine's
// merging thread (it ranks every (process, stack) pair read so far: 40–200 ms at 1,000 processes, while the readers
// wait) and the page a redraw of the table and its frame; asked at every update of the job so far it was ~20 asks a
// load of 1,000 processes. The ranking moves most while few processes are read: asked again once the processes read
// have grown by half since the last ask, or RANK_STALE_MS after it (the rows shown are then of the processes read
// seconds ago, not of a fraction of the job), a 1,000-process load of 40 s asks ~8 times, one of 16 processes ~6.

/** the ranking of the job so far is asked again once this many times the processes read at the last ask are read */
export const RANK_GROWTH = 1.5;
/** ... or this long after the last ask, when more are read */
export const RANK_STALE_MS = 8000;

/**
 * Whether the ranking of a job so far of `read` processes read whole is worth asking, the last asked of `ranked`
 * (null: none yet) `sinceMs` ago.
 */
export function rankingDue(read: number, ranked: number | null, sinceMs: number): boolean {
  if (ranked === null) return true;
  if (read <= ranked) return false;
  return read >= Math.ceil(RANK_GROWTH * ranked) || sinceMs >= RANK_STALE_MS;
}

/** How many processes of a job so far are read whole (they come first; the pending ones from their dump heads). */
export function readCount(processes: readonly { pending?: unknown }[]): number {
  let n = 0;
  while (n < processes.length && !processes[n].pending) n++;
  return n;
}
