// Notes: the loaded job's notes and the note editor, where notes are written from, how the views show them
// (timeline marks, ✎ badges on rows, frames and flame nodes, the stack panel's notes) and the Notes panel's "go to
// what this note is on". Sessions save and restore them (session.svelte.ts); a new job clears them and a
// cancelled partial load puts them back (job.svelte.ts).

import type { Note, NoteTarget, StackTarget } from '../../../core/notes/schema.ts';
import { createNote } from '../../../core/notes/notes.ts';
import { notedFunctions, notesOnFunction, refOf, resolveRef, timelineMarks } from '../lib/session-map.ts';
import type { FlameData } from '../lib/protocol.ts';
import type { Shell } from './shell.svelte.ts';
import type { Selection } from './selection.svelte.ts';

export class Notes {
  list = $state.raw<Note[]>([]);
  /** stack notes resolved to stacks of the loaded job: note id → process index and stack id */
  noteStacks = $state.raw<Map<string, { proc: number; stackId: number }>>(new Map());
  /** the note editor: a target being annotated, or a note being edited */
  editing = $state.raw<{ target: NoteTarget; note: Note | null } | null>(null);

  constructor(
    private readonly shell: Shell,
    private readonly sel: Selection,
  ) {}

  // -- editing ----------------------------------------------------------------------------------
  startNote(target: NoteTarget): void {
    if (this.shell.job.readOnly) {
      this.shell.status = 'Read-only: notes cannot be added to a report.';
      return;
    }
    this.editing = { target, note: null };
  }

  editExisting(note: Note): void {
    this.editing = { target: note.target, note };
  }

  commitNote(text: string, color: string): void {
    const e = this.editing;
    this.editing = null;
    if (!e || this.shell.job.readOnly) return;
    if (e.note) {
      const id = e.note.id;
      const now = new Date().toISOString();
      this.list = this.list.map((n) => (n.id === id ? { ...n, text, color, updatedAt: now } : n));
    } else this.list = [...this.list, createNote(e.target, text, color)];
  }

  deleteNote(id: string): void {
    if (this.shell.job.readOnly) return;
    this.list = this.list.filter((n) => n.id !== id);
    if (this.editing?.note?.id === id) this.editing = null;
  }

  // -- as the views show them -------------------------------------------------------------------
  readonly marks = $derived.by(() => timelineMarks(this.list, this.sel.focused));

  /** stack id → note colour, for the focused process */
  readonly notedStacks = $derived.by(() => {
    const m = new Map<number, string>();
    for (const n of this.list) {
      const r = this.noteStacks.get(n.id);
      if (r && r.proc === this.sel.procIndex && !m.has(r.stackId)) m.set(r.stackId, n.color);
    }
    return m;
  });

  readonly notedFns = $derived.by(() => notedFunctions(this.list, this.sel.focused?.key ?? null));

  /** notes whose target is not in the loaded job */
  readonly unresolved = $derived.by(() => {
    const out = new Set<string>();
    const procs = this.shell.job.summary?.processes ?? [];
    for (const n of this.list) {
      const t = n.target;
      if (t.kind === 'stack') {
        if (!this.noteStacks.has(n.id)) out.add(n.id);
      } else if (t.kind !== 'frame') {
        const p = procs.find((x) => x.key === t.process);
        const refs = t.kind === 'snapshot' ? [t.snapshot] : t.kind === 'span' ? [t.from, t.to] : [t.base, t.target];
        if (!p || refs.some((r) => resolveRef(p, r) < 0)) out.add(n.id);
      }
    }
    return out;
  });

  /** notes shown in the stack panel: on its stack, or on its function */
  readonly panelNotes = $derived.by(() => {
    const pn = this.sel.panel;
    if (!pn) return [];
    if (pn.stackId !== undefined)
      return this.list.filter((n) => {
        const r = this.noteStacks.get(n.id);
        return r !== undefined && r.proc === this.sel.procIndex && r.stackId === pn.stackId;
      });
    if (pn.fn) return notesOnFunction(this.list, this.sel.focused?.key ?? null, pn.fn.name);
    return [];
  });

