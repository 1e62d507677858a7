import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePerfMapLine, parsePythonPerfName } from './perf-map.js';
import { findPerfSymbol, parsePerfMap } from '../symbolize/perf-map.js';
import { PY_FIXTURES } from '../../fixtures/python/fixture-helpers.js';

describe('perf maps written by CPython 3.12 -X perf', () => {
  const text = readFileSync(join(PY_FIXTURES, 'perf-map', 'perf-9293.map'), 'utf8');

  // read as the symbolizer reads it (core/symbolize/perf-map.ts), names split by parsePythonPerfName
  const m = parsePerfMap(text, '/dumps/perf-9293.map');
  const py = (pc: bigint) => {
    const e = findPerfSymbol(m, pc);
    return e ? { ...e, ...parsePythonPerfName(e.name) } : null;
  };

  it('reads every line of a real map as a Python trampoline, file names with spaces intact', () => {
    expect(m.pid).toBe(9293);
    expect(m.entries.length).toBe(24);
    const named = m.entries.map((e) => ({ ...e, ...parsePythonPerfName(e.name) }));
    expect(named.every((e) => e.function !== undefined)).toBe(true);
    const fn = named.find((e) => e.function === '分配_é');
    expect(fn?.file).toBe('/tmp/hl/perf w.py');
    expect(fn?.start).toBe(0x7faa2fcb981fn);
    expect(fn?.end).toBe(0x7faa2fcb981fn + 0xbn);
    expect(named.find((e) => e.function === 'K.m')?.file).toBe('/tmp/hl/perf w.py');
    expect(named[0]).toMatchObject({ function: '_find_and_load', file: '<frozen importlib._bootstrap>' });
  });

  it('looks up return addresses inside a trampoline only', () => {
    expect(py(0x7faa2fcb9814n + 5n)?.function).toBe('K.m');
    expect(py(0x7faa2fcb9814n + 0xbn)?.function).toBe('分配_é'); // the next trampoline starts there
    expect(py(0x7faa2fcb981fn + 0xbn)).toBeNull();
    expect(py(0x1000n)).toBeNull();
  });
});

describe('perf map rules', () => {
  it('splits the name at the first colon after py::, keeps colons in the file', () => {
    expect(parsePythonPerfName('py::Outer.inner:C:\\dir\\a:b.py')).toEqual({
      function: 'Outer.inner',
      file: 'C:\\dir\\a:b.py',
    });
    expect(parsePythonPerfName('py:::x.py')).toBeNull();
    expect(parsePythonPerfName('LazyCompile:*foo /srv/a.js:1')).toBeNull();
  });
  it('treats lines as untrusted', () => {
    expect(parsePerfMapLine('zz 1 py::f:a.py')).toBeNull();
    expect(parsePerfMapLine('1000 0 py::f:a.py')?.end).toBe(0x1001n);
    expect(parsePerfMapLine('1000 10 py::f\u001b[2J:a.py')?.name).toBe('py::f\uFFFD[2J:a.py');
    expect(parsePerfMapLine('1000 10 ' + 'x'.repeat(20000))).toBeNull();
    const m = parsePerfMap('1000 10 py::f:a.py\n1000 10 py::g:b.py\n2000 10 LazyCompile:foo\nbad line\n', 'perf-1.map');
    expect(m.entries).toHaveLength(3); // the bad line is skipped
    expect(findPerfSymbol(m, 0x1004n)?.name).toBe('py::g:b.py'); // the later line for the same start wins
    expect(parsePythonPerfName(findPerfSymbol(m, 0x2004n)!.name)).toBeNull(); // another JIT's name
  });
});
