// The job-wide suspects ranking (core/stats/suspects.ts) of one dataset or several (each node's of one job) without
// rebuilding their cells in memory: the stored `series` statistics give every stack's first and last point (one
// query over every dataset's series table); only the stacks whose change is beyond 2σ (the only ones that can
// score), the few that fill the listing and the members of the groups kept get their series read from the cells
// and classified. The answer equals rankJob's on the dumps (node/dataset/rank-dataset.test.ts, datasets.test.ts).

import { join } from 'node:path';
import { figureProblem } from './dataset-values.js';
import type { Job } from '../../core/model/model.js';
import { classifySeries, seriesFrame, type SeriesFrame, type StackSeriesVerdict } from '../../core/stats/patterns.js';
import { NOISE_Z } from '../../core/model/sampling-error.js';
import { rankSuspects, type JobSuspects, type RankInput, type StackTotals } from '../../core/stats/suspects.js';
import { CULPRIT_GROUPS } from '../../core/query/process-groups.js';
import { appendColumns, chunkNumbers, forEachChunk, openEngine, type Engine } from './duckdb.js';
import { findDamagedFile, tableFiles } from './growth-sql.js';
import { checkTree, DatasetError, type DatasetProcess } from './read-dataset.js';
import { parquetPathSql } from './tree-check.js';
import { SERIES, CELLS, SNAPSHOTS, type ColumnDef } from './schema.js';
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

/** A ranking under way: the query over the series tables starts at once, while the caller reads the snapshots. */
export interface DatasetRanking {
  /** Ranks the processes of `job` (read without cells), given where each lives (same order as job.processes). */
  rank(
    job: Pick<Job, 'processes'>,
    sources: readonly DatasetProcess[],
    options: DatasetRankOptions,
  ): Promise<JobSuspects>;
  close(): void;
}

/** The dataset index (`ds` in the views) of each dataset folder. */
type DatasetIndex = ReadonlyMap<string, number>;

/**
 * Views `series`, `cells` and `snapshots` over every dataset, with `ds` (the dataset's index in `dirs`) and
 * `process` (its partition id there).
 */
export async function createDatasetsViews(engine: Engine, dirs: readonly string[]): Promise<void> {
  for (const d of dirs) await checkTree(d);
  for (const [table, cols] of [
    ['series', SERIES],
    ['cells', CELLS],
    ['snapshots', SNAPSHOTS],
  ] as [string, readonly ColumnDef[]][]) {
    const parts: string[] = [];
    for (const [i, d] of dirs.entries()) {
      // series: one file per dataset, with its process column; the others: hive partitions process=<n>
      const files = table === 'series' ? [join(d, 'series.parquet')] : await tableFiles(d, table);
      if (files.length > 0)
        parts.push(
          `SELECT ${i} AS ds, CAST(process AS INTEGER) AS process, * EXCLUDE (process) FROM read_parquet([${files.map(parquetPathSql).join(', ')}]${table === 'series' ? '' : ', hive_partitioning = true'})`,
        );
    }
    if (parts.length === 0)
      parts.push(
        `SELECT 0 AS ds, CAST(NULL AS INTEGER) AS process, ${cols
          .filter((c) => c.name !== 'process')
          .map((c) => `CAST(NULL AS ${c.sql}) AS "${c.name}"`)
          .join(', ')} WHERE false`,
      );
    await engine.con.run(`CREATE OR REPLACE VIEW ${table} AS ${parts.join(' UNION ALL ')}`);
  }
}

export async function startDatasetRanking(dirs: readonly string[]): Promise<DatasetRanking> {
  const engine = await openEngine(dirs);
  const index: DatasetIndex = new Map(dirs.map((d, i) => [d, i]));
  let closed = false;
  const stats = (async () => {
    await createDatasetsViews(engine, dirs);
    await createPoints(engine);
    return onDatasets(engine, dirs, () => stackStats(engine, dirs));
  })();
  stats.catch(() => {}); // awaited (and thrown) by rank; not an unhandled rejection meanwhile
  return {
    async rank(job, sources, options) {
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
      const ids = sources.map((src) => globalId(index, src));
      const per = ids.map((id, pi) => {
        // the points SQL took (snapshots.complete) are the complete snapshots in memory; the series is those less
        // an exit dump after teardown (always the last), whose figures SQL gives apart
        const complete = job.processes[pi].snapshots.filter((s) => s.complete).length;
        if ((pointsOf.get(id) ?? 0) !== complete)
          throw new DatasetError(
            join(sources[pi].dir, 'snapshots', `process=${sources[pi].id}`),
            `has ${pointsOf.get(id) ?? 0} complete snapshots in SQL and ${complete} when read`,
          );
        const c = byId.get(id);
        return c ? processStats(c, frames[pi].snapshotIndexes.length < complete) : none();
      });
      return rankWith(engine, dirs, job, ids, frames, per, options);
    },
    close() {
      if (closed) return;
      closed = true;
      // a query still running holds the database: close once it is done
      void stats.finally(() => engine.close()).catch(() => {});
    },
  };
}

