// Several datasets opened as one job (issue 49 item 5): a job copied off two "nodes" (node-a/, node-b/), each
// node's folder ingested alone as it would be on that node, and the two datasets opened together give the answers
// the dumps give opened together — summary, growth and postmortem JSON, byte for byte. The jobs are real runs
// (fixtures/job: the capture library's contexts, whose hostname is set per node as a second node's `hostname`
// would; fixtures/jemalloc/job: plain jemalloc dumps, hosts from the folders), copied as hosts.test.ts copies them.
// Then the same path ingested on two nodes (keys repeat; `--host` names the node), and bad input: a dataset of
// another version and a damaged file are named and left out, the other dataset read and no file changed.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured, runJson } from '../cli/run-captured.js';
import { copyCapturedAsHost } from '../../tools/fixtures.js';
import { tableFiles } from './growth-sql.js';
import { datasetsRanking, seriesRankSql } from './series-rank.js';
import { collectInputFiles } from '../io/node-files.js';
import { loadJob } from '../../core/load/load-job.js';
import { stackIdentityKeys } from '../../core/frames/stack-identity.js';
import type { JobSummary } from '../../core/query/job-summary.js';
import { NodeEngine } from '../engine/engine.js';
import { ingest } from './ingest.js';
import { openEngine } from './duckdb.js';
import { parquetPathSql } from './tree-check.js';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures');
const PLAIN = join(FIXTURES, 'jemalloc/job');

let dir = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'heaplens-datasets-'));
  for (const [node, host] of [
    ['node-a', 'gpu-a'],
    ['node-b', 'gpu-b'],
  ]) {
    copyCapturedAsHost(join(dir, 'captured', node), host);
    cpSync(PLAIN, join(dir, 'plain', node), { recursive: true });
  }
  for (const job of ['captured', 'plain'])
    for (const node of ['node-a', 'node-b']) {
      const r = await runCaptured('ingest', join(dir, job, node), '-o', join(dir, `${job}-${node}.dataset`));
      expect(r.code, r.err).toBe(0);
    }
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const both = (job: string) => [join(dir, `${job}-node-a.dataset`), join(dir, `${job}-node-b.dataset`)];

interface ProcessJson {
  key: string;
  pid: number | null;
  host: string | null;
}

