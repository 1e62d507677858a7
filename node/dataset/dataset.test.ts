// The dataset holds the job the dumps give: read back, it equals loadJob's model on every real fixture, and
// every command prints the same JSON from the dataset as from the dumps.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadJob } from '../../core/load/load-job.js';
import { collectInputFiles } from '../io/node-files.js';
import { runCaptured } from '../cli/run-captured.js';
import { reopenReport } from '../../core/report/reopen.js';
import { ingest } from './ingest.js';
import { readDataset } from './read-dataset.js';
import { datasetGrowth } from './growth-sql.js';
import { rankGrowth } from '../../core/stats/growth.js';
import { jeprofTotals } from '../../tools/fixtures.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const FIXTURE_DIRS = [
  'fixtures/jemalloc/job',
  'fixtures/jemalloc/damaged',
  'fixtures/jemalloc/other',
  'fixtures/python',
  'fixtures/hostile',
  'fixtures/job/dumps',
  'fixtures/sigma',
];

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'heaplens-dataset-'));
  temps.push(d);
  return d;
}
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

const cli = runCaptured;

describe('dataset totals against jeprof', () => {
  it("every snapshot of the fixture job read back from a dataset totals jeprof's inuse_space for its dump", async () => {
    const out = join(await tempDir(), 'ds');
    await ingest(await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job')]), out);
    const { job } = await readDataset(out);
    const ref = jeprofTotals();
    let checked = 0;
    for (const p of job.processes)
      for (const s of p.snapshots) {
        const want = ref.get(`job/${s.file.split('/').pop()}`);
        if (!want) continue;
        expect(Math.abs(s.live.bytes - want.inuseSpace), s.file).toBeLessThanOrEqual(1);
        checked++;
      }
    expect(checked).toBeGreaterThan(40);
  });
});

describe('dataset round trip', () => {
  for (const rel of FIXTURE_DIRS) {
    it(`${rel}: the dataset read back equals the model loaded from the dumps`, async () => {
      const files = await collectInputFiles([join(ROOT, rel)]);
      const expected = await loadJob(files);
      expect(expected.processes.length).toBeGreaterThan(0);
      const out = join(await tempDir(), 'ds');
      await ingest(files, out);
      const { job } = await readDataset(out);
      expect(job).toEqual(expected);
    });
  }
});

/**
 * Numbers equal to 1e-9 relative (the SQL sums in another order than the loop), or within 1e-6 absolute (a
 * slope or r² that is 0 up to rounding: bytes per snapshot far below one byte); everything else exactly.
 */
function close(a: unknown, b: unknown, path = '$'): string | null {
  if (typeof a === 'number' && typeof b === 'number') {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) || Math.abs(a - b) < 1e-6
      ? null
      : `${path}: ${a} vs ${b}`;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: length ${a.length} vs ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = close(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    if (ka.join() !== kb.join()) return `${path}: keys ${ka.join()} vs ${kb.join()}`;
    for (const k of ka) {
      const d = close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

describe('commands on a dataset give the answers they give on the dumps', async () => {
  const JE = join(ROOT, 'fixtures/jemalloc');
  const sym = ['--symbols', join(JE, 'bin')];
  // Paths as the user gives them: the dataset keeps them, so the JSON names the same files.
  const cases: { name: string; inputs: string[]; ingestArgs: string[]; commands: string[][] }[] = [
    {
      name: 'jemalloc job, symbolized at ingest',
      inputs: [join(JE, 'job')],
      ingestArgs: sym,
      commands: [
        ['summary', '--json'],
        ['top', '--json', '-n', '50'],
        ['top', '--json', '--snapshot', '3', '--stacks', 'native'],
        ['diff', '--json', '-n', '50'],
        ['diff', '--json', '--base', '2', '--target', '9'],
        ['growth', '--json', '-n', '1000'],
        ['growth', '--json', '--pid', '$PID'],
        ['postmortem', '--json'],
      ],
    },
    {
      name: 'Python fixtures (PYFRAMES tables, three interpreters)',
      inputs: [join(ROOT, 'fixtures/python')],
      ingestArgs: ['--no-symbols'],
      commands: [
        ['summary', '--json'],
        ['top', '--json', '--stacks', 'python', '--no-symbols'],
        ['top', '--json', '--no-symbols'],
        ['diff', '--json', '--no-symbols'],
        ['growth', '--json', '--no-symbols', '-n', '1000'],
      ],
    },
    {
      name: 'real multi-process job (fixtures/job: gzipped, PYFRAMES, a killed worker)',
      inputs: [join(ROOT, 'fixtures/job/dumps')],
      ingestArgs: ['--no-symbols'],
      commands: [
        ['summary', '--json'],
        ['top', '--json', '--no-symbols', '-n', '30'],
        ['top', '--json', '--no-symbols', '--stacks', 'python'],
        ['diff', '--json', '--no-symbols'],
        ['growth', '--json', '--no-symbols', '-n', '1000'],
        ['postmortem', '--json', '--no-symbols'],
      ],
    },
    {
      name: 'damaged dumps (warnings)',
      inputs: [join(JE, 'damaged')],
      ingestArgs: ['--no-symbols'],
      commands: [
        ['summary', '--json'],
        ['top', '--json', '--no-symbols'],
        ['growth', '--json', '--no-symbols'],
      ],
    },
  ];
  for (const c of cases) {
    const out = join(await tempDir(), 'ds');
    const ingested = cli('ingest', ...c.inputs, '-o', out, ...c.ingestArgs);
    for (const cmd of c.commands) {
      it(`${c.name}: ${cmd.join(' ')}`, async () => {
        expect((await ingested).code).toBe(0);
        let argv = cmd;
        if (cmd.includes('$PID')) {
          const s = JSON.parse((await cli('summary', '--json', out)).out) as { processes: { pid: number }[] };
          argv = cmd.map((x) => (x === '$PID' ? String(s.processes[s.processes.length - 1].pid) : x));
        }
        const symArgs = c.ingestArgs === sym && argv[0] !== 'summary' ? sym : [];
        const fromDumps = await cli(argv[0], ...c.inputs, ...argv.slice(1), ...symArgs);
        const fromDataset = await cli(argv[0], out, ...argv.slice(1));
        expect(fromDataset.code).toBe(fromDumps.code);
        const a = JSON.parse(fromDumps.out) as unknown;
        const b = JSON.parse(fromDataset.out) as unknown;
        if (argv[0] === 'growth' || argv[0] === 'postmortem') expect(close(b, a)).toBeNull();
        else expect(b).toEqual(a);
        // the answer is not empty: there is something to agree on
        expect(fromDumps.out.length).toBeGreaterThan(200);
      });
    }
  }
});

describe('dump groups that give no process', () => {
  it("keep their warnings in loadJob's order, also across runs", async () => {
    const d = await tempDir();
    const job = join(ROOT, 'fixtures/jemalloc/job');
    const { cp, writeFile } = await import('node:fs/promises');
    await cp(job, join(d, 'job'), { recursive: true });
    // named dumps that cannot be read, sorting before, between and after the real processes
    await writeFile(join(d, 'job', 'aaa.555.0.i0.heap'), '');
    await writeFile(join(d, 'job', 'm.666.0.i0.heap'), 'heap_v2/524288\n  t*: x\n');
    await writeFile(join(d, 'job', 'zzz.777.0.i0.heap'), 'not a heap profile\n');
    const files = await collectInputFiles([join(d, 'job')]);
    const expected = await loadJob(files);
    expect(expected.warnings.length).toBeGreaterThanOrEqual(3);
    const out = join(d, 'ds');
    await ingest(
      files.filter((f) => !f.path.includes('zzz.')),
      out,
    );
    await ingest(files, out);
    expect((await readDataset(out)).job).toEqual(expected);
    await ingest(files, out);
    expect((await readDataset(out)).job).toEqual(expected);
  });
});

describe('incremental ingest', () => {
  const seqOf = (path: string) =>
    Number(
      /\.(\d+)\.[a-z]\d*\.heap$|\.(\d+)\.f\.heap$/
        .exec(path)
        ?.slice(1)
        .find((x) => x !== undefined) ?? -1,
    );

  it('a re-run reads only the new dumps, appends them, and the dataset equals a load of all of them', async () => {
    const all = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job')]);
    const early = all.filter((f) => seqOf(f.path) <= 10);
    expect(early.length).toBeGreaterThan(10);
    expect(early.length).toBeLessThan(all.length);
    const out = join(await tempDir(), 'ds');
    const first = await ingest(early, out);
    expect(first.dumpsRead).toBe(early.length);
    expect((await readDataset(out)).job).toEqual(await loadJob(early));

    const second = await ingest(all, out);
    expect(second.dumpsRead).toBe(all.length - early.length);
    expect(second.dumpsSkipped).toBe(early.length);
    expect(second.processes.append).toBe(3);
    const full = await loadJob(all);
    const back = await readDataset(out);
    expect(back.job).toEqual(full);
    // growth in SQL over the appended cells (`rose` across the run boundary) ranks as rankGrowth does
    const sql = await datasetGrowth(out);
    for (const p of back.job.processes) expect(close(sql.get(back.ids.get(p)!), rankGrowth(p))).toBeNull();

    const third = await ingest(all, out);
    expect(third.dumpsRead).toBe(0);
    expect(third.processes.unchanged).toBe(3);
    expect((await readDataset(out)).job).toEqual(await loadJob(all));
  });

  it('appending a Python process merges its PYFRAMES tables as a full load does', async () => {
    const all = await collectInputFiles([join(ROOT, 'fixtures/python/py312'), join(ROOT, 'fixtures/python/py313')]);
    const first = all.filter((f) => !/\.1\.m1\.heap/.test(f.path));
    expect(first.length).toBeLessThan(all.length);
    const out = join(await tempDir(), 'ds');
    await ingest(first, out);
    const r = await ingest(all, out);
    expect(r.processes.append).toBeGreaterThan(0);
    const expected = await loadJob(all);
    expect(expected.processes.some((p) => p.pythonFrames)).toBe(true);
    expect((await readDataset(out)).job).toEqual(expected);
  });

  it('dumps that sort before the ingested ones make the process be written again in full (stack ids as a full load)', async () => {
    const all = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job')]);
    const late = all.filter((f) => seqOf(f.path) > 10);
    const out = join(await tempDir(), 'ds');
    await ingest(late, out);
    const r = await ingest(all, out);
    expect(r.processes.full).toBe(3);
    expect(r.dumpsRead).toBe(all.length);
    expect((await readDataset(out)).job).toEqual(await loadJob(all));
  });

  it('a process added by a later run gets its own partition; the others stay as they were', async () => {
    const all = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job')]);
    const exact = all.filter((f) => f.path.includes('/exact.'));
    const out = join(await tempDir(), 'ds');
    await ingest(exact, out);
    const r = await ingest(all, out);
    expect(r.processes).toEqual({ full: 2, append: 0, unchanged: 1 });
    expect((await readDataset(out)).job).toEqual(await loadJob(all));
  });
});

describe('report and export on a dataset', async () => {
  const JE = join(ROOT, 'fixtures/jemalloc');
  const sym = ['--symbols', join(JE, 'bin')];
  const dir = await tempDir();
  const out = join(dir, 'ds');
  const ingested = cli('ingest', join(JE, 'job'), '-o', out, ...sym);

  it('export folded, pprof and speedscope: the same bytes', async () => {
    expect((await ingested).code).toBe(0);
    const a = await cli('export', '--format', 'folded', '-o', '-', join(JE, 'job'), ...sym);
    const b = await cli('export', '--format', 'folded', '-o', '-', out);
    expect(b.code).toBe(0);
    expect(b.out).toBe(a.out);
    expect(a.out.split('\n').length).toBeGreaterThan(10);
    for (const format of ['pprof', 'speedscope']) {
      await cli(
        'export',
        '--format',
        format,
        '--snapshot',
        'first',
        '-o',
        join(dir, `a.${format}`),
        join(JE, 'job'),
        ...sym,
      );
      await cli('export', '--format', format, '--snapshot', 'first', '-o', join(dir, `b.${format}`), out);
      expect(readFileSync(join(dir, `b.${format}`)).equals(readFileSync(join(dir, `a.${format}`)))).toBe(true);
    }
  });

  it('report: the same embedded data (but the time it was made)', async () => {
    expect((await ingested).code).toBe(0);
    const ra = await cli(
      'report',
      join(JE, 'job'),
      '-o',
      join(dir, 'a.html'),
      '--title',
      't',
      '--base',
      '2',
      '--target',
      '9',
      ...sym,
    );
    const rb = await cli('report', out, '-o', join(dir, 'b.html'), '--title', 't', '--base', '2', '--target', '9');
    expect(ra.code).toBe(0);
    expect(rb.code).toBe(0);
    const da = reopenReport(readFileSync(join(dir, 'a.html'), 'utf8'));
    const db = reopenReport(readFileSync(join(dir, 'b.html'), 'utf8'));
    expect({ ...db.header, createdAt: '' }).toEqual({ ...da.header, createdAt: '' });
    expect(db.job).toEqual(da.job);
    expect(da.job.processes.length).toBe(3);
  });
});

describe('job-wide columns', () => {
  it("stacks.stack_key is core/frames/stack-identity.ts's key and cells.sd_bytes its σ (core/model/sampling-error.ts)", async () => {
    const files = await collectInputFiles([join(ROOT, 'fixtures/jemalloc/job')]);
    const out = join(await tempDir(), 'ds');
    await ingest(files, out);
    const { job, ids } = await readDataset(out);
    const { openEngine, sqlString } = await import('./duckdb.js');
    const { stackIdentityKeys } = await import('../../core/frames/stack-identity.js');
    const { sigma } = await import('../../core/model/sampling-error.js');
    const e = await openEngine([out]);
    try {
      let sampled = 0;
      for (const p of job.processes) {
        const id = ids.get(p)!;
        const keys = (
          await e.con.runAndReadAll(
            `SELECT stack_key FROM read_parquet(${sqlString(join(out, 'stacks', `process=${id}`, 'data.parquet'))}) ORDER BY stack_id`,
          )
        ).getColumns()[0];
        expect(keys).toEqual(stackIdentityKeys(p));
        const sd = (
          await e.con.runAndReadAll(
            `SELECT sd_bytes FROM read_parquet(${sqlString(join(out, 'cells', `process=${id}`, 'run-0001.parquet'))}, file_row_number = true) ORDER BY snapshot, file_row_number`,
          )
        ).getColumns()[0];
        const want = p.snapshots.flatMap((s) => [...s.liveVarBytes].map(sigma));
        expect(sd).toEqual(want);
        sampled += want.filter((x) => x > 0).length;
      }
      // the sampled run has sampling error; the exact run has none
      expect(sampled).toBeGreaterThan(0);
      // the same leaking code path in the exact and the sampled run (different binaries' load addresses) has one key
      const shared = await e.con.runAndReadAll(
        `SELECT count(*) FROM (SELECT stack_key FROM read_parquet(${sqlString(join(out, 'stacks', '*', 'data.parquet'))}, hive_partitioning = true) GROUP BY stack_key HAVING count(DISTINCT process) > 1)`,
      );
      expect(Number(shared.getColumns()[0][0])).toBeGreaterThan(0);
    } finally {
      e.close();
    }
  });
});
