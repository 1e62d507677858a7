// "The latest answer wins", once for every view that asks the engine as its inputs change (flame graphs, callers,
// missing binaries, the export preview, the timeline's stacks, the growth table, note targets): an answer is applied
// only if no later ask of the same gate was made since, so a slow answer to an old selection never overwrites a
// newer one. The suspects' queue (latest-ask.ts) adds throttling on top of the same rule.

/** A gate: `ask(answer, apply)` applies the answer only while it is the gate's latest ask. */
export interface LatestWins {
  ask<R>(answer: Promise<R>, apply: (r: R) => void): Promise<void>;
  /** no answer asked so far is applied any more */
  drop(): void;
}

export function latestWins(): LatestWins {
  let latest = 0;
  return {
    async ask(answer, apply) {
      const mine = ++latest;
      const r = await answer;
      if (mine === latest) apply(r);
    },
    drop() {
      latest++;
    },
  };
}
