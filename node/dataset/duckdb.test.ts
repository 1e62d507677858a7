// Issue 46 S9: each engine spills into a private folder of its own (mkdtemp, mode 700), removed on close; no SQL
// reaches a file outside the folders it was opened on, installs or loads an extension, or unlocks that.
import {
  lstatSync,
  readlinkSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEngine, type Engine } from './duckdb.js';

/** Builds a table twice the engine's memory limit, so DuckDB must spill it to its temp folder. */
async function spill(e: Engine): Promise<string[]> {
  // 128 MB of rows under a 64 MB limit: the table's blocks are evicted to the temp folder
  await e.con.run('CREATE TABLE big AS SELECT i, i * 2 AS r FROM range(8000000) t(i)');
  const files = (await e.con.runAndReadAll('SELECT path FROM duckdb_temporary_files()')).getRowObjectsJS();
  return files.map((f) => String(f.path));
}

const setting = async (e: Engine, name: string): Promise<string> =>
  String(
    (await e.con.runAndReadAll(`SELECT value FROM duckdb_settings() WHERE name = '${name}'`)).getRowObjectsJS()[0]
      .value,
  );

describe('the DuckDB engine', () => {
  it('its settings read back: a private temp folder, no external access or extensions, configuration locked', async () => {
    const ds = await mkdtemp(join(tmpdir(), 'heaplens-engine-ds-'));
    const e = await openEngine([ds]);
    try {
      expect(await setting(e, 'temp_directory')).toBe(e.tempDir);
      expect(statSync(e.tempDir).mode & 0o777).toBe(0o700);
      expect(await setting(e, 'enable_external_access')).toBe('false');
      expect(await setting(e, 'autoload_known_extensions')).toBe('false');
      expect(await setting(e, 'autoinstall_known_extensions')).toBe('false');
      expect(await setting(e, 'lock_configuration')).toBe('true');
      await expect(e.con.run('SET enable_external_access = true')).rejects.toThrow(/locked/);
      await expect(e.con.run("SET temp_directory = '/tmp'")).rejects.toThrow(/locked/);
      // its dataset folder is reachable, nothing else
      await e.con.run(`COPY (SELECT 1 AS a) TO '${join(ds, 'a.parquet')}' (FORMAT parquet)`);
      expect(
        (await e.con.runAndReadAll(`SELECT a FROM read_parquet('${join(ds, 'a.parquet')}')`)).getRowObjectsJS(),
      ).toEqual([{ a: 1 }]);
      await expect(e.con.run("SELECT * FROM read_csv('/etc/passwd')")).rejects.toThrow(/disabled by configuration/);
      await expect(e.con.run(`SELECT * FROM read_csv('${ds}/../../../etc/passwd')`)).rejects.toThrow(
        /disabled by configuration/,
      );
      await expect(e.con.run(`COPY (SELECT 1) TO '${ds}-other/x.csv'`)).rejects.toThrow(/disabled by configuration/);
      await expect(e.con.run('INSTALL httpfs')).rejects.toThrow();
      await expect(e.con.run("SELECT * FROM read_parquet('https://example.com/x.parquet')")).rejects.toThrow();
    } finally {
      e.close();
    }
    expect(existsSync(e.tempDir)).toBe(false);
  });

  it('two engines spilling at once write into two different private folders; a link at the old default name is untouched', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'heaplens-engine-spill-'));
    // the old shared spill file: DuckDB's default name in the old temp_directory (os.tmpdir())
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'the user’s file\n');
    const planted = join(tmpdir(), 'duckdb_temp_storage_DEFAULT-0.tmp');
    symlinkSync(victim, planted);
    const [a, b] = await Promise.all([
      openEngine([dir], { memoryLimit: '64MB' }),
      openEngine([dir], { memoryLimit: '64MB' }),
    ]);
    try {
      expect(a.tempDir).not.toBe(b.tempDir);
      const [fa, fb] = await Promise.all([spill(a), spill(b)]);
      console.log('spilled:', fa, fb);
      expect(fa.length).toBeGreaterThan(0);
      expect(fb.length).toBeGreaterThan(0);
      for (const f of fa) expect(f.startsWith(a.tempDir + '/')).toBe(true);
      for (const f of fb) expect(f.startsWith(b.tempDir + '/')).toBe(true);
      expect(readdirSync(a.tempDir).length).toBeGreaterThan(0);
      // the data each spilled reads back whole
      for (const e of [a, b])
        expect((await e.con.runAndReadAll('SELECT count(*) AS n, sum(i) AS s FROM big')).getRowObjectsJS()).toEqual([
          { n: 8000000n, s: 31999996000000n },
        ]);
    } finally {
      a.close();
      b.close();
    }
    expect(existsSync(a.tempDir) || existsSync(b.tempDir)).toBe(false);
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
    expect(readlinkSync(planted)).toBe(victim);
    expect(readFileSync(victim, 'utf8')).toBe('the user’s file\n');
  }, 120_000);
});
