// docs/dataset.md's job-wide suspects SQL (node/dataset/suspects.sql), run in DuckDB, gives core/stats/suspects.ts rankJob's
// ranking: on real fixtures ingested as datasets (per-stack pattern, score and the other figures, the job-wide
// order, the groups) against rankJob on the same dumps, over a two-job warehouse laid out as the page says, and on
// synthetic series covering every branch of classifySeries against classifySeries itself.

import { cp, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIGINT, BOOLEAN, DOUBLE, INTEGER, VARCHAR } from '@duckdb/node-api';
import { loadJob } from '../../core/load/load-job.js';
import { rankJob, type JobSuspects } from '../../core/stats/suspects.js';
import { classifySeries, zForPairs, type SeriesVerdict } from '../../core/stats/patterns.js';
import { THEIL_SEN_MAX_POINTS } from '../../core/stats/robust-slope.js';
import { collectInputFiles } from '../io/node-files.js';
import { appendColumns, openEngine, sqlString, type Engine } from './duckdb.js';
import { ingest } from './ingest.js';
import { runJson } from '../cli/run-captured.js';
import { createSuspectsViews, datasetSuspects, suspectRows, suspectsSql, type SqlSuspect } from './suspects-sql.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const temps: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'heaplens-suspects-sql-'));
  temps.push(d);
  return d;
}
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

function docSql(): string {
  const doc = readFileSync(join(ROOT, 'docs/dataset.md'), 'utf8');
  const m = /<!-- suspects\.sql: begin -->\n```sql\n([\s\S]*?)```\n<!-- suspects\.sql: end -->/.exec(doc);
  if (!m) throw new Error('docs/dataset.md has no suspects.sql block');
  return m[1];
}

/** Equal, or within 1e-9 relative (the SQL sums in another order); null stands for ±Infinity. */
function near(sql: number | null, js: number): boolean {
  if (sql === null) return !Number.isFinite(js);
  return sql === js || Math.abs(sql - js) <= 1e-9 * Math.max(Math.abs(sql), Math.abs(js));
}

interface Figures {
  pattern: string;
  points: number;
  firstBytes: number;
  lastBytes: number;
  peakBytes: number;
  deltaBytes: number;
  sigmaBytes: number;
  sigmaDeltaBytes: number;
  z: number;
  slopePerSnapshot: number;
  lateSlopePerSnapshot: number;
  lateZ: number;
  score: number;
}

/** Every figure of one series; the differences, as text (empty when equal). */
function differences(sql: SqlSuspect, js: Figures, what: string): string[] {
  const out: string[] = [];
  if (sql.pattern !== js.pattern) out.push(`${what} pattern: SQL ${sql.pattern}, JS ${js.pattern}`);
  const pairs: [string, number | null, number][] = [
    ['points', sql.points, js.points],
    ['firstBytes', sql.firstBytes, js.firstBytes],
    ['lastBytes', sql.lastBytes, js.lastBytes],
    ['peakBytes', sql.peakBytes, js.peakBytes],
    ['deltaBytes', sql.deltaBytes, js.deltaBytes],
    ['sigmaBytes', sql.sigmaBytes, js.sigmaBytes],
    ['sigmaDeltaBytes', sql.sigmaDeltaBytes, js.sigmaDeltaBytes],
    ['z', sql.z, js.z],
    ['slopePerSnapshot', sql.slopeBytesPerSnapshot, js.slopePerSnapshot],
    ['lateSlopePerSnapshot', sql.lateSlopeBytesPerSnapshot, js.lateSlopePerSnapshot],
    ['lateZ', sql.lateZ, js.lateZ],
    ['score', sql.score, js.score],
  ];
  for (const [k, a, b] of pairs) if (!near(a, b)) out.push(`${what} ${k}: SQL ${String(a)}, JS ${b}`);
  return out;
}