/** A process's id across the datasets: dataset index × 2^32 + its partition id (both whole, exact in a double). */
const ID_SPAN = 2 ** 32;
function globalId(index: DatasetIndex, src: DatasetProcess): number {
  const ds = index.get(src.dir);
  if (ds === undefined) throw new Error(`rankDataset: ${src.dir} is not one of the datasets ranked`);
  return ds * ID_SPAN + src.id;
}

/** `run`, with a DuckDB failure on a damaged file named by that file (each dataset's tables are hashed in turn). */
async function onDatasets<T>(engine: Engine, dirs: readonly string[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    for (const d of dirs) await findDamagedFile(engine, d, ['series.parquet', 'cells', 'snapshots']);
    throw new DatasetError(
      dirs.join(', '),
      `could not be ranked (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
    );
  }
}

async function rankWith(
  engine: Engine,
  dirs: readonly string[],
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
  // the groups shown, and those whose holders a page summarises (culpritHolders), even when fewer are listed
  const groups = Math.max(options.top, CULPRIT_GROUPS);
  for (let round = 0; ; round++) {
    await onDatasets(engine, dirs, () => classify(engine, dirs, ids, frames, need, verdicts));
    const r = rankSuspects(job, input(), { perProcess: options.top, groups });
    need.forEach((n) => (n.length = 0));
    // a group's top member outside its process's first places
    for (const m of r.missing) need[m.processIndex].push(m.stackId);
    // every member of a kept group: its pattern splits the group's change from the others' (patterns, processes)
    // and its late rate is in the holders' spread, as on the dumps where every series is classified
    const kept = new Set(r.groups.map((g) => g.key));
    stats.forEach((s, pi) => {
      for (let row = 0; row < s.stackIds.length; row++)
        if (kept.has(s.keys[row]) && !verdicts[pi].has(s.stackIds[row])) need[pi].push(s.stackIds[row]);
    });
    if (need.every((n) => n.length === 0)) return r;
    // the groups kept depend on scores and sizes only, known before: one more round at most
    if (round > 2) throw new Error('rankDataset: the ranking did not settle');
  }
}

/** Ranks the processes of `job` (read without cells) of the datasets `dirs`, given where each process lives. */
export async function rankDataset(
  dirs: readonly string[],
  job: Pick<Job, 'processes'>,
  sources: readonly DatasetProcess[],
  options: DatasetRankOptions,
): Promise<JobSuspects> {
  const ranking = await startDatasetRanking(dirs);
  try {
    return await ranking.rank(job, sources, options);
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
       SELECT CAST(ds AS DOUBLE) * ${ID_SPAN} + process AS gid, snapshot,
              CAST(row_number() OVER (PARTITION BY ds, process ORDER BY snapshot) - 1 AS INTEGER) AS j
         FROM snapshots WHERE complete`,
  );
}

async function pointCounts(engine: Engine): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  await forEachChunk(engine.con, 'SELECT gid, count(*) FROM points GROUP BY gid', (chunk) => {
    const [p, n] = [0, 1].map((c) => chunkNumbers(chunk, c));
    for (let i = 0, rows = chunk.rowCount; i < rows; i++) out.set(p[i], n[i]);
  });
  return out;
}

/** Each process's pprof flag (its figures are signed: a delta profile's, as pprof keeps them), by dataset and process. */
const SIGNED_PROCESSES = `(SELECT ds, process, bool_and(format = 'pprof') AS signed FROM snapshots GROUP BY ds, process)`;

/**
 * Every stack present in a complete snapshot, per process in ascending id: its first, last and before-last point,
 * from the stored series statistics (schema.ts SERIES) of every dataset in one query. Each figure is a size
 * (dataset-values.ts's bound): a damaged one is named by its dataset's series folder.
 */
