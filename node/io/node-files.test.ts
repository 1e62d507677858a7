import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectInputFiles } from './node-files.js';
import { sideFilesOfDump } from '../../core/formats/dump-filename.js';
import { runCaptured } from '../cli/run-captured.js';
import { listDumps, parentLastDump, PY_FIXTURES } from '../../fixtures/python/fixture-helpers.js';

const cli = runCaptured;

describe('side files beside a dump named alone', () => {
  it('sideFilesOfDump: its own table, maps and perf/code maps of its pid, nothing of other dumps', () => {
    const names = [
      'a.7.0.m0.heap',
      'a.7.0.m0.heap.pyframes',
      'a.7.1.m1.heap.pyframes',
      'a.8.0.m0.heap',
      'maps.7',
      '8.maps',
      'maps',
      'perf-7.map',
      'perf-8.map',
      'pycode-7-00ff.map',
      'notes.txt',
    ];
    expect(sideFilesOfDump('a.7.0.m0.heap', names, ['maps'])).toEqual([
      'a.7.0.m0.heap.pyframes',
      'maps.7',
      'maps',
      'perf-7.map',
      'pycode-7-00ff.map',
      'proc/7/maps',
    ]);
    expect(sideFilesOfDump('a.7.0.m0.heap.gz', ['a.7.0.m0.heap.pyframes'])).toEqual(['a.7.0.m0.heap.pyframes']);
  });

  it('top <dump> reads the .pyframes beside it, as top <folder> does', async () => {
    const d = parentLastDump(listDumps('py312'));
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-side-'));
    copyFileSync(d.path, join(dir, d.name));
    copyFileSync(d.path + '.pyframes', join(dir, d.name + '.pyframes'));
    writeFileSync(join(dir, `perf-${d.pid}.map`), '7f0000001000 10 py::f:/x.py\n');
    mkdirSync(join(dir, 'proc', String(d.pid)), { recursive: true });
    writeFileSync(join(dir, 'proc', String(d.pid), 'maps'), d.mapsText);
    const files = (await collectInputFiles([join(dir, d.name)])).map((f) => f.path);
    expect(files).toEqual([
      join(dir, d.name),
      join(dir, d.name + '.pyframes'),
      join(dir, `perf-${d.pid}.map`),
      join(dir, 'proc', String(d.pid), 'maps'),
    ]);
    const alone = JSON.parse((await cli('top', join(dir, d.name), '--json', '--no-symbols', '-n', '5')).out);
    const folder = JSON.parse(
      (await cli('top', join(PY_FIXTURES, 'py312'), '--pid', String(d.pid), '--json', '--no-symbols', '-n', '5')).out,
    );
    expect(alone.stacks.map((s: { frames: unknown }) => s.frames)).toEqual(
      folder.stacks.map((s: { frames: unknown }) => s.frames),
    );
    expect(alone.stacks[0].frames[0]).toMatchObject({ kind: 'python', function: 'make_record' });
  });
});
