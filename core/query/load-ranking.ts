// The Suspects view's first rows of a job still loading, without ranking every (process, stack) pair at each update.
// A group's place in the ranking (core/stats/suspects.ts rankSuspects) follows from sums over its holders (score,
// change, bytes at the end), kept here as the load's processes come in; the few groups that can be first are picked
// from them and only their holders are ranked, by rankSuspects itself, so the rows are the ones rankJob makes of the
// whole job so far. At 1,000 processes the 7 rankings of the job so far that a load's page asked took 4.9 s of the
// thread that merges the dumps (the readers waited meanwhile), the last 2.5 s.

import type { Job } from '../model/model.js';
import type { GrowthPattern } from '../stats/patterns.js';
import { grown } from '../model/grown.js';
import { PATTERN_CODES } from '../stats/verdict-table.js';
import { rankInputOf, rankSuspects, type JobSuspects, type RankInput, type RankMemo } from '../stats/suspects.js';

/**
 * Groups ranked beyond those asked: the sums here add the holders in load order and rankSuspects in rank order, so
 * two groups a rounding apart may swap; these make sure the groups asked are among those ranked.
 */
const SPARE_GROUPS = 16;

/** Rows asked of a loading job at most that are made this way (the page asks 16); more rank the job whole. */
export const LOAD_RANKING_ROWS = 64;

/**
 * Each group's sums over the processes added so far, by the memo's key number, and each process's top pattern
 * (its first stack in rank order: what rankSuspects gives ProcessSuspects.topPattern).
 */
export class LoadRanking {
  private inputs: RankInput[] = [];
  private topPatterns: (GrowthPattern | null)[] = [];
  private score = new Float64Array(1024);
  private delta = new Float64Array(1024);
  private last = new Float64Array(1024);
  /** a group's first holder in load order (process, then stack id): rankSuspects' last tie-break; -1 unseen */
  private seen = new Int32Array(1024).fill(-1);
  private groups = 0;

  constructor(private readonly memo: RankMemo) {}

  /**
   * The job so far's ranking cut to the groups that can be its first `rows`, and how many groups the whole has;
   * null when the job's processes were not all ranked through the memo with key numbers (then rank it whole).
   */
  top(
    job: Pick<Job, 'processes'>,
    rows: number,
    spare = SPARE_GROUPS,
  ): { ranking: JobSuspects; groupCount: number } | null {
    if (!this.sync(job)) return null;
    const want = Math.min(this.groups, rows + spare);
    // the `want` best groups by rankSuspects' order of groups, kept sorted (few: an insertion each)
    const best: number[] = [];
    const before = (a: number, b: number): boolean =>
      this.score[a] !== this.score[b]
        ? this.score[a] > this.score[b]
        : this.delta[a] !== this.delta[b]
          ? this.delta[a] > this.delta[b]
          : this.last[a] !== this.last[b]
            ? this.last[a] > this.last[b]
            : this.seen[a] < this.seen[b];
    const n = this.seen.length;
    for (let g = 0; g < n; g++) {
      if (this.seen[g] < 0) continue;
      if (best.length === want && !before(g, best[want - 1])) continue;
      let k = best.length === want ? want - 1 : best.length;
      while (k > 0 && before(g, best[k - 1])) {
        best[k] = best[k - 1];
        k--;
      }
      best[k] = g;
    }
    const picked = new Uint8Array(n);
    for (const g of best) picked[g] = 1;
    const ranking = rankSuspects(
      job,
      this.inputs.map((p) => only(p, picked)),
    );
    const { missing: _, ...rest } = ranking;
    return {
      ranking: {
        ...rest,
        processes: rest.processes.map((p, i) => ({ ...p, topPattern: this.topPatterns[i] })),
      },
      groupCount: this.groups,
    };
  }

  /** Adds the processes not added yet; starts again when one's ranking input is no longer the one added. */
  private sync(job: Pick<Job, 'processes'>): boolean {
    // a process added keeps its memo's part while the load goes on (its series changes only at the load's end,
    // whose full job is ranked whole): checking each one's series frame again (rankInputOf) at every answer was
    // 40 ms of each at 1,000 processes
    const ps = job.processes;
    const same = ps.length >= this.inputs.length && this.inputs.every((p, i) => this.memo.inputs.get(ps[i]) === p);
    if (!same) this.clear();
    for (let i = this.inputs.length; i < ps.length; i++) {
      const input = rankInputOf(ps[i], this.memo);
      if (input.byRow?.keys !== this.memo.keys) {
        this.clear();
        return false;
      }
      this.add(input);
    }
    return true;
  }

  private clear(): void {
    this.inputs = [];
    this.topPatterns = [];
    this.score.fill(0);
    this.delta.fill(0);
    this.last.fill(0);
    this.seen.fill(-1);
    this.groups = 0;
  }

  private add(p: RankInput): void {
    const rows = p.byRow as NonNullable<RankInput['byRow']>;
    const t = p.totals;
    const size = this.memo.keys.size;
    this.seen = grown(this.seen, size, -1);
    this.score = grown(this.score, this.seen.length);
    this.delta = grown(this.delta, this.seen.length);
    this.last = grown(this.last, this.seen.length);
    let top = -1;
    let topScore = 0;
    let topDelta = 0;
    let topLast = 0;
    for (let r = 0; r < t.stackIds.length; r++) {
      const g = rows.keyIds[r];
      const score = rows.verdicts.score(r);
      const delta = t.lastBytes[r] - t.firstBytes[r];
      const last = t.lastBytes[r];
      if (this.seen[g] < 0) this.seen[g] = this.groups++;
      this.score[g] += score;
      this.delta[g] += delta;
      this.last[g] += last;
      // the process's first stack in rank order (ties: the lower row, as rankSuspects' push order)
      if (top < 0 || (score !== topScore ? score > topScore : delta !== topDelta ? delta > topDelta : last > topLast)) {
        top = r;
        topScore = score;
        topDelta = delta;
        topLast = last;
      }
    }
    this.inputs.push(p);
    this.topPatterns.push(top < 0 ? null : PATTERN_CODES[rows.verdicts.patternCode(top)]);
  }
}

/** A process's ranking input less the stacks of groups not picked (by the memo's key number). */
function only(p: RankInput, picked: Uint8Array): RankInput {
  const rows = p.byRow as NonNullable<RankInput['byRow']>;
  const t = p.totals;
  const keep: number[] = [];
  for (let r = 0; r < t.stackIds.length; r++) if (picked[rows.keyIds[r]]) keep.push(r);
  const n = keep.length;
  const stackIds = new Int32Array(n);
  const firstBytes = new Float64Array(n);
  const lastBytes = new Float64Array(n);
  const sigmaBytes = new Float64Array(n);
  const keys = new Array<string>(n);
  const keyIds = new Int32Array(n);
  keep.forEach((r, k) => {
    stackIds[k] = t.stackIds[r];
    firstBytes[k] = t.firstBytes[r];
    lastBytes[k] = t.lastBytes[r];
    sigmaBytes[k] = t.sigmaBytes[r];
    keys[k] = t.keys[r];
    keyIds[k] = rows.keyIds[r];
  });
  return {
    totals: { stackIds, firstBytes, lastBytes, sigmaBytes, keys },
    byRow: { verdicts: rows.verdicts.pick(keep), keys: rows.keys, keyIds },
    notes: p.notes,
    snapshotIndexes: p.snapshotIndexes,
    seconds: p.seconds,
  };
}