async function stackStats(engine: Engine, dirs: readonly string[]): Promise<Map<number, ProcessColumns>> {
  const cols = new Map<number, ProcessColumns>();
  await forEachChunk(
    engine.con,
    `SELECT CAST(ds AS DOUBLE) * ${ID_SPAN} + process AS gid, stack_id, first_y, last_y, first_var, last_var, prev_y, prev_var,
            CAST(before_last AS INTEGER), stack_key, ds, process, coalesce(f.signed, false)
       FROM series
       LEFT JOIN ${SIGNED_PROCESSES} f USING (ds, process)
      ORDER BY ds, process, stack_id`,
    (chunk) => {
      const [gid, sid, f, l, fv, lv, pb, pv, bl] = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((c) => chunkNumbers(chunk, c));
      const keys = chunk.getColumnVector(9);
      const [ds, proc, signed] = [10, 11, 12].map((c) => chunkNumbers(chunk, c));
      let c: ProcessColumns | undefined;
      for (let i = 0, rows = chunk.rowCount; i < rows; i++) {
        // a pprof profile's figures are signed (a delta profile's, as pprof keeps them); variances never
        for (const [name, v, mayBeNegative] of [
          ['first_y', f[i], true],
          ['last_y', l[i], true],
          ['first_var', fv[i], false],
          ['last_var', lv[i], false],
          ['prev_y', pb[i], true],
          ['prev_var', pv[i], false],
        ] as const) {
          const bad = figureProblem(v, mayBeNegative && signed[i] === 1);
          if (bad !== null)
            throw new DatasetError(
              join(dirs[ds[i]], 'series.parquet'),
              `column ${name} holds ${v} for process ${proc[i]}, stack ${sid[i]}, not a ${bad}`,
            );
        }
        if (i === 0 || gid[i] !== gid[i - 1]) {
          c = cols.get(gid[i]);
          if (!c)
            cols.set(
              gid[i],
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
        // a stack with no key is its own group
        c.keys.push(typeof key === 'string' ? key : `${gid[i]}:${sid[i]}`);
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
  dirs: readonly string[],
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
  await engine.con.run(
    'CREATE OR REPLACE TEMP TABLE need_stacks (ds INTEGER, process INTEGER, stack_id INTEGER, r INTEGER)',
  );
  await appendColumns(
    engine.con,
    'need_stacks',
    [INTEGER, INTEGER, INTEGER, INTEGER],
    [
      pis.map((pi) => Math.floor(ids[pi] / ID_SPAN)),
      pis.map((pi) => ids[pi] % ID_SPAN),
      sid,
      Array.from({ length: rows }, (_, r) => r),
    ],
    rows,
  );
  const size = off[off.length - 1];
  const y = new Float64Array(size);
  const v = new Float64Array(size);
  const a = new Float64Array(size);
  await forEachChunk(
    engine.con,
    `SELECT n.r, p.j, c.bytes, c.var_bytes, coalesce(c.accum_bytes, 0), coalesce(f.signed, false)
       FROM cells c
       JOIN need_stacks n ON n.ds = c.ds AND n.process = c.process AND n.stack_id = c.stack_id
       JOIN points p ON p.gid = CAST(c.ds AS DOUBLE) * ${ID_SPAN} + c.process AND p.snapshot = c.snapshot
       LEFT JOIN ${SIGNED_PROCESSES} f ON f.ds = c.ds AND f.process = c.process`,
    (chunk) => {
      const [r, j, b, vb, ab, signed] = [0, 1, 2, 3, 4, 5].map((c) => chunkNumbers(chunk, c));
      for (let i = 0, n = chunk.rowCount; i < n; i++) {
        // the dump readers' bounds on what is classified (read-dataset.ts checks the same in memory)
        // a pprof profile's figures are signed (a delta profile's, as pprof keeps them); variances never
        for (const [name, v, mayBeNegative] of [
          ['bytes', b[i], true],
          ['var_bytes', vb[i], false],
          ['accum_bytes', ab[i], true],
        ] as const) {
          const bad = figureProblem(v, mayBeNegative && signed[i] === 1);
          if (bad !== null) {
            const pi = pis[r[i]];
            throw new DatasetError(
              join(dirs[Math.floor(ids[pi] / ID_SPAN)], 'cells', `process=${ids[pi] % ID_SPAN}`),
              `column ${name} holds ${v} for stack ${sid[r[i]]}, not a ${bad}`,
            );
          }
        }
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