describe('datasets of two nodes opened together', () => {
  // growth -n 1: the page still summarises three suspects' holders, each member's rate and pattern the dumps'
  for (const [job, argv] of [
    ['captured', ['summary']],
    ['captured', ['growth', '-n', '1000']],
    ['captured', ['postmortem']],
    ['plain', ['summary']],
    ['plain', ['growth']],
    ['plain', ['growth', '-n', '1']],
    ['plain', ['growth', '-n', '1000']],
    ['plain', ['postmortem']],
  ] as const)
    it(`${job}: ${argv.join(' ')} --json equals the dumps'`, async () => {
      // the same two folders, read as dumps (paths are shown from each folder given, as ingest stored them)
      const dumps = await runCaptured(...argv, '--json', join(dir, job, 'node-a'), join(dir, job, 'node-b'));
      const datasets = await runCaptured(...argv, '--json', ...both(job));
      expect(datasets.code, datasets.err).toBe(dumps.code);
      expect(JSON.parse(datasets.out)).toEqual(JSON.parse(dumps.out));
      expect(datasets.out).toBe(dumps.out);
    }, 300_000);

  it('keeps each node apart by host: the context hostname, else the folder', async () => {
    const captured = await runJson<{ processes: ProcessJson[] }>('summary', '--json', ...both('captured'));
    expect(new Set(captured.processes.map((p) => p.host))).toEqual(new Set(['gpu-a', 'gpu-b']));
    const plain = await runJson<{ processes: ProcessJson[] }>('summary', '--json', ...both('plain'));
    expect(new Set(plain.processes.map((p) => p.host))).toEqual(new Set(['node-a', 'node-b']));
    // every pid is on both nodes: twice as many processes as pids
    expect(plain.processes.length).toBe(2 * new Set(plain.processes.map((p) => p.pid)).size);
  }, 300_000);

  it('the same path ingested on two nodes: keys kept apart by dataset, hosts from --host', async () => {
    // as on a cluster: each node ingests its own /scratch/job/heap, so the dumps' paths (and keys) repeat
    const out: string[] = [];
    for (const node of ['node-a', 'node-b']) {
      const scratch = join(dir, `scratch-${node}`);
      cpSync(PLAIN, join(scratch, 'heap'), { recursive: true });
      const cwd = process.cwd();
      process.chdir(scratch);
      try {
        const ds = join(dir, `same-${node}.dataset`);
        const r = await runCaptured('ingest', 'heap', '-o', ds, '--host', node);
        expect(r.code, r.err).toBe(0);
        out.push(ds);
      } finally {
        process.chdir(cwd);
      }
    }
    const single = await runJson<{ processes: ProcessJson[] }>('summary', '--json', PLAIN);
    const j = await runJson<{ processes: ProcessJson[] }>('summary', '--json', ...out);
    expect(j.processes.length).toBe(2 * single.processes.length);
    expect(j.processes.map((p) => `${p.host}:${p.pid}`).sort()).toEqual(
      ['node-a', 'node-b'].flatMap((h) => single.processes.map((p) => `${h}:${p.pid}`)).sort(),
    );
    // the repeated keys say which dataset each process came from
    for (const p of j.processes) expect(p.key).toMatch(/^same-node-[ab]\.dataset\/heap\//);
    const g = await runCaptured('growth', '--json', ...out);
    expect(g.code, g.err).toBe(0);
  }, 300_000);

  it('refuses datasets mixed with dumps, naming both', async () => {
    const r = await runCaptured('summary', both('plain')[0], join(dir, 'plain', 'node-b'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${both('plain')[0]} is a dataset and ${join(dir, 'plain', 'node-b')} is not`);
  });
});

// The evidence beside the dumps (kernel logs with the OOM report, launcher and job logs with kill lines and roles,
// cgroup and smaps_rollup files) kept by ingest and read by the same readers: the fates, roles and log times the
// dumps give, byte for byte, per node (each node's dataset holding its own logs, scoped to its processes as the
// dumps' node folders are) and as one dataset of the whole job. Expected: the dumps' own JSON (whose fates the
// fixtures' tests check against the kernel's report and the launchers' counters).
describe("the job's logs kept in its datasets", () => {
  const TWO = join(FIXTURES, 'two-node-job');
  const whole = ['two-node-job', 'watchdog-job', 'oom-job'];
  const perNode = () => ['node-a', 'node-b'].map((n) => join(dir, `logs-${n}.dataset`));
  beforeAll(async () => {
    for (const n of ['node-a', 'node-b']) {
      const r = await runCaptured('ingest', join(TWO, n), '-o', join(dir, `logs-${n}.dataset`));
      expect(r.code, r.err).toBe(0);
    }
    for (const job of whole) {
      const r = await runCaptured('ingest', join(FIXTURES, job), '-o', join(dir, `logs-${job}.dataset`));
      expect(r.code, r.err).toBe(0);
    }
  }, 600_000);

  for (const command of ['summary', 'growth', 'postmortem'])
    it(`two-node-job, one dataset per node: ${command} --json equals the dumps'`, async () => {
      const dumps = await runCaptured(command, '--json', join(TWO, 'node-a'), join(TWO, 'node-b'));
      const datasets = await runCaptured(command, '--json', ...perNode());
      expect(datasets.code, datasets.err).toBe(dumps.code);
      expect(datasets.out).toBe(dumps.out);
    }, 300_000);

  for (const job of whole)
    for (const command of ['summary', 'growth', 'postmortem'])
      it(`${job}, one dataset of the whole job: ${command} --json equals the dumps'`, async () => {
        const dumps = await runCaptured(command, '--json', join(FIXTURES, job));
        const ds = await runCaptured(command, '--json', join(dir, `logs-${job}.dataset`));
        expect(ds.code, ds.err).toBe(dumps.code);
        expect(ds.out).toBe(dumps.out);
      }, 300_000);

  interface Fated {
    host: string | null;
    pid: number | null;
    name: string | null;
    fate: string;
  }
  it("the per-node datasets give node-b's kernel kill, the torn-down workers and their roles", async () => {
    const expected = JSON.parse(readFileSync(join(TWO, 'expected.json'), 'utf8')) as {
      kill: { node: string; pid: number; role: string };
    };
    const r = await runJson<{ processes: Fated[] }>('postmortem', '--json', ...perNode());
    const killed = r.processes.filter((p) => p.fate === 'oom-killed' || p.fate === 'killed');
    expect(killed.map((p) => [p.host, p.pid, p.name, p.fate])).toEqual([
      [expected.kill.node, expected.kill.pid, expected.kill.role, 'oom-killed'],
    ]);
    expect(r.processes.filter((p) => p.fate === 'torn-down').length).toBeGreaterThan(0);
    expect(r.processes.filter((p) => p.fate === 'stopped')).toEqual([]);
  }, 300_000);

  it("the same path ingested on each node (the cluster recipe): each node's logs speak for its own processes", async () => {
    // as on a cluster: each node ingests its own heap/ (dumps and logs), so every path repeats across the datasets
    const out: string[] = [];
    for (const node of ['node-a', 'node-b']) {
      const scratch = join(dir, `logs-scratch-${node}`);
      cpSync(join(TWO, node), join(scratch, 'heap'), { recursive: true });
      const cwd = process.cwd();
      process.chdir(scratch);
      try {
        const ds = join(dir, `logs-same-${node}.dataset`);
        const r = await runCaptured('ingest', 'heap', '-o', ds, '--host', node);
        expect(r.code, r.err).toBe(0);
        out.push(ds);
      } finally {
        process.chdir(cwd);
      }
    }
    // expected: the fates and roles the dumps in their node folders give (the fixture's test checks those against
    // the kernel's report and the launchers' counters)
    const fates = (j: { processes: Fated[] }) =>
      j.processes.map((p) => `${p.host}:${p.pid} ${p.name} ${p.fate}`).sort();
    const dumps = await runJson<{ processes: Fated[] }>(
      'postmortem',
      '--json',
      join(TWO, 'node-a'),
      join(TWO, 'node-b'),
    );
    const same = await runJson<{ processes: Fated[] }>('postmortem', '--json', ...out);
    expect(fates(same)).toEqual(fates(dumps));
    expect(fates(same)).toContain('node-b:9 rollout-1 oom-killed');
  }, 300_000);

  it('a dataset written before logs were kept reads as a job without them; ingesting again keeps one copy of each', async () => {
    const expected = JSON.parse(readFileSync(join(TWO, 'expected.json'), 'utf8')) as { kill: { role: string } };
    const old = join(dir, 'logs-old.dataset');
    cpSync(perNode()[1], old, { recursive: true });
    const manifest = join(old, '_heaplens.json');
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { evidence?: unknown[] };
    expect(m.evidence?.length).toBe(3);
    delete m.evidence;
    writeFileSync(manifest, JSON.stringify(m));
    rmSync(join(old, 'evidence'), { recursive: true });
    const r = await runJson<{ processes: Fated[] }>('postmortem', '--json', old);
    expect(r.processes.filter((p) => p.fate === 'oom-killed')).toEqual([]);
    // no role names: the launcher's lines are not there
    expect(r.processes.map((p) => p.name)).not.toContain(expected.kill.role);
    // the same node ingested again into it: its logs kept, once each
    const again = await runCaptured('ingest', join(TWO, 'node-b'), '-o', old);
    expect(again.code, again.err).toBe(0);
    const m2 = JSON.parse(readFileSync(manifest, 'utf8')) as { evidence: { path: string }[] };
    expect(m2.evidence.map((e) => e.path).sort()).toEqual(
      ['dmesg.txt', 'job.log', 'launcher.log'].map((f) => `node-b/logs/${f}`),
    );
    expect(readdirSync(join(old, 'evidence'))).toHaveLength(3);
    const alone = await runCaptured('postmortem', '--json', join(TWO, 'node-b'));
    expect((await runCaptured('postmortem', '--json', old)).out).toBe(alone.out);
  }, 300_000);
});

describe('bad input among datasets', () => {
  /** Every file of a dataset with its bytes, to check nothing was changed. */
  const snapshot = (d: string) =>
    new Map(
      readdirSync(d, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => [join(e.parentPath, e.name), readFileSync(join(e.parentPath, e.name)).toString('base64')]),
    );

  for (const command of ['summary', 'growth', 'postmortem'])
    it(`${command}: a dataset of another version is named and left out; the other is read, nothing changed`, async () => {
      const [a, b] = [join(dir, `old-${command}-a.dataset`), join(dir, `old-${command}-b.dataset`)];
      cpSync(both('plain')[0], a, { recursive: true });
      cpSync(both('plain')[1], b, { recursive: true });
      const manifest = join(a, '_heaplens.json');
      writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/"version": \d+/, '"version": 1'));
      const before = [snapshot(a), snapshot(b)];
      const r = await runCaptured(command, '--json', a, b);
      expect(r.code, r.err).toBe(0);
      const j = JSON.parse(r.out) as { warnings: { file: string; message: string }[] };
      const w = j.warnings.find((x) => x.file === manifest);
      expect(w?.message).toMatch(/dataset version 1; this heaplens reads version 2/);
      expect(w?.message).toContain(`the dataset ${a} is left out`);
      const alone = await runCaptured(command, '--json', b);
      // node-b's own answer (the warning aside)
      const { warnings: _w, ...rest } = j as unknown as Record<string, unknown>;
      const { warnings: _w2, ...restAlone } = JSON.parse(alone.out) as Record<string, unknown>;
      expect(rest).toEqual(restAlone);
      expect([snapshot(a), snapshot(b)]).toEqual(before);
    }, 300_000);

  it('a damaged Parquet file is named and its dataset left out; the other is read', async () => {
    const [a, b] = [join(dir, 'damaged-a.dataset'), join(dir, 'damaged-b.dataset')];
    cpSync(both('captured')[0], a, { recursive: true });
    cpSync(both('captured')[1], b, { recursive: true });
    const victim = (await tableFiles(a, 'snapshots'))[0];
    truncateSync(victim, 40);
    const before = [snapshot(a), snapshot(b)];
    const r = await runCaptured('summary', '--json', a, b);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { processes: ProcessJson[]; warnings: { file: string; message: string }[] };
    const w = j.warnings.find((x) => x.file === victim);
    expect(w?.message).toMatch(/not a readable Parquet file/);
    expect(new Set(j.processes.map((p) => p.host))).toEqual(new Set(['gpu-b']));
    expect([snapshot(a), snapshot(b)]).toEqual(before);
    // alone, the damaged dataset is an error naming the file (exit 1), as before
    const alone = await runCaptured('summary', a);
    expect(alone.code).toBe(1);
    expect(alone.err).toContain(victim);
  }, 300_000);

  it('a version-1 dataset alone says to ingest the dumps again', async () => {
    const a = join(dir, 'old-alone.dataset');
    cpSync(both('plain')[0], a, { recursive: true });
    const manifest = join(a, '_heaplens.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/"version": \d+/, '"version": 1'));
    const r = await runCaptured('summary', a);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${manifest}: dataset version 1; this heaplens reads version 2`);
    expect(r.err).toMatch(/ingest the dumps again/);
  });
});

describe('series-rank.sql: the job-wide ranking over the datasets, from the stored series statistics', () => {
  it('is the query docs/dataset.md gives', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/dataset.md'), 'utf8');
    const m = /<!-- series-rank\.sql: begin -->\n```sql\n([\s\S]*?)```\n<!-- series-rank\.sql: end -->/.exec(doc);
    expect(m?.[1]).toBe(seriesRankSql());
  });

  it("equals the same arithmetic on the dumps' series, grouped by stack identity across the nodes", async () => {
    // expected: from the dumps loaded together, each (process, stack) series over the complete snapshots (absent = 0)
    const files = await collectInputFiles([join(dir, 'captured', 'node-a'), join(dir, 'captured', 'node-b')]);
    const job = await loadJob(files);
    interface Member {
      key: string;
      bound: number;
      delta: number;
      last: number;
      v: number;
    }
    const groups = new Map<string, Member[]>();
    for (const p of job.processes) {
      const snaps = p.snapshots.filter((s) => s.complete);
      const keys = stackIdentityKeys(p);
      const y = new Map<number, number[]>();
      const v = new Map<number, number[]>();
      snaps.forEach((s, t) =>
        s.stackIds.forEach((id, i) => {
          if (!y.has(id)) y.set(id, new Array<number>(snaps.length).fill(0));
          if (!v.has(id)) v.set(id, new Array<number>(snaps.length).fill(0));
          y.get(id)![t] += s.liveBytes[i];
          v.get(id)![t] += s.liveVarBytes[i];
        }),
      );
      for (const [id, ys] of y) {
        const vs = v.get(id)!;
        const n = ys.length;
        const delta = ys[n - 1] - ys[0];
        const sd = Math.sqrt(vs[0] + vs[n - 1]);
        const list = groups.get(keys[id]) ?? [];
        list.push({ key: p.key, bound: Math.max(0, delta - 2 * sd), delta, last: ys[n - 1], v: vs[0] + vs[n - 1] });
        groups.set(keys[id], list);
      }
    }
    const sum = (ms: Member[], f: (m: Member) => number) => ms.reduce((a, m) => a + f(m), 0);
    const want = [...groups]
      .map(([stackKey, ms]) => ({
        stackKey,
        bound: sum(ms, (m) => m.bound),
        delta: sum(ms, (m) => m.delta),
        last: sum(ms, (m) => m.last),
        sigma: Math.sqrt(sum(ms, (m) => m.v)),
        processes: ms.length,
        growing: ms.filter((m) => m.bound > 0).length,
        ms,
      }))
      .sort(
        (a, b) =>
          b.bound - a.bound ||
          b.delta - a.delta ||
          b.last - a.last ||
          (a.stackKey < b.stackKey ? -1 : a.stackKey > b.stackKey ? 1 : 0),
      );
    // stacks on both nodes: groups of members from both datasets
    expect(want[0].bound).toBeGreaterThan(0);
    expect(want.some((g) => new Set(g.ms.map((m) => m.key.split('/')[0])).size === 2)).toBe(true);

    const got = await datasetsRanking(both('captured'), 'two-nodes');
    expect(got.length).toBe(Math.min(100, want.length));
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    got.forEach((g, i) => {
      const w = want[i];
      expect(g.groupRank).toBe(i + 1);
      // equal sums of bounds may be ordered either way by rounding: compare the figures, then the key where distinct
      expect(close(g.boundBytes, w.bound), `${i}: bound ${g.boundBytes} vs ${w.bound}`).toBe(true);
      expect(close(g.deltaBytes, w.delta), `${i}: delta`).toBe(true);
      expect(close(g.lastBytes, w.last), `${i}: last`).toBe(true);
      expect(close(g.sigmaDeltaBytes, w.sigma), `${i}: sigma`).toBe(true);
      if (i === 0 || !close(want[i - 1].bound, w.bound)) expect(g.stackKey).toBe(w.stackKey);
      expect(g.processes).toBe(w.processes);
      expect(g.growingProcesses).toBe(w.growing);
      // the member that grows most: its host is its node's
      const top = w.ms.reduce((a, m) => (m.bound > a.bound ? m : a));
      if (w.ms.filter((m) => m.bound === top.bound).length === 1) expect(g.topProcessKey).toBe(top.key);
      expect(['gpu-a', 'gpu-b']).toContain(g.topHost);
    });
  }, 300_000);
});

describe("heaplens open's engine on several datasets", () => {
  /** The job summary the engine behind `heaplens open <paths…>` serves (its 'open' request), as the page gets it. */
  async function served(paths: string[]): Promise<JobSummary> {
    const engine = new NodeEngine({
      paths,
      allowPaths: false,
      symbols: null,
      info: { kind: 'node', label: 'datasets' },
      reportApp: () => null,
      readers: 2,
    });
    try {
      const job = engine.servedJob();
      if (!job) throw new Error('the engine serves no job');
      return await job;
    } finally {
      engine.close();
    }
  }

  it("opens two nodes' datasets as the job the two folders of dumps are: the same processes, hosts and totals", async () => {
    const fromDumps = await served([join(dir, 'captured', 'node-a'), join(dir, 'captured', 'node-b')]);
    const fromDatasets = await served(both('captured'));
    const shown = (s: JobSummary) =>
      s.processes.map((p) => ({
        key: p.key,
        pid: p.pid,
        host: p.host,
        labelHost: p.labelHost,
        name: p.name,
        live: p.snapshots.map((x) => x.liveBytes),
      }));
    expect(fromDatasets.processes.length).toBe(10);
    expect(shown(fromDatasets)).toEqual(shown(fromDumps));
    expect(new Set(fromDatasets.processes.map((p) => p.labelHost))).toEqual(new Set(['gpu-a', 'gpu-b']));
  }, 300_000);
});

describe('series.parquet over incremental runs', () => {
  /** Every row of a dataset's series.parquet, in (process, stack) order. */
  async function seriesRows(d: string): Promise<unknown[]> {
    const e = await openEngine([d]);
    try {
      return (
        await e.con.runAndReadAll(
          `SELECT * FROM read_parquet(${parquetPathSql(join(d, 'series.parquet'))}) ORDER BY process, stack_id`,
        )
      ).getRowObjectsJS();
    } finally {
      e.close();
    }
  }

  /** Rows equal, sums to rounding (the cells of two runs are summed in another order): 1e-12 relative. */
  function expectSameRows(got: unknown[], want: unknown[]): void {
    expect(got.length).toBe(want.length);
    got.forEach((g, i) => {
      const w = want[i] as Record<string, unknown>;
      for (const [k, v] of Object.entries(g as Record<string, unknown>)) {
        const x = w[k];
        if (typeof v === 'number' && typeof x === 'number' && k.startsWith('sum_'))
          expect(Math.abs(v - x), `row ${i} ${k}: ${v} vs ${x}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(x)));
        else expect(v, `row ${i} ${k}`).toEqual(x);
      }
    });
  }

  it('an appended run, then one with nothing new, leave the statistics a single run of every dump gives', async () => {
    const all = await collectInputFiles([PLAIN]);
    const early = all.filter((f) => !/\.(1\d|[2-9]\d)\.[a-z]\d*\.heap$/.test(f.path));
    expect(early.length).toBeGreaterThan(10);
    expect(early.length).toBeLessThan(all.length);
    const [once, inSteps] = [join(dir, 'series-once.dataset'), join(dir, 'series-steps.dataset')];
    await ingest(all, once);
    await ingest(early, inSteps);
    const appended = await ingest(all, inSteps);
    expect(appended.processes.append).toBeGreaterThan(0);
    const want = await seriesRows(once);
    expect(want.length).toBeGreaterThan(0);
    const afterAppend = await seriesRows(inSteps);
    expectSameRows(afterAppend, want);
    const unchanged = await ingest(all, inSteps);
    expect(unchanged.dumpsRead).toBe(0);
    // the processes left as they were keep their rows exactly
    expect(await seriesRows(inSteps)).toEqual(afterAppend);
  }, 300_000);
});
