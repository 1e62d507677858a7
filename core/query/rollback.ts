// One rule for a load that shows its job before it is done (issue 18): what was open before is kept when the load
// first replaces it, put back if the load is cancelled or fails, dropped when it ends with its job. The worker's
// QuerySession (core/query/session.ts) keeps the job this way, the window (renderer/src/state/job.svelte.ts) its
// view state: the same rule on both sides of the worker channel.

/**
 * What was open before something replaced it for a while (a load showing its job so far): kept when it is first
 * replaced, put back if the replacement ends without a result, dropped when it ends with one.
 */
export class Rollback<T> {
  private before: { value: T } | null = null;

  /** Whether something is replaced now (a value is kept). */
  get replaced(): boolean {
    return this.before !== null;
  }

  /** Keeps what is open (the first time only: later replacements keep the first value); true when it kept. */
  replace(capture: () => T): boolean {
    if (this.before) return false;
    this.before = { value: capture() };
    return true;
  }

  /** The replacement stays: what was kept is dropped. */
  commit(): void {
    this.before = null;
  }

  /** The replacement ended without a result: what was kept is restored (nothing happens if nothing was replaced). */
  undo(restore: (before: T) => void): void {
    const b = this.before;
    this.before = null;
    if (b) restore(b.value);
  }
}