/** The SQL's rows against rankJob: the same series in the same order, the same figures, the same groups. */
function compareWithRankJob(rows: SqlSuspect[], ranked: JobSuspects): void {
  expect(rows.map((r) => `${r.processKey}#${r.stackId}`)).toEqual(
    ranked.stacks.map((s) => `${s.process}#${s.stackId}`),
  );
  const problems: string[] = [];
  rows.forEach((r, i) => {
    const s = ranked.stacks[i];
    const what = `${s.process} stack ${s.stackId}`;
    problems.push(...differences(r, s, what));
    if (r.rank !== i + 1) problems.push(`${what} rank ${r.rank}, JS ${i + 1}`);
    if (r.stackKey !== s.key) problems.push(`${what} stack_key ${r.stackKey}, JS ${s.key}`);
    const g = ranked.groups[s.group];
    if (r.groupRank !== s.group + 1) problems.push(`${what} group rank ${r.groupRank}, JS ${s.group + 1}`);
    if (!near(r.groupScore, g.score)) problems.push(`${what} group score ${r.groupScore}, JS ${g.score}`);
    if (r.groupProcesses !== s.groupProcesses)
      problems.push(`${what} group processes ${r.groupProcesses}, JS ${s.groupProcesses}`);
    if (r.groupPattern !== g.pattern) problems.push(`${what} group pattern ${r.groupPattern}, JS ${g.pattern}`);
  });
  expect(problems.slice(0, 20)).toEqual([]);
}

async function rankDumps(rel: string): Promise<{ ds: string; ranked: JobSuspects }> {
  const files = await collectInputFiles([join(ROOT, rel)]);
  const ranked = rankJob(await loadJob(files));
  const ds = join(await tempDir(), 'job.dataset');
  await ingest(files, ds);
  return { ds, ranked };
}

