import { describe, expect, it } from 'vitest';
import {
  callSite,
  foldStack,
  interpreterModules,
  leadFrameIndex,
  stackLabel,
  type LabelFrame,
} from './stack-labels.js';

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

describe('core/frames/stack-labels: lead frame and call site', () => {
  // a ctypes call from Python: libffi and _ctypes frames leafward of the Python caller
  const ctypesStack = [
    nat('libffi.so.8.1.2'),
    nat('_ctypes.cpython-312-x86_64-linux-gnu.so', 'ffi_call'),
    py('AdamState.ensure', '/srv/train/model.py', 24),
    py('main', '/srv/train/train.py', 80),
  ];
  it('python-first names a native-leaf stack by its first Python frame; other modes by the leaf', () => {
    expect(leadFrameIndex(ctypesStack, 'python-first')).toBe(2);
    expect(leadFrameIndex(ctypesStack, 'merged')).toBe(0);
    expect(leadFrameIndex(ctypesStack, 'native')).toBe(0);
    expect(leadFrameIndex([nat('libc.so.6', 'malloc')], 'python-first')).toBe(0);
  });
  it('call site: the first Python frame as base-name file:line; two lines are two sites', () => {
    expect(callSite(ctypesStack)).toBe('model.py:24');
    expect(callSite([nat('libffi.so.8.1.2'), py('AdamState.ensure', '/srv/train/model.py', 25)])).toBe('model.py:25');
    // native only: the first frame with a source line (symbolized with DWARF); none without lines
    expect(
      callSite([
        { kind: 'native', module: 'leaky', function: 'make_node', file: '/src/leaky.c', line: 12 },
        { kind: 'native', module: 'leaky', function: 'main', file: '/src/leaky.c', line: 40 },
      ]),
    ).toBe('leaky.c:12');
    expect(callSite([nat('libc.so.6', 'malloc')])).toBeNull();
  });
});
