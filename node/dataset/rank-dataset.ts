// The job-wide suspects ranking (core/stats/suspects.ts) of a dataset without rebuilding its cells in memory:
// SQL gives every stack's first and last point (one pass over the cells); only the stacks whose change is
// beyond 2σ (the only ones that can score) and the few that fill the listing get their series read and
// classified. The answer equals rankJob's on the dumps (node/dataset/rank-dataset.test.ts).

import { join } from 'node:path';
import type { Job } from '../../core/model/model.js';
import { classifySeries, seriesFrame, type SeriesFrame, type StackSeriesVerdict } from '../../core/stats/patterns.js';
import { NOISE_Z } from '../../core/model/sampling-error.js';
import { rankSuspects, type JobSuspects, type RankInput, type StackTotals } from '../../core/stats/suspects.js';
import { appendColumns, chunkNumbers, forEachChunk, openEngine, type Engine } from './duckdb.js';
import { checkCellValues, runOnDataset } from './growth-sql.js';
import { createSuspectsViews } from './suspects-sql.js';
import { DatasetError } from './read-dataset.js';
import { INTEGER } from '@duckdb/node-api';

export interface DatasetRankOptions {
  /** the listing's stacks per process and groups (growth -n) */
  top: number;
}

interface ProcessStats extends StackTotals {
  /** Δ − 2σ_Δ floored at 0: the bound on the score (patterns.ts classifySeries) */
  bound: Float64Array;
}

/**
 * SQL's figures of one process over its complete snapshots, with the point before the last beside the last: the
 * series' end is decided in TypeScript (core/model/series-end.ts), which leaves an exit dump after teardown out.
 */
interface ProcessColumns {
  id: number[];
  first: number[];
  last: number[];
  firstVar: number[];
  lastVar: number[];
  /** bytes and variance at the complete snapshot before the last */
  prev: number[];
  prevVar: number[];
  /** the stack has a cell in a complete snapshot other than the last */
  beforeLast: boolean[];
  keys: string[];
}

/** A ranking under way: the first pass over the cells starts at once, while the caller reads the snapshots. */
export interface DatasetRanking {
  /** Ranks the processes of `job` (read without cells), given their dataset ids (same order as job.processes). */
  rank(job: Pick<Job, 'processes'>, ids: readonly number[], options: DatasetRankOptions): Promise<JobSuspects>;
  close(): void;
}

export async function startDatasetRanking(dir: string): Promise<DatasetRanking> {
  const engine = await openEngine([dir]);
  let closed = false;
  const stats = (async () => {
    await createSuspectsViews(engine, dir); // cells, snapshots and stacks (for stack_key)
    await checkCellValues(engine, dir); // the figures SQL ranks, bounded as read-dataset.ts bounds them
    await createPoints(engine);
    return runOnDataset(engine, dir, () => stackStats(engine));
  })();
  stats.catch(() => {}); // awaited (and thrown) by rank; not an unhandled rejection meanwhile
  return {
    async rank(job, ids, options) {
      const frames = job.processes.map((p) => seriesFrame(p));
      const byId = await stats;
      const pointsOf = await pointCounts(engine);
      const none = (): ProcessStats => ({
        stackIds: new Int32Array(0),
        firstBytes: new Float64Array(0),
        lastBytes: new Float64Array(0),
        sigmaBytes: new Float64Array(0),
        keys: [],
        bound: new Float64Array(0),
      });
      const per = ids.map((id, pi) => {
        // the points SQL took (snapshots.complete) are the complete snapshots in memory; the series is those less
        // an exit dump after teardown (always the last), whose figures SQL gives apart
        const complete = job.processes[pi].snapshots.filter((s) => s.complete).length;
        if ((pointsOf.get(id) ?? 0) !== complete)
          throw new DatasetError(
            join(dir, 'snapshots', `process=${id}`),
            `has ${pointsOf.get(id) ?? 0} complete snapshots in SQL and ${complete} when read`,
          );
        const c = byId.get(id);
        return c ? processStats(c, frames[pi].snapshotIndexes.length < complete) : none();
      });
      return rankWith(engine, dir, job, ids, frames, per, options);
    },
    close() {
      if (closed) return;
      closed = true;
      // a query still running holds the database: close once it is done
      void stats.finally(() => engine.close()).catch(() => {});
    },
  };
}

async function rankWith(
  engine: Engine,
  dir: string,
  job: Pick<Job, 'processes'>,
  ids: readonly number[],
  frames: readonly SeriesFrame[],
  stats: readonly ProcessStats[],
  options: DatasetRankOptions,
): Promise<JobSuspects> {
  const verdicts = job.processes.map(() => new Map<number, StackSeriesVerdict>());
  // what can score, and each process's first places among what cannot
  const need = stats.map((s) => candidates(s, Math.max(1, options.top)));
  const input = (): RankInput[] =>
    stats.map((s, pi) => ({
      totals: s,
      verdicts: verdicts[pi],
      notes: frames[pi].notes,
      snapshotIndexes: frames[pi].snapshotIndexes,
      seconds: frames[pi].seconds,
    }));
  for (let round = 0; ; round++) {
    await runOnDataset(engine, dir, () => classify(engine, ids, frames, need, verdicts));
    const r = rankSuspects(job, input(), { perProcess: options.top, groups: options.top });
    if (r.missing.length === 0) return r;
    // a group's top member outside its process's first places: classify it too (one more round at most)
    if (round > 2) throw new Error('rankDataset: the ranking did not settle');
    need.forEach((n) => (n.length = 0));
    for (const m of r.missing) need[m.processIndex].push(m.stackId);
  }
}