describe('job-wide suspects SQL (docs/dataset.md)', () => {
  it('is the query in node/dataset/suspects.sql', () => {
    expect(docSql()).toBe(suspectsSql());
  });

  it('fixtures/job (a leak, a replay buffer, a step, a killed worker with a cut dump) ranks as rankJob ranks it', async () => {
    const { ds, ranked } = await rankDumps('fixtures/job/dumps');
    // the job is what the test claims: five processes, a cut dump, and the planted patterns
    const job = await loadJob(await collectInputFiles([join(ROOT, 'fixtures/job/dumps')]));
    expect(job.processes.length).toBe(5);
    expect(job.processes.some((p) => p.snapshots.some((s) => !s.complete))).toBe(true);
    const patterns = new Set(ranked.stacks.map((s) => s.pattern));
    for (const p of ['steady', 'plateau', 'step', 'flat'] as const) expect(patterns).toContain(p);
    expect(ranked.stacks[0].pattern).toBe('steady');
    expect(ranked.stacks[0].score).toBeGreaterThan(0);
    expect(ranked.groups.some((g) => g.processIndexes.length > 1)).toBe(true);
    compareWithRankJob(await datasetSuspects(ds), ranked);
  });

  it("equals the CLI's answer: `heaplens growth <dataset> --json` lists the stacks in the SQL's order", async () => {
    const { ds } = await rankDumps('fixtures/job/dumps');
    const cli = await runJson<{
      stacks: { process: string; stackId: number; pattern: string; score: number; group: number }[];
    }>('growth', ds, '--json', '--no-symbols', '-n', '1000000');
    const sql = [...(await datasetSuspects(ds))].sort((a, b) => a.rank - b.rank);
    expect(cli.stacks.length).toBe(sql.length);
    cli.stacks.forEach((c, i) => {
      const q = sql[i];
      expect(`${q.processKey}:${q.stackId}`, `rank ${i + 1}`).toBe(`${c.process}:${c.stackId}`);
      expect(q.pattern).toBe(c.pattern);
      expect(near(q.score, c.score), `score at rank ${i + 1}`).toBe(true);
      expect(q.groupRank).toBe(c.group + 1);
    });
  });

  for (const rel of [
    'fixtures/jemalloc/job',
    'fixtures/jemalloc/damaged',
    'fixtures/jemalloc/other',
    'fixtures/python',
    'fixtures/hostile',
    'fixtures/sigma',
    // three processes end in an exit dump after teardown, which the series leaves out (core/model/series-end.ts)
    'fixtures/oom-job/dumps',
  ]) {
    it(`${rel}: the SQL ranks as rankJob ranks it`, async () => {
      const { ds, ranked } = await rankDumps(rel);
      expect(ranked.stacks.length).toBeGreaterThan(0);
      compareWithRankJob(await datasetSuspects(ds), ranked);
    });
  }

  it('over a two-job warehouse (job= folders, as the page lays it out) ranks each job as rankJob', async () => {
    const dir = await tempDir();
    const jobs = { a: 'fixtures/job/dumps', b: 'fixtures/jemalloc/other' };
    const expected: Record<string, JobSuspects> = {};
    for (const [job, rel] of Object.entries(jobs)) {
      const { ds, ranked } = await rankDumps(rel);
      expected[job] = ranked;
      for (const t of ['cells', 'snapshots', 'stacks'])
        await cp(join(ds, t), join(dir, 'warehouse', t, `job=${job}`), { recursive: true });
      await cp(join(ds, 'processes.parquet'), join(dir, 'warehouse', 'processes', `job=${job}`, 'processes.parquet'));
    }
    const engine = await openEngine([join(dir, 'warehouse')]);
    try {
      const wh = join(dir, 'warehouse');
      for (const t of ['cells', 'snapshots', 'stacks'])
        await engine.con.run(
          `CREATE VIEW ${t} AS SELECT * FROM read_parquet(${sqlString(`${wh}/${t}/*/*/*.parquet`)}, hive_partitioning = true)`,
        );
      await engine.con.run(
        `CREATE VIEW processes AS SELECT * FROM read_parquet(${sqlString(`${wh}/processes/*/*.parquet`)}, hive_partitioning = true)`,
      );
      const rows = suspectRows((await engine.con.runAndReadAll(docSql())).getRowObjectsJS());
      for (const job of Object.keys(jobs))
        compareWithRankJob(
          rows.filter((r) => r.job === job),
          expected[job],
        );
    } finally {
      engine.close();
    }
  });
});

// ---- synthetic series, through DuckDB, against classifySeries ----

interface SynthSeries {
  /** live bytes per snapshot, null where the stack is absent */
  y: (number | null)[];
  /** variance per snapshot (0 when absent) */
  v?: number[];
  /** accumulated bytes per snapshot */
  a?: number[];
}
interface SynthProcess {
  key: string;
  /** snapshot indexes that are cut (left out of the series) */
  cut?: number[];
  /** the dumps have accumulated bytes (prof_accum) */
  accum?: boolean;
  stacks: SynthSeries[];
}

/** A small deterministic generator (LCG), for noise and random shapes. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** One series per branch of classifySeries, by name. */
const branchCases: [string, SynthSeries][] = [
  // steady: exact linear growth
  ['steady', { y: range(12, (i) => 1000 + 1000 * i) }],
  // plateau: rose, then stopped
  ['plateau', { y: [0, 1000, 2000, 3000, 4000, 5000, 5000, 5000, 5000, 5000, 5000, 5000] }],
  // step over 1 interval
  ['step1', { y: [100, 100, 100, 100, 5000, 5000, 5000, 5000] }],
  // step over 2 intervals (a dump in the middle of the allocation)
  ['step2', { y: [100, 100, 100, 2500, 5000, 5000, 5000, 5000] }],
  // a step near the end: the late window starts after its jump
  ['late-step', { y: [100, 100, 100, 100, 100, 100, 100, 5000, 5000] }],
  // a jump, then still growing after it: not a step
  ['jump-then-growth', { y: [100, 100, 100, 5000, 5200, 5400, 5600, 5800, 6000] }],
  // fluctuating: a buffer filled and emptied
  ['fluctuating', { y: [100, 5000, 100, 5000, 100, 5000, 100] }],
  // declining
  ['declining', { y: [5000, 4000, 3000, 2000, 1000, 500] }],
  // flat by range (within the 2 % floor)
  ['flat-range', { y: [1000, 1001, 1000, 1002, 1001] }],
  // flat by trend: the range within noise, moving both ways
  ['flat-trend', { y: [1000, 1300, 900, 1200, 1000, 1250], v: range(6, () => 1e6) }],
  // a consistent trend within noise (Sen's interval above 0, never falling): rising
  ['trend-up', { y: range(30, (i) => 1000 + 10 * i), v: range(30, () => 1e6) }],
  // a consistent fall within noise: declining
  ['trend-down', { y: range(30, (i) => 2000 - 10 * i), v: range(30, () => 1e6) }],
  // present in the first two snapshots only (absent = 0 after)
  ['gone', { y: [100, 300, null, null, null, null, null, null, null, null, null, null] }],
  // absent from some snapshots (0 there)
  ['gaps', { y: [1000, null, 3000, null, 5000, 6000, null, 8000, 9000, 10000, 11000, 12000] }],
  // ties at the extremes, with different variances
  ['ties', { y: [100, 100, 500, 500, 100, 500, 500], v: [4, 1, 9, 2, 16, 1, 3] }],
  // the rise starts at the first of two equal minima, whose σ is large: not beyond noise, so declining (the
  // second one's small σ would make it fluctuating)
  ['tie-first', { y: [1000, 1000, 3500, 2000, 900], v: [1e6, 1, 1, 1, 1] }],
  // all zero but present
  ['zero', { y: [0, 0, 0, 0] }],
];

function cases(): SynthProcess[] {
  const r = rng(7);
  const noisy = (n: number, f: (i: number) => number, sd: number) => range(n, (i) => f(i) + (r() - 0.5) * 2 * sd);
  const randomShapes: SynthSeries[] = range(120, (k) => {
    const n = 1 + Math.floor(r() * 70);
    const kind = k % 6;
    const sd = r() < 0.5 ? 0 : 10 ** (1 + r() * 4);
    const y = range(n, (i) => {
      const t = i / Math.max(1, n - 1);
      const base =
        kind === 0
          ? 1e5 * t
          : kind === 1
            ? 1e5 * Math.min(1, 3 * t)
            : kind === 2
              ? t > 0.4
                ? 1e5
                : 1e3
              : kind === 3
                ? 5e4 * (1 + Math.sin(9 * t))
                : kind === 4
                  ? 1e5 * (1 - t)
                  : 5e4;
      return Math.max(0, Math.round(base + (r() - 0.5) * 2 * sd));
    });
    return {
      y: y.map((x) => (r() < 0.05 ? null : x)),
      v: range(n, () => (sd === 0 ? 0 : (sd * (0.5 + r())) ** 2)),
      a: range(n, (i) => 1e6 * i),
    };
  });
  return [
    // one process per branch case (a shorter series in a longer process would be absent, 0, at the end)
    ...branchCases.map(([name, stack]) => ({ key: `a/${name}`, accum: false, stacks: [stack] })),
    { key: 'b/two-points', stacks: [{ y: [100, 900] }, { y: [900, 100], v: [1e4, 1e4] }] },
    { key: 'c/one-point', stacks: [{ y: [100] }] },
    {
      // a cut dump in the middle and at the end: left out (its huge value would change every verdict)
      key: 'd/cut',
      cut: [3, 9],
      stacks: [
        { y: [100, 200, 300, 1e12, 500, 600, 700, 800, 900, 1e12] },
        { y: [1000, 1000, 1000, 0, 1000, 1000, 1000, 1000, 1000, 0] },
      ],
    },
    {
      // longer than THEIL_SEN_MAX_POINTS: both windows thinned (n = 100: late window 34 points)
      key: 'e/long',
      stacks: [
        { y: noisy(100, (i) => 1e6 + 1e4 * i, 3e3), v: range(100, () => 1e6) },
        { y: noisy(100, (i) => 1e6 + 1e4 * Math.min(i, 50), 3e3), v: range(100, () => 1e6) },
        { y: noisy(100, (i) => (i > 60 ? 5e6 : 1e6), 1e4), v: range(100, () => 1e8) },
        { y: noisy(100, () => 1e6, 5e4), v: range(100, () => 9e8) },
        { y: [...noisy(40, (i) => 1e6 + 1e4 * i, 3e3), ...range<number | null>(60, () => null)] },
      ],
    },
    {
      // accumulated bytes: a buffer that filled in one jump but went on allocating is a plateau, not a step
      key: 'f/accum',
      accum: true,
      stacks: [
        { y: [100, 100, 100, 5000, 5000, 5000, 5000], a: [100, 100, 100, 5000, 9000, 13000, 17000] },
        { y: [100, 100, 100, 5000, 5000, 5000, 5000], a: [100, 100, 100, 5000, 5000, 5000, 5000] },
      ],
    },
    { key: 'g/random', accum: true, stacks: randomShapes },
  ];
}

/** The series classifySeries reads: the complete snapshots, 0 where absent; accumulated bytes only with prof_accum. */
function expectedVerdict(p: SynthProcess, s: SynthSeries, n: number, stackId: number): SeriesVerdict | null {
  const keep = range(n, (i) => i).filter((i) => !(p.cut ?? []).includes(i));
  if (!keep.some((i) => s.y[i] !== null && s.y[i] !== undefined)) return null;
  const y = keep.map((i) => s.y[i] ?? 0);
  const v = keep.map((i) => (s.y[i] === null || s.y[i] === undefined ? 0 : (s.v?.[i] ?? 0)));
  const a = p.accum ? keep.map((i) => (s.y[i] === null || s.y[i] === undefined ? 0 : (s.a?.[i] ?? 0))) : null;
  return classifySeries({ y, v, t: null, a }, stackId);
}

async function loadSynthetic(engine: Engine, procs: SynthProcess[]): Promise<void> {
  const con = engine.con;
  await con.run('CREATE TABLE processes (job VARCHAR, process INTEGER, key VARCHAR)');
  await con.run(
    'CREATE TABLE snapshots (job VARCHAR, process INTEGER, snapshot INTEGER, complete BOOLEAN, has_accum_cells BOOLEAN)',
  );
  await con.run(
    'CREATE TABLE cells (job VARCHAR, process INTEGER, snapshot INTEGER, seq BIGINT, stack_id INTEGER, bytes DOUBLE, var_bytes DOUBLE, accum_bytes DOUBLE)',
  );
  await con.run('CREATE TABLE stacks (job VARCHAR, process INTEGER, stack_id INTEGER, stack_key VARCHAR)');
  const pr: [string[], number[], string[]] = [[], [], []];
  const sn: [string[], number[], number[], boolean[], boolean[]] = [[], [], [], [], []];
  const ce: [string[], number[], number[], bigint[], number[], number[], number[], (number | null)[]] = [
    [],
    [],
    [],
    [],
    [],
    [],
    [],
    [],
  ];
  const st: [string[], number[], number[], string[]] = [[], [], [], []];
  // process ids in reverse key order: the ranking must order processes by key, not by id
  procs.forEach((p, i) => {
    const id = procs.length - 1 - i;
    pr[0].push('synth');
    pr[1].push(id);
    pr[2].push(p.key);
    const n = Math.max(...p.stacks.map((s) => s.y.length));
    for (let j = 0; j < n; j++) {
      sn[0].push('synth');
      sn[1].push(id);
      sn[2].push(j);
      sn[3].push(!(p.cut ?? []).includes(j));
      sn[4].push(p.accum === true);
    }
    p.stacks.forEach((s, sid) => {
      st[0].push('synth');
      st[1].push(id);
      st[2].push(sid);
      // stacks 0 of every process share a key: one group across processes
      st[3].push(sid === 0 ? 'shared' : `${p.key}#${sid}`);
      s.y.forEach((y, j) => {
        if (y === null) return;
        ce[0].push('synth');
        ce[1].push(id);
        ce[2].push(j);
        ce[3].push(BigInt(j));
        ce[4].push(sid);
        ce[5].push(y);
        ce[6].push(s.v?.[j] ?? 0);
        ce[7].push(p.accum ? (s.a?.[j] ?? 0) : null);
      });
    });
  });
  await appendColumns(con, 'processes', [VARCHAR, INTEGER, VARCHAR], pr, pr[0].length);
  await appendColumns(con, 'snapshots', [VARCHAR, INTEGER, INTEGER, BOOLEAN, BOOLEAN], sn, sn[0].length);
  await appendColumns(
    con,
    'cells',
    [VARCHAR, INTEGER, INTEGER, BIGINT, INTEGER, DOUBLE, DOUBLE, DOUBLE],
    ce,
    ce[0].length,
  );
  await appendColumns(con, 'stacks', [VARCHAR, INTEGER, INTEGER, VARCHAR], st, st[0].length);
  // what the exit-dump rule reads (suspects.sql pts): interval dumps of processes without Python frames, never one
  await con.run("ALTER TABLE snapshots ADD COLUMN trigger VARCHAR DEFAULT 'interval'");
  await con.run('ALTER TABLE snapshots ADD COLUMN live_bytes DOUBLE DEFAULT 0');
  await con.run('ALTER TABLE processes ADD COLUMN python_frames_json VARCHAR');
}

describe('suspects SQL on synthetic series', () => {
  it('equals classifySeries on every branch, and orders the job as rankJob does', async () => {
    const procs = cases();
    // synthetic tables only: no folder to read
    const engine = await openEngine([]);
    let rows: SqlSuspect[];
    try {
      await loadSynthetic(engine, procs);
      rows = suspectRows((await engine.con.runAndReadAll(suspectsSql())).getRowObjectsJS());
    } finally {
      engine.close();
    }
    const sorted = [...procs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const expected: (SeriesVerdict & { process: string; pi: number })[] = [];
    sorted.forEach((p, pi) => {
      const n = Math.max(...p.stacks.map((s) => s.y.length));
      p.stacks.forEach((s, sid) => {
        const v = expectedVerdict(p, s, n, sid);
        if (v) expected.push({ ...v, process: p.key, pi });
      });
    });
    // rankJob's order: score, Δ, size at the end (descending), then the order the series were met in
    const order = [...expected].sort(
      (a, b) =>
        b.score - a.score ||
        b.deltaBytes - a.deltaBytes ||
        b.lastBytes - a.lastBytes ||
        a.pi - b.pi ||
        a.stackId - b.stackId,
    );
    expect(rows.map((r) => `${r.processKey}#${r.stackId}`)).toEqual(order.map((e) => `${e.process}#${e.stackId}`));
    const problems = rows.flatMap((r, i) => differences(r, order[i], `${r.processKey} stack ${r.stackId}`));
    expect(problems.slice(0, 20)).toEqual([]);

    // the cases reach every branch
    const byKey = new Map<string, SqlSuspect>(rows.map((r) => [`${r.processKey}#${r.stackId}`, r]));
    const patternOf = (k: string) => byKey.get(k)?.pattern;
    for (const [name, want] of [
      ['steady', 'steady'],
      ['plateau', 'plateau'],
      ['step1', 'step'],
      ['step2', 'step'],
      ['late-step', 'step'],
      ['jump-then-growth', 'steady'],
      ['fluctuating', 'fluctuating'],
      ['declining', 'declining'],
      ['flat-range', 'flat'],
      ['flat-trend', 'flat'],
      ['trend-up', 'steady'],
      ['trend-down', 'declining'],
      ['gone', 'fluctuating'],
      ['gaps', 'fluctuating'],
      ['zero', 'flat'],
      ['tie-first', 'declining'],
    ] as const)
      expect(`${name}: ${patternOf(`a/${name}#0`)}`).toBe(`${name}: ${want}`);
    expect(patternOf('b/two-points#0')).toBe('unknown');
    expect(patternOf('c/one-point#0')).toBe('unknown');
    expect(patternOf('f/accum#0')).toBe('plateau');
    expect(patternOf('f/accum#1')).toBe('step');
    expect(byKey.get('d/cut#0')?.points).toBe(8);
    expect(byKey.get('e/long#0')?.points).toBeGreaterThan(3 * THEIL_SEN_MAX_POINTS);
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.pattern, (counts.get(r.pattern) ?? 0) + 1);
    for (const p of ['steady', 'plateau', 'step', 'fluctuating', 'declining', 'flat', 'unknown'])
      expect(counts.get(p) ?? 0).toBeGreaterThan(1);
    expect(rows.some((r) => r.z === null)).toBe(true);
    expect(rows.some((r) => r.lateZ === null)).toBe(true);

    // groups: the stacks 0 share a key across processes; the group score is the members' sum
    const shared = rows.filter((r) => r.stackKey === 'shared');
    expect(shared.length).toBe(procs.length);
    expect(new Set(shared.map((r) => r.groupRank)).size).toBe(1);
    expect(shared[0].groupProcesses).toBe(procs.length);
    expect(shared[0].groupScore).toBeCloseTo(
      shared.reduce((s, r) => s + r.score, 0),
      6,
    );
    expect(shared[0].groupPattern).toBe(shared[0].pattern);
  });

  it('computes zForPairs as core/stats/patterns.ts does', async () => {
    const engine = await openEngine([]);
    try {
      await engine.con.run(
        "CREATE TABLE snapshots AS SELECT '' AS job, 0 AS process, CAST(i AS INTEGER) AS snapshot, true AS complete, false AS has_accum_cells, 'interval' AS trigger, 0e0 AS live_bytes FROM range(0, 2000) t(i)",
      );
      await engine.con.run(
        "CREATE TABLE processes AS SELECT '' AS job, 0 AS process, 'p' AS key, CAST(NULL AS VARCHAR) AS python_frames_json",
      );
      const sql = suspectsSql();
      const zq = /\nzq AS \(([\s\S]*?)\n\),\n/.exec(sql);
      if (!zq) throw new Error('suspects.sql has no zq CTE');
      const cpts = /\ncpts AS \(([\s\S]*?)\n\),\n/.exec(sql);
      const pts = /\npts AS \(([\s\S]*?)\n\),\n/.exec(sql);
      if (!pts || !cpts) throw new Error('suspects.sql has no cpts or pts CTE');
      const rows = (
        await engine.con.runAndReadAll(
          `WITH cpts AS (${cpts[1]}), pts AS (${pts[1]}), zq AS (${zq[1]}) SELECT m, z FROM zq ORDER BY m`,
        )
      ).getRowObjectsJS();
      expect(rows.length).toBe(2000);
      const off = rows.filter((r) => Number(r.z) !== zForPairs(Number(r.m)));
      // the same expression in the same order: equal to the last bit but where LN and Math.log round differently (9 of 2,000)
      expect(off.filter((r) => !near(Number(r.z), zForPairs(Number(r.m)))).length).toBe(0);
      expect(off.length).toBeLessThanOrEqual(20);
    } finally {
      engine.close();
    }
  });
});

// the views createSuspectsViews makes are the ones the SQL reads
describe('createSuspectsViews', () => {
  it('gives cells, snapshots, stacks and processes with the job column', async () => {
    const files = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/other')]);
    const ds = join(await tempDir(), 'x.dataset');
    await ingest(files, ds);
    const engine = await openEngine([ds]);
    try {
      await createSuspectsViews(engine, ds, 'j1');
      for (const t of ['cells', 'snapshots', 'stacks', 'processes']) {
        const r = (await engine.con.runAndReadAll(`SELECT DISTINCT job FROM ${t}`)).getRowObjectsJS();
        expect(r.map((x) => x.job)).toEqual(['j1']);
      }
    } finally {
      engine.close();
    }
  });
});
