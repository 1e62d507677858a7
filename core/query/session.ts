// A loaded job and what is cached per job, with the one owner of its load lifecycle (issue 18): the app's worker
// holds one QuerySession and answers each message by a query over it (core/query/*.ts); tests and the CLI can
// hold one too. A load keeps the job open before it until the new one is in: a load that showed its first
// processes and is then cancelled or fails puts the previous job back (`abandonLoad`), here and nowhere else in
// the worker. The window's view state (selection, notes) has the same rule through `Rollback`
// (renderer/src/state/job.svelte.ts).

import type { Job, LoadWarning, ProcessSeries } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { JobPreview } from '../load/job-preview.js';
import { FrameCatalog } from '../frames/catalog.js';
import { isPythonPseudoAddress, layoutOf } from '../formats/pyframes.js';
import { sampleSeries, sampleUnavailable } from '../model/sample-type.js';
import { seriesEndIndex, withoutTeardownDumps } from '../model/series-end.js';
import { rankGrowth } from '../stats/growth.js';
import { rankAhead, rankJob, RankMemo, type JobSuspects } from '../stats/suspects.js';
import { jobPostmortem, jobSummary, withPending, type JobSummary, type OwnSummary } from './job-summary.js';
import type { PostmortemView } from './postmortem-view.js';
import type { LimitGiven } from './postmortem.js';
import { Rollback } from './rollback.js';
import { LOAD_RANKING_ROWS, LoadRanking } from './load-ranking.js';

/** The ranking a Suspects answer is made of (QuerySession.rowsRanking); `groupCount`: the job's, when cut. */
export interface RowsRanking {
  ranking: JobSuspects;
  groupCount: number | null;
}

/** Per-process steady-growth figures (core/stats/growth.ts) of the Growth table and the "by growth" trees. */
export interface Steadiness {
  steadiness: number;
  slope: number;
  growingFraction: number;
}

/** Everything cached per loaded job (by process index; a sample type's copy by `index|type`). */
interface JobCaches {
  catalogs: Map<number, FrameCatalog>;
  sampled: Map<string, ProcessSeries>;
  steadiness: Map<string, Map<number, Steadiness>>;
  ranking: { job: Job; result: JobSuspects } | null;
  /** the post-mortem's ranking made ahead (rankBeforeSymbols) where its job is not the loaded one (teardown dumps) */
  verdictRanking: { job: Job; result: JobSuspects } | null;
}

const emptyCaches = (): JobCaches => ({
  catalogs: new Map(),
  sampled: new Map(),
  steadiness: new Map(),
  ranking: null,
  verdictRanking: null,
});

export interface LoadTimes {
  loadMs: number;
  bytesTotal: number;
  waitMs: number;
  /** dump readers that parsed in parallel */
  readers?: number;
}

export class QuerySession {
  private current: Job | null = null;
  private summaryNow: JobSummary | null = null;
  /** the loaded job is the partial one of a load in progress (its ranking is redone as processes come in) */
  private isPartial = false;
  private caches = emptyCaches();
  /**
   * While a job loads it is ranked again as each process comes in: each process's part of the ranking is kept
   * (core/stats/suspects.ts RankMemo) and dropped once the full job is ranked.
   */
  private memo: RankMemo | null = null;
  private keepMemo = false;
  /** the loading job's group sums over the memo's parts, for the Suspects view's first rows (rowsRanking) */
  private loadRanking: {
    memo: RankMemo;
    sums: LoadRanking;
    job: Job | null;
    rows: number;
    made: RowsRanking | null;
  } | null = null;
  private readonly rollback = new Rollback<{ job: Job | null; summary: JobSummary | null }>();
  /** the limit the user typed (bytes, or null for "no limit"); null: the one the evidence gives */
  private userLimit: LimitGiven | null = null;
  /** a report's own post-mortem (computed where the report was made, over the dumps and logs it came from) */
  private reportPostmortem: PostmortemView | null = null;
  /** attach's load times, until the summary is made */
  private lazyTimes: LoadTimes | null = null;
  /** a loading job's processes' own summaries, from one update to the next (job-summary.ts OwnSummary) */
  private partialOwn: WeakMap<ProcessSeries, OwnSummary> | null = null;

