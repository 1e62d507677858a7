// Notes: creating and editing them, and finding the ones that belong to what a view shows.

import type { ProcessSeries } from '../model/model.js';
import type { Note, NoteTarget, Session, SnapshotRef, StackTarget } from './schema.js';

export const NOTE_COLORS = ['#e4572e', '#f3a712', '#29335c', '#669bbc', '#2a9d8f', '#8e44ad'] as const;

let counter = 0;

/** A new note; its id is made of the time, a counter and random bits (unique within a session). */
export function createNote(
  target: NoteTarget,
  text: string,
  color: string = NOTE_COLORS[0],
  now: Date = new Date(),
): Note {
  counter = (counter + 1) % 1e6;
  const rnd = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
  return {
    id: `n${now.getTime().toString(36)}-${counter.toString(36)}-${rnd}`,
    target,
    text,
    color,
    createdAt: now.toISOString(),
  };
}

export function addNote(session: Session, note: Note): Session {
  if (session.readOnly) throw new Error('this session is read-only (opened from a report)');
  return { ...session, notes: [...session.notes, note] };
}

export function editNote(
  session: Session,
  id: string,
  change: { text?: string; color?: string },
  now: Date = new Date(),
): Session {
  if (session.readOnly) throw new Error('this session is read-only (opened from a report)');
  return {
    ...session,
    notes: session.notes.map((n) => (n.id === id ? { ...n, ...change, updatedAt: now.toISOString() } : n)),
  };
}

export function removeNote(session: Session, id: string): Session {
  if (session.readOnly) throw new Error('this session is read-only (opened from a report)');
  return { ...session, notes: session.notes.filter((n) => n.id !== id) };
}

/** A stack as a note target: its addresses, leaf first. */
export function stackTarget(proc: ProcessSeries, stackId: number, label?: string): StackTarget {
  const { offsets, frames } = proc.stacks;
  const t: StackTarget = {
    kind: 'stack',
    process: proc.key,
    frames: Array.from(frames.subarray(offsets[stackId], offsets[stackId + 1]), (a) => proc.addresses.hex[a]),
  };
  if (label !== undefined) t.label = label;
  return t;
}

/** The stack a target points at in this process, or null (another process, or the stack is not in these dumps). */
export function resolveStack(proc: ProcessSeries, t: StackTarget): number | null {
  if (t.process !== proc.key) return null;
  const ids: number[] = [];
  for (const hex of t.frames) {
    const id = proc.addresses.index.get(hex);
    if (id === undefined) return null;
    ids.push(id);
  }
  const { offsets, frames, count } = proc.stacks;
  for (let s = 0; s < count; s++) {
    if (offsets[s + 1] - offsets[s] !== ids.length) continue;
    let same = true;
    for (let k = 0; k < ids.length && same; k++) same = frames[offsets[s] + k] === ids[k];
    if (same) return s;
  }
  return null;
}

/** Index of the snapshot a reference names (by file and sequence number, by file, else by sequence number), or -1. */
export function resolveSnapshot(proc: ProcessSeries, ref: SnapshotRef): number {
  // the snapshots of one massif file or one PyTorch trace share their file: their numbers tell them apart
  const both = proc.snapshots.findIndex((s) => s.file === ref.file && s.seq === ref.seq);
  if (both >= 0) return both;
  const byFile = proc.snapshots.findIndex((s) => s.file === ref.file);
  if (byFile >= 0) return byFile;
  return ref.seq === null ? -1 : proc.snapshots.findIndex((s) => s.seq === ref.seq);
}

export function snapshotRef(proc: ProcessSeries, index: number): SnapshotRef {
  const s = proc.snapshots[index];
  return { file: s.file, seq: s.seq };
}

function sameStack(a: StackTarget, b: StackTarget): boolean {
  return a.process === b.process && a.frames.length === b.frames.length && a.frames.every((f, i) => f === b.frames[i]);
}

/** Notes on this stack. */
export function notesOnStack(notes: readonly Note[], t: StackTarget): Note[] {
  return notes.filter((n) => n.target.kind === 'stack' && sameStack(n.target, t));
}

/** Notes on this function (in this process, or on all processes). */
export function notesOnFunction(notes: readonly Note[], process: string, fn: string): Note[] {
  return notes.filter(
    (n) =>
      n.target.kind === 'frame' &&
      n.target.function === fn &&
      (n.target.process === null || n.target.process === process),
  );
}

/** Notes on a snapshot, a span containing it, or a diff with it as base or target (timeline markers). */
export function notesOnSnapshot(notes: readonly Note[], proc: ProcessSeries, index: number): Note[] {
  return notes.filter((n) => {
    const t = n.target;
    if (t.kind === 'frame' || t.kind === 'stack' || t.process !== proc.key) return false;
    if (t.kind === 'snapshot') return resolveSnapshot(proc, t.snapshot) === index;
    if (t.kind === 'span') {
      const a = resolveSnapshot(proc, t.from);
      const b = resolveSnapshot(proc, t.to);
      return a >= 0 && b >= 0 && index >= Math.min(a, b) && index <= Math.max(a, b);
    }
    return resolveSnapshot(proc, t.base) === index || resolveSnapshot(proc, t.target) === index;
  });
}

/** One line describing where a note points, for notes panels and reports. */
export function describeTarget(t: NoteTarget): string {
  const snap = (r: SnapshotRef): string => (r.seq !== null ? `#${r.seq}` : r.file.slice(r.file.lastIndexOf('/') + 1));
  switch (t.kind) {
    case 'stack':
      return `stack ${t.label ?? t.frames[0] ?? '(empty)'} in ${t.process}`;
    case 'frame':
      return `function ${t.function}${t.process ? ` in ${t.process}` : ''}`;
    case 'snapshot':
      return `snapshot ${snap(t.snapshot)} of ${t.process}`;
    case 'span':
      return `snapshots ${snap(t.from)}–${snap(t.to)} of ${t.process}`;
    case 'diff':
      return `diff ${snap(t.base)} → ${snap(t.target)} of ${t.process}`;
  }
}
