import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePerfMapLine, parsePythonPerfMap, parsePythonPerfName, pythonPerfFrame } from './perf-map.js';
import { PY_FIXTURES } from '../fixtures/python/fixture-helpers.js';

describe('perf maps written by CPython 3.12 -X perf', () => {
  const text = readFileSync(join(PY_FIXTURES, 'perf-map', 'perf-9293.map'), 'utf8');

  it('reads every line of a real map as a Python trampoline, file names with spaces intact', () => {
    const m = parsePythonPerfMap(text);
    expect(m.entries.length).toBe(24);
    expect(m.skipped).toBe(0);
    const fn = m.entries.find((e) => e.function === '分配_é');
    expect(fn?.file).toBe('/tmp/hl/perf w.py');
    expect(fn?.start).toBe(0x7faa2fcb981fn);
    expect(fn?.end).toBe(0x7faa2fcb981fn + 0xbn);
    expect(m.entries.find((e) => e.function === 'K.m')?.file).toBe('/tmp/hl/perf w.py');
    expect(m.entries[0]).toMatchObject({ function: '_find_and_load', file: '<frozen importlib._bootstrap>' });
  });

  it('looks up return addresses inside a trampoline only', () => {
    const m = parsePythonPerfMap(text);
    expect(pythonPerfFrame(m, 0x7faa2fcb9814n + 5n)?.function).toBe('K.m');
    expect(pythonPerfFrame(m, 0x7faa2fcb9814n + 0xbn)?.function).toBe('分配_é'); // the next trampoline starts there
    expect(pythonPerfFrame(m, 0x7faa2fcb981fn + 0xbn)).toBeNull();
    expect(pythonPerfFrame(m, 0x1000n)).toBeNull();
  });
});

describe('perf map rules', () => {
  it('splits the name at the first colon after py::, keeps colons in the file', () => {
    expect(parsePythonPerfName('py::Outer.inner:C:\\dir\\a:b.py')).toEqual({ function: 'Outer.inner', file: 'C:\\dir\\a:b.py' });
    expect(parsePythonPerfName('py:::x.py')).toBeNull();
    expect(parsePythonPerfName('LazyCompile:*foo /srv/a.js:1')).toBeNull();
  });
  it('treats lines as untrusted', () => {
    expect(parsePerfMapLine('zz 1 py::f:a.py')).toBeNull();
    expect(parsePerfMapLine('1000 0 py::f:a.py')?.end).toBe(0x1001n);
    expect(parsePerfMapLine('1000 10 py::f\u001b[2J:a.py')?.name).toBe('py::f\uFFFD[2J:a.py');
    expect(parsePerfMapLine('1000 10 ' + 'x'.repeat(20000))).toBeNull();
    const m = parsePythonPerfMap('1000 10 py::f:a.py\n1000 10 py::g:b.py\n2000 10 LazyCompile:foo\nbad line\n');
    expect(m.entries.map((e) => e.function)).toEqual(['g']); // the later line for the same start wins
    expect(m.otherNames).toBe(1);
    expect(m.skipped).toBe(1);
  });
});
