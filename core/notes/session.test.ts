// Session schema: round trips, validation of hostile or broken input, newer schemas refused clearly.
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { emptySession, SESSION_SCHEMA, type Session } from './schema.js';
import { parseSession, serializeSession, SessionError, SessionVersionError } from './validate.js';
import {
  addNote,
  createNote,
  describeTarget,
  notesOnSnapshot,
  notesOnStack,
  resolveStack,
  resolveSnapshot,
  snapshotRef,
  stackTarget,
} from './notes.js';

async function sampleSession(): Promise<Session> {
  const job = await loadJob(fixtureFiles('job'));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  const last = p.snapshots.length - 1;
  const s = p.snapshots[last];
  const leak = s.stackIds[[...s.liveBytes].indexOf(20 * 3 * 16384)];
  const t0 = new Date('2026-11-29T10:00:00.000Z');
  let session: Session = {
    ...emptySession('heaplens test'),
    files: ['/data/job'],
    symbols: { dirs: ['/data/symbols'], sysroot: '/data/rootfs', enabled: true },
    selection: { process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, last) },
  };
  session.view = {
    ...session.view,
    tab: 'diff',
    search: 'make_node',
    flameZoom: ['main', 'leak_steady'],
    selectedStack: stackTarget(p, leak),
    extra: { width: 1200, diffMode: 'abs', pinned: true, none: null },
  };
  session = addNote(session, createNote(stackTarget(p, leak, 'make_node'), 'the leak: never freed', '#e4572e', t0));
  session = addNote(
    session,
    createNote({ kind: 'frame', process: null, function: 'make_node' }, 'allocates every node', '#2a9d8f', t0),
  );
  session = addNote(
    session,
    createNote({ kind: 'snapshot', process: p.key, snapshot: snapshotRef(p, 5) }, 'step 5', '#f3a712', t0),
  );
  session = addNote(
    session,
    createNote(
      { kind: 'span', process: p.key, from: snapshotRef(p, 2), to: snapshotRef(p, 8) },
      'warm-up\nsecond line',
      '#29335c',
      t0,
    ),
  );
  session = addNote(
    session,
    createNote(
      { kind: 'diff', process: p.key, base: snapshotRef(p, 0), target: snapshotRef(p, last) },
      '+2.9 MiB',
      '#669bbc',
      t0,
    ),
  );
  return session;
}

describe('session file', () => {
  it('save → reopen equals (every note kind, selection, view state)', async () => {
    const s = await sampleSession();
    const text = serializeSession(s, new Date('2026-11-29T11:00:00.000Z'));
    const back = parseSession(text);
    expect(back).toEqual({ ...s, savedAt: '2026-11-29T11:00:00.000Z' });
    expect(serializeSession(back, new Date('2026-11-29T11:00:00.000Z'))).toBe(text);
    expect(back.notes.map((n) => n.target.kind)).toEqual(['stack', 'frame', 'snapshot', 'span', 'diff']);
  });

  it('references resolve against the loaded dumps: the stack note finds the leak, span notes mark their snapshots', async () => {
    const s = parseSession(serializeSession(await sampleSession()));
    const job = await loadJob(fixtureFiles('job'));
    const p = job.processes.find((x) => x.prefix === 'exact')!;
    const note = s.notes[0];
    if (note.target.kind !== 'stack') throw new Error('expected a stack note');
    const id = resolveStack(p, note.target)!;
    const last = p.snapshots[p.snapshots.length - 1];
    expect(last.liveBytes[[...last.stackIds].indexOf(id)]).toBe(20 * 3 * 16384);
    expect(notesOnStack(s.notes, stackTarget(p, id))).toHaveLength(1);
    expect(
      resolveStack(
        job.processes.find((x) => x.prefix === 'sampled')!,
        note.target,
      ),
    ).toBeNull();
    expect(
      notesOnSnapshot(s.notes, p, 5)
        .map((n) => n.target.kind)
        .sort(),
    ).toEqual(['snapshot', 'span']);
    expect(notesOnSnapshot(s.notes, p, 9).map((n) => n.target.kind)).toEqual([]);
    expect(notesOnSnapshot(s.notes, p, 0).map((n) => n.target.kind)).toEqual(['diff']);
    expect(resolveSnapshot(p, { file: 'moved/elsewhere.heap', seq: p.snapshots[3].seq })).toBe(3);
    expect(describeTarget(s.notes[3].target)).toMatch(/^snapshots #\d+–#\d+ of /);
  });

  it('a newer schema is refused with a message naming both versions', async () => {
    const doc = JSON.parse(serializeSession(await sampleSession()));
    doc.schema = SESSION_SCHEMA + 1;
    doc.notes.push({ kind: 'something new' });
    expect(() => parseSession(JSON.stringify(doc))).toThrow(SessionVersionError);
    expect(() => parseSession(JSON.stringify(doc))).toThrow(
      `written by a newer heaplens (schema ${SESSION_SCHEMA + 1}); this one reads up to ${SESSION_SCHEMA}`,
    );
  });

  it('rejects malformed and hostile input with the field named', async () => {
    const good = JSON.parse(serializeSession(await sampleSession()));
    const bad = (edit: (d: typeof good) => void): string => {
      const d = structuredClone(good);
      edit(d);
      try {
        parseSession(JSON.stringify(d));
      } catch (e) {
        expect(e).toBeInstanceOf(SessionError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(() => parseSession('not json')).toThrow(/not a session file/);
    expect(() => parseSession('[]')).toThrow(/session: expected an object/);
    expect(bad((d) => (d.format = 'other'))).toMatch(/^format:/);
    expect(bad((d) => (d.notes[0].color = 'red; background:url(x)'))).toMatch(/^notes\[0\]\.color:/);
    expect(bad((d) => (d.notes[1].target.kind = 'script'))).toMatch(/^notes\[1\]\.target\.kind:/);
    expect(bad((d) => (d.notes[0].target.frames[0] = '<img src=x>'))).toMatch(/^notes\[0\]\.target\.frames\[0\]:/);
    expect(bad((d) => (d.notes[2].text = 'x'.repeat(100_001)))).toMatch(/^notes\[2\]\.text: longer than/);
    expect(bad((d) => (d.notes[2].createdAt = 'yesterday'))).toMatch(/^notes\[2\]\.createdAt:/);
    expect(bad((d) => (d.notes[3].id = d.notes[2].id))).toMatch(/^notes\[3\]\.id: duplicate/);
    expect(bad((d) => (d.view.extra.obj = { a: 1 }))).toMatch(/^view\.extra\.obj:/);
    expect(bad((d) => (d.selection.base = { file: 5 }))).toMatch(/^selection\.base\.file:/);
    expect(bad((d) => (d.schema = 1.5))).toMatch(/^schema:/);
    // a note's text may hold anything (it is shown as text, never as markup)
    const s = parseSession(
      JSON.stringify({ ...good, notes: [{ ...good.notes[0], text: '<script>alert(1)</script>\u0000' }] }),
    );
    expect(s.notes[0].text).toBe('<script>alert(1)</script>\u0000');
    // unknown fields are dropped, not kept
    expect(Object.keys(parseSession(JSON.stringify({ ...good, __proto__x: 1, extraField: 2 })))).not.toContain(
      'extraField',
    );
  });

  it('a minimal schema-1 file (only the required fields) reads with defaults', () => {
    const s = parseSession(JSON.stringify({ format: 'heaplens-session', schema: 1, savedAt: '2026-11-29T10:00:00Z' }));
    expect(s.notes).toEqual([]);
    expect(s.view.stackMode).toBe('python-first');
    expect(s.readOnly).toBe(false);
  });
});
