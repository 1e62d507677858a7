// App state ⇄ session: a round trip through the file format restores the same selection and view; notes on the
// timeline resolve to snapshot indices; opened files are classified by name.
import { describe, expect, it } from 'vitest';
import { parseSession, serializeSession } from '../../../core/notes/validate.ts';
import { createNote } from '../../../core/notes/notes.ts';
import type { ProcessSummary, SourceFile } from './protocol.ts';
import {
  classifyOpened,
  debounce,
  fromSession,
  missingFiles,
  notedFunctions,
  timelineMarks,
  toSession,
  type AppSnapshot,
} from './session-map.ts';

function proc(index: number, key: string, n: number): ProcessSummary {
  return {
    index,
    key,
    pid: 100 + index,
    prefix: key.split('.')[0],
    snapshots: Array.from({ length: n }, (_, i) => ({
      index: i,
      file: `job/${key}.${i + 3}.i${i}.heap`,
      seq: i + 3,
      trigger: 'i',
      liveBytes: i * 10,
      liveObjects: i,
      truncated: false,
      mtimeMs: null,
    })),
    lastLiveBytes: (n - 1) * 10,
    firstLiveBytes: 0,
    maxLiveBytes: (n - 1) * 10,
    slopeBytesPerSnapshot: 10,
    endedWithoutFinalDump: false,
    stackCount: 5,
    hasPythonFrames: false,
    truncatedCount: 0,
  };
}

const procs = [proc(0, 'exact.1', 6), proc(1, 'sampled.2', 4)];
const stack = { kind: 'stack' as const, process: 'exact.1', frames: ['0x10', '0x20'], label: 'make_node' };

function snap(): AppSnapshot {
  return {
    files: ['job/exact.1.3.i0.heap'],
    symbolDirs: ['/sym'],
    process: procs[0],
    base: 1,
    target: 4,
    snapshot: 2,
    tab: 'diff',
    mode: 'native',
    hideAllocator: false,
    search: 'make_node',
    selectedStack: stack,
    diffMode: 'share',
    widthBy: 'delta',
    sample: 'alloc_space',
    filters: [
      { kind: 'focus', re: 'make_(node|record)' },
      { kind: 'hide', re: '^libpython' },
    ],
    unfold: true,
    flame: { order: 'leaf', siblings: 'name', startup: false },
    notes: [createNote(stack, '<img src=x onerror=alert(1)>', '#e4572e', new Date('2026-11-29T10:00:00Z'))],
    readOnly: false,
    source: null,
  };
}

describe('state ⇄ session', () => {
  it('round-trips through the file format', () => {
    const s = toSession(snap(), 'heaplens test');
    const back = parseSession(serializeSession(s, new Date('2026-11-29T11:00:00Z')));
    expect(back.selection).toEqual({
      process: 'exact.1',
      base: { file: 'job/exact.1.4.i1.heap', seq: 4 },
      target: { file: 'job/exact.1.7.i4.heap', seq: 7 },
    });
    expect(back.notes).toEqual(s.notes);
    const v = fromSession(back, procs);
    expect(v).toEqual({
      process: 0,
      base: 1,
      target: 4,
      snapshot: 2,
      tab: 'diff',
      mode: 'native',
      hideAllocator: false,
      search: 'make_node',
      diffMode: 'share',
      widthBy: 'delta',
      sample: 'alloc_space',
      filters: [
        { kind: 'focus', re: 'make_(node|record)' },
        { kind: 'hide', re: '^libpython' },
      ],
      unfold: true,
      flame: { order: 'leaf', siblings: 'name', startup: false },
      selectedStack: stack,
    });
    // a session saved on the Bottom-up tab opens the flame graph leaf first
    const old = fromSession({ ...back, view: { ...back.view, tab: 'inverted', extra: {} } }, procs);
    expect([old.tab, old.flame]).toEqual(['flame', { order: 'leaf', siblings: 'heaviest', startup: true }]);
    // chips a hand-edited session breaks are dropped, not applied
    const bad = {
      ...back,
      view: {
        ...back.view,
        extra: {
          ...back.view.extra,
          filters: '[{"kind":"focus","re":"("},{"kind":"nope","re":"x"},{"kind":"show","re":"ok"}]',
        },
      },
    };
    expect(fromSession(bad, procs).filters).toEqual([{ kind: 'show', re: 'ok' }]);
  });
  it('resolves by seq or base name when the job moved, and tolerates a missing process', () => {
    const s = toSession(snap(), 'x');
    s.selection.process = '/elsewhere/exact.1';
    s.selection.base = { file: '/elsewhere/exact.1.4.i1.heap', seq: null };
    s.selection.target = { file: 'gone', seq: 7 };
    const v = fromSession(s, procs);
    expect([v.process, v.base, v.target]).toEqual([0, 1, 4]);
    s.selection.process = 'nope.9';
    expect(fromSession(s, procs).process).toBeNull();
  });
  it('tells apart the snapshots of one file (a massif run, a PyTorch trace) by their numbers', () => {
    const one = proc(0, 'massif.out.pages', 6);
    one.snapshots.forEach((x) => (x.file = 'massif.out.pages'));
    const s = toSession({ ...snap(), files: ['massif.out.pages'], process: one, selectedStack: null, notes: [] }, 'x');
    const v = fromSession(s, [one]);
    expect([v.base, v.target]).toEqual([1, 4]);
  });
  it('defaults for an empty session', () => {
    const s = toSession({ ...snap(), process: null }, 'x');
    expect(s.selection).toEqual({ process: null, base: null, target: null });
    const v = fromSession({ ...s, view: { ...s.view, tab: 'weird' } }, procs);
    expect(v.tab).toBe('growth');
  });
  it('lists the files a session names that were not opened', () => {
    const s = toSession(snap(), 'x');
    s.files = ['/data/job', '/data/job/exact.1.3.i0.heap', '/data/other.heap'];
    expect(missingFiles(s, ['job/exact.1.3.i0.heap'])).toEqual(['/data/other.heap']);
  });
});