  /** The loaded job; an error when none is. */
  get job(): Job {
    if (!this.current) throw new Error('no job loaded');
    return this.current;
  }

  get hasJob(): boolean {
    return this.current !== null;
  }

  get summary(): JobSummary {
    if (!this.summaryNow && this.current && this.lazyTimes)
      this.summaryNow = this.summarize(this.current, this.lazyTimes);
    if (!this.summaryNow) throw new Error('no job loaded');
    return this.summaryNow;
  }

  /**
   * The job becomes `job`, summarized when first asked: a command that asks one question (the CLI's `top`) does not
   * pay for the summary's post-mortem and ranking.
   */
  attach(job: Job, times: LoadTimes = { loadMs: 0, bytesTotal: 0, waitMs: 0 }): void {
    this.set(job);
    this.lazyTimes = times;
  }

  /** ms spent answering on the job so far of loads (core/engine/answer.ts), for the load to space its updates by */
  partialWorkMs = 0;

  notePartialWork(ms: number): void {
    this.partialWorkMs += ms;
  }

  /** The loaded job is the job so far of a load in progress. */
  get partial(): boolean {
    return this.isPartial;
  }

  proc(i: number): ProcessSeries {
    const p = this.job.processes[i];
    if (!p) throw new Error(`no process ${i}`);
    return p;
  }

  /** The process with the view's sample values in its columns (core/model/sample-type.ts); an error says why not. */
  values(i: number, view: Pick<ViewOptions, 'sample'>): ProcessSeries {
    const t = view.sample ?? 'inuse_space';
    if (t === 'inuse_space') return this.proc(i);
    const k = `${i}|${t}`;
    let p = this.caches.sampled.get(k);
    if (!p) {
      const live = this.proc(i);
      const sp = sampleSeries(live, t);
      if (!sp) throw new Error(`${live.key}: ${sampleUnavailable(live, t)}`);
      p = sp;
      this.caches.sampled.set(k, p);
    }
    return p;
  }

  /** The frame catalog of process `i` (core/frames/catalog.ts): its frames and stacks as keys per view. */
  catalog(i: number): FrameCatalog {
    let t = this.caches.catalogs.get(i);
    if (!t) {
      t = new FrameCatalog(this.proc(i));
      this.caches.catalogs.set(i, t);
    }
    return t;
  }

  /**
   * Whether process `i` has Python frames: its frame catalog's answer when one is made, else the same test alone (a
   * summary asks it of every process: a catalog each, made again after symbolization, was 0.8 s of a 1,000-process
   * load and memory for views that show a few processes)
   */
  private hasPython(i: number): boolean {
    const made = this.caches.catalogs.get(i);
    if (made) return made.hasPython;
    const p = this.proc(i);
    const layout = layoutOf(p.pythonFrames ?? null);
    return p.addresses.hex.some((h) => isPythonPseudoAddress(h, layout));
  }

  /**
   * Each stack's steady growth in the view's sample, up to the series' end (core/model/series-end.ts: a cut last
   * dump or an exit dump after teardown reads as a fall).
   */
  steadiness(i: number, view: Pick<ViewOptions, 'sample'> = {}): Map<number, Steadiness> {
    const k = `${i}|${view.sample ?? 'inuse_space'}`;
    let g = this.caches.steadiness.get(k);
    if (!g) {
      g = new Map();
      for (const s of rankGrowth(this.values(i, view), { to: seriesEndIndex(this.proc(i)) }))
        g.set(s.stackId, {
          steadiness: s.steadiness,
          slope: s.slopeBytesPerSnapshot,
          growingFraction: s.growingFraction,
        });
      this.caches.steadiness.set(k, g);
    }
    return g;
  }

  /**
   * A loading job's process read whole: its part of the ranking is made now, while the readers parse the others (the
   * merging thread mostly waits for them), so the full job's ranking at the load's end only merges the parts.
   */
  rankAhead(proc: ProcessSeries): void {
    this.memo ??= new RankMemo();
    rankAhead(proc, this.memo);
  }

