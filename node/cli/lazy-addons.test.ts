// Commands on dumps never load DuckDB's native addon (only a dataset needs it): finding out whether a path is
// a dataset must not import it. Checked on the built CLI, by recording every native addon the process opens.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

function addonsOpened(args: string[]): { status: number | null; addons: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'heaplens-addons-'));
  const preload = join(dir, 'record-dlopen.cjs');
  const log = join(dir, 'dlopen.log');
  writeFileSync(
    preload,
    `const fs = require('fs'); const open = process.dlopen;
     process.dlopen = function (m, file, ...rest) { fs.appendFileSync(${JSON.stringify(log)}, file + '\\n'); return open.call(this, m, file, ...rest); };`,
  );
  // created here, not in the preload: the preload runs again in every worker thread
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--require', preload, join(ROOT, 'bin', 'heaplens.js'), ...args], {
    encoding: 'utf8',
  });
  const text = readFileSync(log, 'utf8');
  return { status: r.status, addons: text.split('\n').filter(Boolean) };
}

describe('native addons are loaded only when needed', () => {
  it('summary and growth on dumps open no DuckDB addon', () => {
    for (const cmd of ['summary', 'growth']) {
      const r = addonsOpened(
        [cmd, join(ROOT, 'fixtures/jemalloc/job'), '--json', '--no-symbols'].filter(
          (a) => cmd === 'growth' || a !== '--no-symbols',
        ),
      );
      expect(r.status, cmd).toBe(0);
      expect(
        r.addons.filter((f) => /duckdb/i.test(f)),
        cmd,
      ).toEqual([]);
    }
  });

  it('the recorder sees DuckDB when a dataset is read (so the check above can fail)', () => {
    const ds = join(mkdtempSync(join(tmpdir(), 'heaplens-addons-ds-')), 'ds');
    const ing = addonsOpened(['ingest', join(ROOT, 'fixtures/jemalloc/job'), '-o', ds, '--no-symbols']);
    expect(ing.status).toBe(0);
    expect(ing.addons.some((f) => /duckdb/i.test(f))).toBe(true);
  });
});