/** Ranks the processes of `job` (read without cells) by their dataset ids `ids` (same order as job.processes). */
export async function rankDataset(
  dir: string,
  job: Pick<Job, 'processes'>,
  ids: readonly number[],
  options: DatasetRankOptions,
): Promise<JobSuspects> {
  const ranking = await startDatasetRanking(dir);
  try {
    return await ranking.rank(job, ids, options);
  } finally {
    ranking.close();
  }
}

/**
 * `points`: each process's complete snapshots as the series' points j = 0…n−1 (core/stats/patterns.ts: the
 * complete ones, in snapshot order); `last` marks the last, `back` counts from it (0 = last). An exit dump after
 * teardown is the last point when there is one: the series in TypeScript stops before it (processStats, classify).
 */
async function createPoints(engine: Engine): Promise<void> {
  await engine.con.run(
    `CREATE OR REPLACE TEMP TABLE points AS
       SELECT process, snapshot,
              CAST(row_number() OVER (PARTITION BY process ORDER BY snapshot) - 1 AS INTEGER) AS j,
              CAST(CASE WHEN snapshot = max(snapshot) OVER (PARTITION BY process) THEN 1 ELSE 0 END AS INTEGER) AS last,
              CAST(row_number() OVER (PARTITION BY process ORDER BY snapshot DESC) - 1 AS INTEGER) AS back
         FROM snapshots WHERE complete`,
  );
}

async function pointCounts(engine: Engine): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  await forEachChunk(engine.con, 'SELECT process, count(*) FROM points GROUP BY process', (chunk) => {
    const [p, n] = [0, 1].map((c) => chunkNumbers(chunk, c));
    for (let i = 0, rows = chunk.rowCount; i < rows; i++) out.set(p[i], n[i]);
  });
  return out;
}

/** Every stack present in a complete snapshot, per process in ascending id: its first, last and before-last point. */
async function stackStats(engine: Engine): Promise<Map<number, ProcessColumns>> {
  const cols = new Map<number, ProcessColumns>();
  // a stack absent from the first (or last) point is 0 there, as in the in-memory series
  await forEachChunk(
    engine.con,
    `SELECT s.*, k.stack_key
       FROM (SELECT c.process, c.stack_id,
                    sum(CASE WHEN p.j = 0 THEN c.bytes ELSE 0 END) AS first_bytes,
                    sum(CASE WHEN p.last = 1 THEN c.bytes ELSE 0 END) AS last_bytes,
                    sum(CASE WHEN p.j = 0 THEN c.var_bytes ELSE 0 END) AS first_var,
                    sum(CASE WHEN p.last = 1 THEN c.var_bytes ELSE 0 END) AS last_var,
                    sum(CASE WHEN p.back = 1 THEN c.bytes ELSE 0 END) AS prev_bytes,
                    sum(CASE WHEN p.back = 1 THEN c.var_bytes ELSE 0 END) AS prev_var,
                    CAST(count(CASE WHEN p.last = 0 THEN 1 END) AS INTEGER) AS before_last
               FROM cells c
               JOIN points p ON p.process = c.process AND p.snapshot = c.snapshot
              GROUP BY c.process, c.stack_id) s
       LEFT JOIN stacks k ON k.process = s.process AND k.stack_id = s.stack_id
      ORDER BY s.process, s.stack_id`,
    (chunk) => {
      const [proc, sid, f, l, fv, lv, pb, pv, bl] = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((c) => chunkNumbers(chunk, c));
      const keys = chunk.getColumnVector(9);
      let c: ProcessColumns | undefined;
      for (let i = 0, rows = chunk.rowCount; i < rows; i++) {
        if (i === 0 || proc[i] !== proc[i - 1]) {
          c = cols.get(proc[i]);
          if (!c)
            cols.set(
              proc[i],
              (c = {
                id: [],
                first: [],
                last: [],
                firstVar: [],
                lastVar: [],
                prev: [],
                prevVar: [],
                beforeLast: [],
                keys: [],
              }),
            );
        }
        if (!c) continue;
        c.id.push(sid[i]);
        c.first.push(f[i]);
        c.last.push(l[i]);
        c.firstVar.push(fv[i]);
        c.lastVar.push(lv[i]);
        c.prev.push(pb[i]);
        c.prevVar.push(pv[i]);
        c.beforeLast.push(bl[i] > 0);
        const key = keys.getItem(i);
        // a stack with no key (a dataset written before stack keys) is its own group
        c.keys.push(typeof key === 'string' ? key : `${proc[i]}:${sid[i]}`);
      }
    },
  );
  return cols;
}

