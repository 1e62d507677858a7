// A copied dataset is untrusted input (issue 24 items 1, 2, 3, 5, 11, 17): links, special files, ids that are
// paths, glob characters and a huge manifest never make a command touch or read anything outside the dataset, and
// never hang; each is refused in one message naming the file.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { openEngine } from './duckdb.js';
import { escapeGlob, parquetPathSql } from './tree-check.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const JOB = join(ROOT, 'fixtures/jemalloc/job');
let dir = '';
let pristine = '';

const cli = runCaptured;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'heaplens-hostile-ds-'));
  pristine = join(dir, 'pristine');
  expect((await cli('ingest', JOB, '-o', pristine, '--no-symbols')).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function copy(name: string): Promise<string> {
  const d = join(dir, name);
  await cp(pristine, d, { recursive: true });
  return d;
}

/** Every file under a folder with its bytes, to prove nothing there changed. */
async function snapshot(folder: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(folder, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out.set(join(e.parentPath, e.name), (await readFile(join(e.parentPath, e.name))).toString('hex'));
  return out;
}

describe('a hostile dataset', () => {
  it('a process id that is a path plus a linked table folder: ingest refuses, the folder beside it is untouched', async () => {
    const ds = await copy('escape');
    const precious = join(dir, 'precious');
    await mkdir(join(precious, 'process=0'), { recursive: true });
    await writeFile(join(precious, 'keep.txt'), 'the user’s data\n');
    const before = await snapshot(precious);
    // processes.parquet's process column rewritten as text naming a path
    const e = await openEngine([ds]);
    const file = join(ds, 'processes.parquet');
    await e.con.run(
      `COPY (SELECT '/../precious' AS process, * EXCLUDE (process) FROM read_parquet(${parquetPathSql(file)})) TO '${file}.new' (FORMAT parquet)`,
    );
    e.close();
    await rm(file);
    await cp(`${file}.new`, file);
    await rm(`${file}.new`);
    const r = await cli('ingest', JOB, '-o', ds, '--no-symbols');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/processes\.parquet: process id .*not a whole number/);
    expect(r.err).not.toMatch(/internal error|\n\s+at /);
    // and with the ids intact, a table folder that is a link to the parent
    const ds2 = await copy('linked');
    await rm(join(ds2, 'cells'), { recursive: true });
    await symlink(dir, join(ds2, 'cells'));
    const r2 = await cli('ingest', JOB, '-o', ds2, '--no-symbols');
    expect(r2.code).not.toBe(0);
    expect(r2.err).toMatch(/cells: is a symbolic link/);
    expect(await snapshot(precious)).toEqual(before);
    // reading is refused too (the app's datasetOpen reads through the same readDataset)
    const r3 = await cli('summary', ds2);
    expect(r3.code).toBe(1);
    expect(r3.err).toMatch(/cells: is a symbolic link/);
  }, 120_000);

  it('a planted link under the manifest’s old temporary name is never written through', async () => {
    const ds = await copy('planted');
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'do not overwrite\n');
    await symlink(victim, join(ds, '_heaplens.json.tmp'));
    const r = await cli('ingest', JOB, '-o', ds, '--no-symbols');
    expect(r.code, r.err).toBe(0);
    expect(await readFile(victim, 'utf8')).toBe('do not overwrite\n');
  }, 120_000);

  it('a dataset whose path holds glob characters reads itself, not its look-alike', async () => {
    const odd = await copy('ds[1]');
    const other = join(dir, 'ds1');
    expect((await cli('ingest', join(ROOT, 'fixtures/python/py312'), '-o', other, '--no-symbols')).code).toBe(0);
    const a = await cli('summary', odd, '--json');
    const b = await cli('summary', pristine, '--json');
    expect(a.code, a.err).toBe(0);
    const pids = (o: string) => (JSON.parse(o) as { processes: { pid: number }[] }).processes.map((p) => p.pid);
    expect(pids(a.out)).toEqual(pids(b.out));
    expect(escapeGlob('/x/ds[1]/a*b?.parquet')).toBe('/x/ds[[]1]/a[*]b[?].parquet');
  }, 120_000);

  it('a FIFO in a dataset is refused at once instead of hanging every command', async () => {
    const ds = await copy('fifo');
    const part = join(ds, 'cells', (await readdir(join(ds, 'cells')))[0]);
    const victimFile = join(
      part,
      (await readdir(part)).find((f) => f.endsWith('.parquet'))!,
    );
    await rm(victimFile);
    execFileSync('mkfifo', [victimFile]);
    const t0 = Date.now();
    const r = await cli('summary', ds);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/is not a regular file \(a FIFO/);
  }, 60_000);

  it('kept evidence whose copy leads out of the dataset, or is a link, is refused naming it; nothing outside is read or changed', async () => {
    // a job with logs (launcher, job and watchdog logs: kills, roles)
    const logs = join(dir, 'with-logs');
    expect((await cli('ingest', join(ROOT, 'fixtures/watchdog-job'), '-o', logs, '--no-symbols')).code).toBe(0);
    const outside = join(dir, 'outside');
    await mkdir(outside, { recursive: true });
    const secret = join(outside, 'launcher.log');
    await writeFile(secret, 'launcher: worker rollout-1 (pid 1) exited with exitcode -9\n');
    const before = await snapshot(outside);
    const manifestOf = async (d: string) =>
      JSON.parse(await readFile(join(d, '_heaplens.json'), 'utf8')) as { evidence: { path: string; copy: string }[] };
    expect((await manifestOf(logs)).evidence.length).toBeGreaterThan(0);
    // the manifest names a copy outside the dataset (relative and absolute)
    for (const [name, copy] of [
      ['ev-dotdot', '../outside/launcher.log'],
      ['ev-absolute', secret],
      ['ev-nested', 'evidence/../../outside/launcher.log'],
    ]) {
      const ds = join(dir, name);
      await cp(logs, ds, { recursive: true });
      const m = await manifestOf(ds);
      m.evidence[0].copy = copy;
      await writeFile(join(ds, '_heaplens.json'), JSON.stringify(m));
      for (const argv of [
        ['summary', ds],
        ['postmortem', '--json', ds],
        ['ingest', join(ROOT, 'fixtures/watchdog-job'), '-o', ds],
      ]) {
        const r = await cli(...argv);
        expect(r.code, `${argv[0]} ${copy}`).toBe(1);
        expect(r.err).toContain(`${join(ds, '_heaplens.json')}: evidence[0] copy`);
        expect(r.err).toMatch(/is not evidence\/<32 hex digits>/);
        expect(r.err).not.toMatch(/internal error|\n\s+at /);
      }
    }
    // a copy replaced by a link to a file outside
    const linked = join(dir, 'ev-link');
    await cp(logs, linked, { recursive: true });
    const copy = join(linked, (await manifestOf(linked)).evidence[0].copy);
    await rm(copy);
    await symlink(secret, copy);
    const r = await cli('postmortem', '--json', linked);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${copy}: is a symbolic link`);
    // the evidence folder itself a link
    const folder = join(dir, 'ev-folder-link');
    await cp(logs, folder, { recursive: true });
    await rm(join(folder, 'evidence'), { recursive: true });
    await symlink(outside, join(folder, 'evidence'));
    const r2 = await cli('summary', folder);
    expect(r2.code).toBe(1);
    expect(r2.err).toContain(`${join(folder, 'evidence')}: is a symbolic link`);
    expect(await snapshot(outside)).toEqual(before);
  }, 120_000);

  it('a huge manifest is refused by its size, not read whole', async () => {
    const ds = await copy('bigmanifest');
    await truncate(join(ds, '_heaplens.json'), 64 << 20);
    const r = await cli('summary', ds);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/_heaplens\.json: .*67108864 bytes; a manifest is a few KiB/);
  }, 60_000);
});
