import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOCKING_READ_MAX, collectInputFiles, nodeInputFile } from './node-files.js';
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

describe('collectInputFiles over many paths at once', () => {
  it('gives the files in the order the paths and sorted listings name them, each once, with problems in path order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-glob-'));
    // 60 dumps of 3 pids with their tables, a maps file per pid, and a nested folder
    const dumps: string[] = [];
    for (let i = 0; i < 60; i++) {
      const pid = 100 + (i % 3);
      const name = `jeprof.${pid}.${i}.i${i}.heap${i % 2 ? '.gz' : ''}`;
      writeFileSync(join(dir, name), 'x');
      writeFileSync(join(dir, `jeprof.${pid}.${i}.i${i}.heap.pyframes`), 'y');
      dumps.push(name);
    }
    for (const pid of [100, 101, 102]) writeFileSync(join(dir, `maps.${pid}`), 'm');
    mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'sub', 'b.txt'), 'b');
    writeFileSync(join(dir, 'sub', 'a.txt'), 'a');
    writeFileSync(join(dir, 'sub', 'deeper', 'c.txt'), 'c');
    // a shell sorts its glob's names; pass them in another order to see that the order given is kept
    const given = [...dumps].reverse().map((n) => join(dir, n));
    const problems: { path: string; message: string }[] = [];
    const paths = [join(dir, 'missing-1'), ...given, join(dir, dumps[0]), join(dir, 'sub'), join(dir, 'missing-2')];
    const files = (await collectInputFiles(paths, problems)).map((f) => f.path);

    // the expected list, built by hand from the names: each dump, then its table and its pid's maps
    const expected: string[] = [];
    const seen = new Set<string>();
    const push = (p: string) => {
      if (seen.has(p)) return;
      expected.push(p);
      seen.add(p);
    };
    for (const n of [...dumps].reverse()) {
      const m = /^jeprof\.(\d+)\.(\d+)\.i\d+\.heap/.exec(n)!;
      push(join(dir, n));
      push(join(dir, n.replace(/\.gz$/, '') + '.pyframes'));
      push(join(dir, `maps.${m[1]}`));
    }
    for (const p of ['sub/a.txt', 'sub/b.txt', 'sub/deeper/c.txt']) push(p);
    expect(files).toEqual(expected);
    expect(problems).toEqual([
      { path: join(dir, 'missing-1'), message: 'no such file or folder' },
      { path: join(dir, 'missing-2'), message: 'no such file or folder' },
    ]);
  });
});

describe('sideFilesOfDump over a folder index', () => {
  // the rule as one pass over the folder's names (its definition before the index), for comparison
  const byOnePass = (dump: string, names: readonly string[]): string[] => {
    const pid = /\.(\d+)\./.exec(dump)?.[1];
    const plain = dump.replace(/\.gz$/, '');
    return names.filter((n) => {
      if (n === dump) return false;
      if (n === `${dump}.pyframes` || n === `${plain}.pyframes`) return true;
      if (n.endsWith('.pyframes')) return false;
      const m = /^maps\.(\d+)$/.exec(n) ?? /^(\d+)\.maps$/.exec(n) ?? /^perf-(\d+)\.map$/.exec(n);
      return n === 'maps' || (m !== null && m[1] === pid);
    });
  };
  it('gives what one pass over the names gives, in their order, for every dump of a shuffled folder', () => {
    const names: string[] = [];
    for (let i = 0; i < 40; i++) {
      const pid = 300 + (i % 4);
      names.push(`jeprof.${pid}.${i}.i${i}.heap${i % 3 === 0 ? '.gz' : ''}`, `jeprof.${pid}.${i}.i${i}.heap.pyframes`);
    }
    names.push('maps', 'maps.301', '302.maps', 'perf-303.map', 'notes.txt', 'jeprof.300.0.i0.heap.gz.pyframes');
    // a fixed shuffle (no Math.random: the test must give the same verdict every run)
    let x = 7;
    for (let i = names.length - 1; i > 0; i--) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const j = x % (i + 1);
      [names[i], names[j]] = [names[j], names[i]];
    }
    for (const n of names) {
      if (!/\.heap(\.gz)?$/.test(n)) continue;
      expect(sideFilesOfDump(n, names)).toEqual(byOnePass(n, names));
    }
    expect(sideFilesOfDump('jeprof.300.0.i0.heap.gz', names)).toContain('jeprof.300.0.i0.heap.gz.pyframes');
  });
});

describe('nodeInputFile: blocking reads (a dump reader thread)', () => {
  it('give the bytes the I/O threads give: pieces, the end of the file, past it; a larger read goes through them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-blocking-'));
    try {
      const abs = join(dir, 'f.bin');
      const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251);
      writeFileSync(abs, bytes);
      const plain = nodeInputFile(abs, 'f.bin', bytes.length, null);
      const blocking = nodeInputFile(abs, 'f.bin', bytes.length, null, { blocking: true });
      for (const [offset, length] of [
        [0, bytes.length],
        [0, 10],
        [123_457, 65_536],
        [bytes.length - 5, 100],
        [bytes.length, 10],
      ]) {
        const want = await plain.read(offset, length);
        expect(Array.from(await blocking.read(offset, length))).toEqual(Array.from(want));
        expect(Array.from(want)).toEqual(Array.from(bytes.subarray(offset, offset + length)));
      }
      // made in the calling thread: answered before the event loop's next turn, which a read through the I/O
      // threads (open, read, close: a turn each) cannot be; one larger than BLOCKING_READ_MAX goes through them
      const first = (p: Promise<unknown>) =>
        Promise.race([p.then(() => 'read'), new Promise((r) => setImmediate(() => r('next turn')))]);
      writeFileSync(abs, new Uint8Array(BLOCKING_READ_MAX + 1));
      const big = nodeInputFile(abs, 'f.bin', BLOCKING_READ_MAX + 1, null, { blocking: true });
      expect(await first(big.read(0, BLOCKING_READ_MAX))).toBe('read');
      expect(await first(big.read(0, BLOCKING_READ_MAX + 1))).toBe('next turn');
      expect(await first(nodeInputFile(abs, 'f.bin', 10, null).read(0, 10))).toBe('next turn');
      await expect(nodeInputFile(join(dir, 'gone'), 'gone', 1, null, { blocking: true }).read(0, 1)).rejects.toThrow(
        /ENOENT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