  /** flame nodes with notes: nodes of noted functions, and nodes where noted stacks end */
  flameNotes(data: FlameData | null): Map<number, { color: string; texts: string[] }> {
    const out = new Map<number, { color: string; texts: string[] }>();
    if (!data || this.list.length === 0) return out;
    const key = this.sel.focused?.key ?? null;
    const fnKeys = new Map<number, Note[]>();
    for (const [k, f] of Object.entries(data.frames)) {
      const ns = notesOnFunction(this.list, key, f.function ?? f.label);
      if (ns.length > 0) fnKeys.set(Number(k), ns);
    }
    const add = (node: number, ns: Note[]): void => {
      const e = out.get(node) ?? { color: ns[0].color, texts: [] };
      e.texts.push(...ns.map((n) => n.text));
      out.set(node, e);
    };
    if (fnKeys.size > 0)
      for (let i = 1; i < data.size; i++) {
        const ns = fnKeys.get(data.key[i]);
        if (ns) add(i, ns);
      }
    for (const n of this.list) {
      const r = this.noteStacks.get(n.id);
      if (!r || r.proc !== this.sel.procIndex) continue;
      const node = data.stackNodes[r.stackId];
      if (node !== undefined && node > 0) add(node, [n]);
    }
    return out;
  }

  // -- where notes are written from -------------------------------------------------------------
  async onStack(stackId: number): Promise<void> {
    const sel = this.sel;
    const p = sel.procIndex;
    if (p < 0 || this.shell.job.readOnly) return;
    let t: StackTarget | null = null;
    if (sel.selectedStack === stackId && sel.selectedStackTarget) t = sel.selectedStackTarget;
    else
      t = (await this.shell.client.request({ type: 'stackTargets', proc: p, stackIds: [stackId] })).targets[0] ?? null;
    if (t) this.startNote(t);
  }
  onFunction(name: string, module: string | null): void {
    this.startNote({ kind: 'frame', process: this.sel.focused?.key ?? null, function: name, module });
  }
  onSnapshot(i: number): void {
    const focused = this.sel.focused;
    const r = focused ? refOf(focused, i) : null;
    if (focused && r) this.startNote({ kind: 'snapshot', process: focused.key, snapshot: r });
  }
  onSpan(a: number, b: number): void {
    const focused = this.sel.focused;
    const from = focused ? refOf(focused, a) : null;
    const to = focused ? refOf(focused, b) : null;
    if (focused && from && to) this.startNote({ kind: 'span', process: focused.key, from, to });
  }
  onDiff(): void {
    const sel = this.sel;
    const focused = sel.focused;
    const base = focused ? refOf(focused, sel.base) : null;
    const target = focused ? refOf(focused, sel.target) : null;
    if (focused && base && target) this.startNote({ kind: 'diff', process: focused.key, base, target });
  }

  /** Notes panel → the view of what the note is on. */
  open(n: Note): void {
    const sel = this.sel;
    const t: NoteTarget = n.target;
    const procs = this.shell.job.summary?.processes ?? [];
    if (t.kind === 'frame') {
      sel.search = t.function;
      if (sel.tab === 'growth') sel.tab = 'diff';
      return;
    }
    if (t.kind === 'stack') {
      const r = this.noteStacks.get(n.id);
      if (!r) {
        this.shell.status = `The stack of this note is not in the loaded dumps (${t.label ?? t.frames[0] ?? ''}).`;
        return;
      }
      if (r.proc !== sel.procIndex) sel.focus(r.proc, false);
      sel.tab = 'growth';
      sel.selectStack(r.stackId);
      requestAnimationFrame(() =>
        document
          .querySelector(`[data-testid=growth-row][data-stack="${r.stackId}"]`)
          ?.scrollIntoView({ block: 'nearest' }),
      );
      return;
    }
    const p = procs.find((x) => x.key === t.process);
    if (!p) {
      this.shell.status = `The process of this note (${t.process}) is not loaded.`;
      return;
    }
    if (p.index !== sel.procIndex) sel.focus(p.index, false);
    if (t.kind === 'snapshot') {
      const i = resolveRef(p, t.snapshot);
      if (i >= 0) {
        sel.snapshot = i;
        sel.tab = 'flame';
      }
    } else if (!this.shell.job.readOnly) {
      const a = resolveRef(p, t.kind === 'span' ? t.from : t.base);
      const b = resolveRef(p, t.kind === 'span' ? t.to : t.target);
      if (a >= 0 && b >= 0) {
        sel.base = a;
        sel.target = b;
        sel.tab = 'diff';
      }
    }
  }
}