describe('notes in views', () => {
  it('timeline marks: snapshot, span (ordered), diff; other processes and unknown snapshots skipped', () => {
    const t = new Date('2026-11-29T10:00:00Z');
    const ref = (i: number) => ({ file: procs[0].snapshots[i].file, seq: procs[0].snapshots[i].seq });
    const notes = [
      createNote({ kind: 'snapshot', process: 'exact.1', snapshot: ref(2) }, 'a', '#111111', t),
      createNote({ kind: 'span', process: 'exact.1', from: ref(4), to: ref(1) }, 'b', '#222222', t),
      createNote({ kind: 'diff', process: 'exact.1', base: ref(0), target: ref(5) }, 'c', '#333333', t),
      createNote({ kind: 'snapshot', process: 'sampled.2', snapshot: ref(2) }, 'd', '#444444', t),
      createNote({ kind: 'snapshot', process: 'exact.1', snapshot: { file: 'x', seq: 99 } }, 'e', '#555555', t),
      createNote(stack, 'f', '#666666', t),
    ];
    expect(timelineMarks(notes, procs[0]).map((m) => [m.note.text, m.kind, m.from, m.to])).toEqual([
      ['a', 'snapshot', 2, 2],
      ['b', 'span', 1, 4],
      ['c', 'diff', 0, 5],
    ]);
    expect(timelineMarks(notes, null)).toEqual([]);
  });
  it('noted functions of a process (or of all processes)', () => {
    const t = new Date('2026-11-29T10:00:00Z');
    const notes = [
      createNote({ kind: 'frame', process: null, function: 'f1' }, 'x', '#111111', t),
      createNote({ kind: 'frame', process: 'sampled.2', function: 'f2' }, 'y', '#222222', t),
    ];
    expect([...notedFunctions(notes, 'exact.1').keys()]).toEqual(['f1']);
    expect([...notedFunctions(notes, 'sampled.2').keys()]).toEqual(['f1', 'f2']);
  });
  it('classifies opened files by name', () => {
    const f = (path: string): SourceFile => ({ path, size: 1, mtimeMs: null });
    const c = classifyOpened([
      f('a.heaplens.json'),
      f('dir/x.heaplens-session.json'),
      f('r.HTML'),
      f('exact.1.0.i0.heap'),
      f('maps.json'),
    ]);
    expect(c.sessions.map((x) => x.path)).toEqual(['a.heaplens.json', 'dir/x.heaplens-session.json']);
    expect(c.reports.map((x) => x.path)).toEqual(['r.HTML']);
    expect(c.dumps.map((x) => x.path)).toEqual(['exact.1.0.i0.heap', 'maps.json']);
  });
  it('debounce runs once after the last call; flush runs now', async () => {
    let n = 0;
    const d = debounce(() => n++, 10);
    d.call();
    d.call();
    d.call();
    await new Promise((r) => setTimeout(r, 30));
    expect(n).toBe(1);
    d.call();
    d.flush();
    expect(n).toBe(2);
    d.flush();
    expect(n).toBe(2);
  });
});