  /** The loaded job's ranking made elsewhere (a dataset's, in SQL): ranking() answers it. */
  useRanking(result: JobSuspects): void {
    this.caches.ranking = { job: this.job, result };
  }

  /** The job-wide suspects ranking (core/stats/suspects.ts), once per loaded job. */
  ranking(): JobSuspects {
    const job = this.job;
    if (this.caches.ranking?.job !== job) {
      const result = rankJob(job, this.memo ?? undefined);
      if (!this.keepMemo) this.memo = null;
      this.caches.ranking = { job, result };
    }
    return this.caches.ranking.result;
  }

  /**
   * The ranking the Suspects view's first `rows` rows are made of, with the job's count of groups when it is cut:
   * while a load shows its job so far, only the groups that can be first are ranked (load-ranking.ts), the same rows
   * as the whole ranking's at a small part of its cost; else the job's ranking.
   */
  rowsRanking(rows: number): RowsRanking {
    const job = this.job;
    const memo = this.memo;
    if (!this.isPartial || !memo || rows > LOAD_RANKING_ROWS || this.caches.ranking?.job === job)
      return { ranking: this.ranking(), groupCount: null };
    if (this.loadRanking?.memo !== memo)
      this.loadRanking = { memo, sums: new LoadRanking(memo), job: null, rows: 0, made: null };
    const l = this.loadRanking;
    if (!l.made || l.job !== job || l.rows < rows) {
      const cut = l.sums.top(job, rows);
      if (!cut) return { ranking: this.ranking(), groupCount: null };
      l.job = job;
      l.rows = rows;
      l.made = cut;
    }
    return l.made;
  }

  /**
   * rankJob of `j`, as this session's ranking when `j` has the loaded job's own processes: the post-mortem ranks the
   * job less its teardown dumps, the same processes when there are none, so the load's end ranks the job once (with
   * the loading job's memo) and the suspects' request that follows finds it made.
   */
  private readonly rankOf = (j: Pick<Job, 'processes'>): JobSuspects => {
    const cur = this.current;
    const same =
      cur !== null &&
      j.processes.length === cur.processes.length &&
      j.processes.every((p, i) => p === cur.processes[i]);
    if (same) return this.ranking();
    // else a process that is the loaded job's own (no teardown dump) is still ranked once, through the load's memo
    const ahead = this.caches.verdictRanking;
    return ahead && ahead.job === cur ? ahead.result : rankJob(j, this.memo ?? undefined);
  };

  /**
   * Ranks the job now as its post-mortem will (less its teardown dumps): the CLI's report does this before the
   * symbols are read (the ranking reads none), so a large job never holds the symbol tables and the ranking's
   * verdicts of every (process, stack) at once (bench/README.md: the report writer's peak).
   */
  rankBeforeSymbols(): void {
    const job = this.job;
    const j = withoutTeardownDumps(job);
    if (j.teardown.length === 0) this.ranking();
    else this.caches.verdictRanking = { job, result: rankJob(j, this.memo ?? undefined) };
  }

  /** Drops the job's rankings: a one-question session (the CLI's report) packs a large job without them. */
  dropRankings(): void {
    this.caches.ranking = null;
    this.caches.verdictRanking = null;
  }

  private summarize(job: Job, { readers, ...times }: LoadTimes): JobSummary {
    const s = jobSummary(job, {
      ...times,
      hasPython: (i) => this.hasPython(i),
      ...(this.isPartial ? { own: (this.partialOwn ??= new WeakMap()) } : {}),
      partial: this.isPartial,
      limit: this.userLimit,
      postmortem: this.reportPostmortem,
      rank: this.rankOf,
    });
    return readers === undefined ? s : { ...s, readers };
  }

  /**
   * The job becomes `job` (dumps read whole, a dataset's batches, a report's packed job); its summary. A report
   * brings its own post-mortem (its job keeps neither the logs nor every stack).
   */
  open(
    job: Job,
    times: LoadTimes = { loadMs: 0, bytesTotal: 0, waitMs: 0 },
    reportPostmortem: PostmortemView | null = null,
  ): JobSummary {
    this.set(job);
    this.reportPostmortem = reportPostmortem;
    this.summaryNow = this.summarize(job, times);
    return this.summaryNow;
  }