/**
 * One process's totals for the ranking: over every complete snapshot, or (`dropLast`: its last is an exit dump
 * after teardown) ending at the one before, without the stacks only that dump holds, as the in-memory series.
 */
function processStats(c: ProcessColumns, dropLast: boolean): ProcessStats {
  const rows = c.id.flatMap((_, r) => (dropLast && !c.beforeLast[r] ? [] : [r]));
  const n = rows.length;
  const bound = new Float64Array(n);
  const sigma = new Float64Array(n);
  const first = Float64Array.from(rows, (r) => c.first[r]);
  const last = Float64Array.from(rows, (r) => (dropLast ? c.prev[r] : c.last[r]));
  rows.forEach((r, k) => {
    const lastVar = dropLast ? c.prevVar[r] : c.lastVar[r];
    // the same expressions as classifySeries: σ_Δ = √(v₀ + vₙ₋₁), bound = max(0, Δ − 2σ_Δ)
    bound[k] = Math.max(0, last[k] - first[k] - NOISE_Z * Math.sqrt(c.firstVar[r] + lastVar));
    sigma[k] = Math.sqrt(lastVar);
  });
  return {
    stackIds: Int32Array.from(rows, (r) => c.id[r]),
    firstBytes: first,
    lastBytes: last,
    sigmaBytes: sigma,
    keys: rows.map((r) => c.keys[r]),
    bound,
  };
}

/** Stack ids to classify first: all that can score (bound > 0), and the first `top` of the others by Δ, then size. */
function candidates(s: ProcessStats, top: number): number[] {
  const out: number[] = [];
  const rest: number[] = [];
  for (let r = 0; r < s.stackIds.length; r++) (s.bound[r] > 0 ? out : rest).push(r);
  const delta = (r: number) => s.lastBytes[r] - s.firstBytes[r];
  rest.sort((a, b) => delta(b) - delta(a) || s.lastBytes[b] - s.lastBytes[a] || a - b);
  for (const r of rest.slice(0, top)) out.push(r);
  return out.map((r) => s.stackIds[r]);
}

/** Reads the series of the stacks in `need` (per process) and classifies them into `verdicts`. */
async function classify(
  engine: Engine,
  ids: readonly number[],
  frames: readonly SeriesFrame[],
  need: readonly number[][],
  verdicts: Map<number, StackSeriesVerdict>[],
): Promise<void> {
  // row r of `need_stacks` (process pis[r], stack sid[r]) is a series of n points at offset off[r] of the flat columns
  const pis: number[] = [];
  const sid: number[] = [];
  const off: number[] = [0];
  need.forEach((list, pi) =>
    list.forEach((id) => {
      if (verdicts[pi].has(id)) return;
      pis.push(pi);
      sid.push(id);
      off.push(off[off.length - 1] + frames[pi].snapshotIndexes.length);
    }),
  );
  const rows = pis.length;
  if (rows === 0) return;
  await engine.con.run('CREATE OR REPLACE TEMP TABLE need_stacks (process INTEGER, stack_id INTEGER, r INTEGER)');
  await appendColumns(
    engine.con,
    'need_stacks',
    [INTEGER, INTEGER, INTEGER],
    [pis.map((pi) => ids[pi]), sid, Array.from({ length: rows }, (_, r) => r)],
    rows,
  );
  const size = off[off.length - 1];
  const y = new Float64Array(size);
  const v = new Float64Array(size);
  const a = new Float64Array(size);
  await forEachChunk(
    engine.con,
    `SELECT n.r, p.j, c.bytes, c.var_bytes, coalesce(c.accum_bytes, 0)
       FROM cells c
       JOIN need_stacks n ON n.process = c.process AND n.stack_id = c.stack_id
       JOIN points p ON p.process = c.process AND p.snapshot = c.snapshot`,
    (chunk) => {
      const [r, j, b, vb, ab] = [0, 1, 2, 3, 4].map((c) => chunkNumbers(chunk, c));
      for (let i = 0, n = chunk.rowCount; i < n; i++) {
        // a point past the series (an exit dump after teardown, always the last) is not read
        if (j[i] >= off[r[i] + 1] - off[r[i]]) continue;
        const k = off[r[i]] + j[i];
        // one cell per (snapshot, stack): the sums of the in-memory series start from 0 the same way
        y[k] += b[i];
        v[k] += vb[i];
        a[k] += ab[i];
      }
    },
  );
  for (let r = 0; r < rows; r++) {
    const pi = pis[r];
    const f = frames[pi];
    const s = off[r];
    const e = off[r + 1];
    verdicts[pi].set(
      sid[r],
      classifySeries(
        { y: y.subarray(s, e), v: v.subarray(s, e), t: f.seconds, a: f.hasAccum ? a.subarray(s, e) : null },
        sid[r],
      ),
    );
  }
}
