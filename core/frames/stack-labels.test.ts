import { describe, expect, it } from 'vitest';
import { foldStack, interpreterModules, stackLabel, type LabelFrame } from './stack-labels.js';

const nat = (module: string, fn?: string): LabelFrame => ({
  kind: 'native',
  module,
  moduleOffset: '0x10',
  function: fn ?? null,
});
const py = (fn: string, file = 'app.py', line = 1): LabelFrame => ({
  kind: 'python',
  module: null,
  function: fn,
  file,
  line,
});

describe('core/frames/stack-labels', () => {
  const stack = [
    nat('libpython3.12.so.1.0', 'PyByteArray_Resize'),
    nat('libpython3.12.so.1.0'),
    py('make_record', 'w.py', 30),
    nat('_ctypes.cpython-312-x86_64-linux-gnu.so', 'ffi_call'),
    nat('libpython3.12.so.1.0'),
    py('_load', '<frozen importlib._bootstrap>', 9),
    py('main', 'w.py', 80),
    nat('python3.12'),
    nat('libc.so.6'),
  ];

  it('folds runs of interpreter frames; keeps Python, extension and libc frames in order', () => {
    const f = foldStack(stack, { interpreter: true, imports: false });
    expect(f.frames.map((x) => x.function ?? x.module)).toEqual([
      'make_record',
      'ffi_call',
      '_load',
      'main',
      'libc.so.6',
    ]);
    expect(f.folds.map((x) => [x.index, x.reason, x.frames.length])).toEqual([
      [0, 'interpreter', 2],
      [2, 'interpreter', 1],
      [4, 'interpreter', 1],
    ]);
    expect(f.frames.length + f.folds.reduce((a, x) => a + x.frames.length, 0)).toBe(stack.length);
  });

  it('import machinery folds on request, merging with the interpreter frames around it', () => {
    const f = foldStack(stack, { interpreter: true, imports: true });
    expect(f.frames.map((x) => x.function ?? x.module)).toEqual(['make_record', 'ffi_call', 'main', 'libc.so.6']);
    expect(f.folds[1]).toMatchObject({ index: 2, reason: 'import' });
    expect(f.folds[1].frames).toHaveLength(2);
  });

  it('labels lead with the first surviving frame and say what was folded', () => {
    const f = foldStack(stack, { interpreter: true, imports: false });
    expect(stackLabel(f, { max: 2 })).toBe('make_record (w.py:30) ← ffi_call ← … (3 more) [+4 interpreter frames]');
    expect(stackLabel(foldStack([nat('libpython3.12.so')], { interpreter: true, imports: false }))).toBe(
      '(no frames) [+1 interpreter frame]',
    );
  });

  it('the executable is the interpreter when the frame table names the Python version', () => {
    const isInterp = interpreterModules({ maps: null, pythonFrames: { python: '3.12.1' } as never });
    expect(isInterp('python')).toBe(true);
    expect(isInterp('python3.12')).toBe(true);
    expect(isInterp('libpython3.12.so.1.0')).toBe(true);
    expect(isInterp('myapp')).toBe(false);
    expect(interpreterModules({ maps: null, pythonFrames: null })('python')).toBe(false);
  });
});