  /** Why the job died with a limit the user typed (null: the evidence's again); a report keeps its own. */
  setLimit(limit: LimitGiven | null): PostmortemView | null {
    if (!this.reportPostmortem) this.userLimit = limit;
    const pm = this.reportPostmortem ?? (this.isPartial ? null : jobPostmortem(this.job, this.userLimit, this.rankOf));
    this.summaryNow = { ...this.summary, postmortem: pm, verdict: pm?.verdict ?? null };
    return pm;
  }

  /**
   * The post-mortem in force (the report's, or the job's with the typed limit), null while a load shows a part. An
   * attached job not yet summarized gets it alone: a one-question session (the CLI's report) makes no summary.
   */
  postmortem(): PostmortemView | null {
    if (this.summaryNow) return this.summaryNow.postmortem ?? null;
    if (!this.lazyTimes || !this.current) return null;
    return this.current.processes.length > 0 ? jobPostmortem(this.current, this.userLimit, this.rankOf) : null;
  }

  /** Replaces the summary's figures the job cannot know (a report's stack counts are of its dumps). */
  amendSummary(edit: (s: JobSummary) => void): void {
    edit(this.summary);
  }

  close(): void {
    this.set(null);
  }

  private set(job: Job | null): void {
    this.current = job;
    this.userLimit = null;
    this.reportPostmortem = null;
    this.summaryNow = null;
    this.lazyTimes = null;
    this.isPartial = false;
    this.keepMemo = false;
    this.loadRanking = null;
    this.partialOwn = null;
    this.caches = emptyCaches();
  }

  // -- the load lifecycle ------------------------------------------------------------------------------------

  /**
   * The job so far of a load in progress (loadJob's onProcess): the processes read so far become the job, so every
   * query answers on them; the others are listed from their dump heads. The job open before is kept (once).
   */
  showPartial(
    processes: readonly ProcessSeries[],
    warnings: readonly LoadWarning[],
    preview: JobPreview | null,
    bytesTotal: number,
  ): JobSummary {
    const first = this.rollback.replace(() => ({ job: this.current, summary: this.summaryNow }));
    // a new Job object each time: what is cached per job (the ranking) is of this prefix of the processes; the
    // catalogs and growth figures are of each process alone, and stay from one update to the next
    if (first) this.caches = emptyCaches();
    this.current = { processes: processes.slice(), warnings: warnings.slice(), ignoredFiles: [] };
    this.isPartial = true;
    this.keepMemo = true;
    this.memo ??= new RankMemo();
    this.summaryNow = null;
    return withPending(this.summarize(this.current, { loadMs: 0, bytesTotal, waitMs: 0 }), processes, preview);
  }

  /**
   * The load ended with its job. What was made while the job was shown process by process serves the full job
   * where nothing changed (same series, no symbols found): made again, it was the second copy in memory at the
   * load's end. A sample-type copy is kept only while its series' symbols are the ones it was copied with.
   */
  finishLoad(job: Job, times: LoadTimes): JobSummary {
    const made = this.rollback.replaced ? this.caches : null;
    this.rollback.commit();
    this.set(job);
    if (made) {
      made.catalogs.forEach((t, k) => {
        if (t.describes(job.processes[k])) this.caches.catalogs.set(k, t);
      });
      made.steadiness.forEach((g, k) => this.caches.steadiness.set(k, g));
      made.sampled.forEach((p, k) => {
        if (p.symbols === job.processes[Number(k.slice(0, k.indexOf('|')))]?.symbols) this.caches.sampled.set(k, p);
      });
    }
    this.summaryNow = this.summarize(job, times);
    return this.summaryNow;
  }

  /** The load was cancelled or failed: the job open before it is back, also where its processes were shown. */
  abandonLoad(): void {
    this.rollback.undo((b) => {
      this.set(b.job);
      this.summaryNow = b.summary;
    });
  }
}
