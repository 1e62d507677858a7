import { describe, expect, it } from 'vitest';
import { frameLocation, stackText } from './stack-text.ts';
import type { FrameInfo } from './protocol.ts';

const frame = (o: Partial<FrameInfo>): FrameInfo =>
  ({
    key: 0,
    label: o.function ?? '?',
    function: null,
    file: null,
    line: null,
    module: null,
    modulePath: null,
    offset: null,
    address: '0x0',
    inlined: false,
    kind: 'native',
    role: null,
    group: 'program',
    binary: null,
    ...o,
  }) as FrameInfo;

// the watchdog job's leak as python-first shows it, leaf first: a Python frame, the interpreter's folded run,
// Python callers, then libc
const frames = [
  frame({ function: 'Trajectories.keep', file: '/w/launch.py', line: 59, kind: 'python' }),
  frame({ function: '_PyEval_EvalFrameDefault', kind: 'folded', module: 'libpython3.12.so' }),
  frame({ function: 'worker', file: '/w/launch.py', line: 82, kind: 'python' }),
  frame({ label: 'libc.so.6+0x2724a', module: 'libc.so.6', offset: '0x2724a' }),
  frame({ function: 'PyObject_Malloc', file: 'Objects/obmalloc.c', line: 812, module: 'python3.12', offset: '0x1f0' }),
];

describe('a stack as text', () => {
  it('Python frames first, then native ones, each with its file:line', () => {
    expect(stackText('Trajectories.keep (launch.py:59)', frames)).toBe(
      [
        'Trajectories.keep (launch.py:59)',
        'Python frames (leaf first):',
        '  Trajectories.keep  /w/launch.py:59',
        '  worker  /w/launch.py:82',
        'Native (leaf first):',
        '  libc.so.6+0x2724a',
        '  PyObject_Malloc  Objects/obmalloc.c:812  [python3.12+0x1f0]',
        '',
      ].join('\n'),
    );
  });

  it('a native-only stack is just its frames', () => {
    expect(stackText('make_node', [frame({ function: 'make_node', file: 'leaky.c', line: 14 })])).toBe(
      'make_node\nFrames (leaf first):\n  make_node  leaky.c:14\n',
    );
  });

  it("a frame's place is path:line, or none without a file", () => {
    expect(frameLocation({ file: '/w/launch.py', line: 59 })).toBe('/w/launch.py:59');
    expect(frameLocation({ file: '/w/launch.py', line: null })).toBe('/w/launch.py');
    expect(frameLocation({ file: null, line: 3 })).toBeNull();
  });
});
