// docs/dataset.md's job-wide growth SQL, read from the page, run in DuckDB over a warehouse laid out as the page
// says (two jobs under job=), gives the steady-grower ranking of core/stats/growth.ts (rankGrowth: the app's growth
// table and the report's) on the dumps.

import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { runCaptured } from '../cli/run-captured.js';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openEngine, sqlString } from './duckdb.js';
import { growthSql } from './growth-sql.js';
import { loadJob } from '../../core/load/load-job.js';
import { rankGrowth, type StackGrowth } from '../../core/stats/growth.js';
import { collectInputFiles } from '../io/node-files.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const temps: string[] = [];
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

const cli = runCaptured;

function docSql(): string {
  const doc = readFileSync(join(ROOT, 'docs/dataset.md'), 'utf8');
  const m = /<!-- growth\.sql: begin -->\n```sql\n([\s\S]*?)```\n<!-- growth\.sql: end -->/.exec(doc);
  if (!m) throw new Error('docs/dataset.md has no growth.sql block');
  return m[1];
}

interface CliGrowth {
  processes: { key: string }[];
  stacks: (StackGrowth & { process: string })[];
}

const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

describe('job-wide growth SQL (docs/dataset.md)', () => {
  it('is the query the CLI runs (node/dataset/growth.sql)', () => {
    expect(docSql()).toBe(growthSql());
  });

  it('over a two-job warehouse equals rankGrowth on the dumps, per job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'heaplens-growth-sql-'));
    temps.push(dir);
    const jobs = { a: join(ROOT, 'fixtures/jemalloc/job'), b: join(ROOT, 'fixtures/python') };
    const expectedOf: Record<string, CliGrowth> = {};
    const keyOf = new Map<string, string>();
    for (const [job, src] of Object.entries(jobs)) {
      const ds = join(dir, `${job}.dataset`);
      expect((await cli('ingest', src, '-o', ds, '--no-symbols')).code).toBe(0);
      // the recipe of the page: each job's per-process tables under job=<name>
      for (const t of ['cells', 'snapshots'])
        await cp(join(ds, t), join(dir, 'warehouse', t, `job=${job}`), { recursive: true });
      const loaded = await loadJob(await collectInputFiles([src]));
      expectedOf[job] = {
        processes: loaded.processes.map((p) => ({ key: p.key })),
        stacks: loaded.processes.flatMap((p) =>
          rankGrowth(p)
            .filter((g) => g.deltaBytes > 0)
            .map((g) => ({ process: p.key, ...g })),
        ),
      };
      expect(expectedOf[job].stacks.length).toBeGreaterThan(2);
      const e = await openEngine([ds]);
      for (const k of (
        await e.con.runAndReadAll(`SELECT process, key FROM read_parquet(${sqlString(join(ds, 'processes.parquet'))})`)
      ).getRowObjectsJS())
        keyOf.set(`${job}/${k.process}`, String(k.key));
      e.close();
    }
    expect(await readFile(join(dir, 'a.dataset', '_heaplens.json'), 'utf8')).toContain('heaplens-dataset');

    const engine = await openEngine([join(dir, 'warehouse')]);
    try {
      const wh = join(dir, 'warehouse');
      await engine.con.run(
        `CREATE VIEW cells AS SELECT * FROM read_parquet(${sqlString(`${wh}/cells/*/*/*.parquet`)}, hive_partitioning = true)`,
      );
      await engine.con.run(
        `CREATE VIEW snapshots AS SELECT * FROM read_parquet(${sqlString(`${wh}/snapshots/*/*/*.parquet`)}, hive_partitioning = true)`,
      );
      const rows = (await engine.con.runAndReadAll(docSql())).getRowObjectsJS();
      for (const job of Object.keys(jobs)) {
        const expected = expectedOf[job];
        // the CLI lists stacks that grew overall (Δ > 0), in rank order per process
        const got = rows.filter((r) => r.job === job && Number(r.delta_bytes) > 0);
        expect(got.length).toBe(expected.stacks.length);
        const byProcess = (p: string) => got.filter((r) => keyOf.get(`${job}/${String(r.process)}`) === p);
        for (const key of new Set(expected.stacks.map((s) => s.process))) {
          const want = expected.stacks.filter((s) => s.process === key);
          const have = byProcess(key);
          expect(have.map((r) => Number(r.stack_id))).toEqual(want.map((s) => s.stackId));
          have.forEach((r, i) => {
            const w = want[i];
            for (const [col, v] of [
              ['slope_bytes_per_snapshot', w.slopeBytesPerSnapshot],
              ['growing_fraction', w.growingFraction],
              ['r2', w.r2],
              ['first_bytes', w.firstBytes],
              ['last_bytes', w.lastBytes],
              ['delta_bytes', w.deltaBytes],
              ['steadiness', w.steadiness],
            ] as const) {
              if (!near(Number(r[col]), v))
                throw new Error(`${key} stack ${w.stackId} ${col}: SQL ${String(r[col])}, CLI ${v}`);
            }
          });
        }
      }
      // independent of both code paths: the exact run of fixtures/jemalloc/src/leaky.c (60 steps, a dump every 3,
      // every allocation recorded) leaks one 16,384 B object a step, so its leak stack holds 16,384 × 3(k+1) B at
      // manual dump k (k = 0…19) and 16,384 × 60 B at the final dump; slope by least squares over those 21 points
      const ys = [...Array.from({ length: 20 }, (_, k) => 16384 * 3 * (k + 1)), 16384 * 60];
      const n = ys.length;
      const mx = (n - 1) / 2;
      const my = ys.reduce((a, b) => a + b, 0) / n;
      const slope = ys.reduce((a, y, x) => a + (x - mx) * (y - my), 0) / ys.reduce((a, _y, x) => a + (x - mx) ** 2, 0);
      const leak = rows.filter(
        (r) =>
          r.job === 'a' &&
          keyOf.get(`a/${String(r.process)}`)?.includes('exact') &&
          Number(r.last_bytes) === 16384 * 60,
      );
      expect(leak).toHaveLength(1);
      expect(Number(leak[0].first_bytes)).toBe(16384 * 3);
      expect(Number(leak[0].delta_bytes)).toBe(16384 * 57);
      expect(Number(leak[0].slope_bytes_per_snapshot)).toBeCloseTo(slope, 6);
      expect(Number(leak[0].growing_fraction)).toBeCloseTo(19 / 20, 12);
    } finally {
      engine.close();
    }
  });
});
