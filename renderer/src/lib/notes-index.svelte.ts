// Notes as the views show them (timeline marks, ✎ badges on rows, frames and flame nodes, the stack panel's
// notes), where notes are written from, and the Notes panel's "go to what this note is on".

import type { Note, NoteTarget, StackTarget } from '../../../core/notes/schema.ts';
import { notedFunctions, notesOnFunction, refOf, resolveRef, timelineMarks } from './session-map.ts';
import type { FlameData } from './protocol.ts';
import type { AppState } from './state.svelte.ts';

/** What the index reads of the window's Ui (ui.svelte.ts owns an index; naming Ui here would be an import cycle). */
export interface NoteHost {
  readonly app: AppState;
  readonly procIndex: number;
  selectStack(stackId: number): void;
}

export class NoteIndex {
  constructor(private readonly ui: NoteHost) {}

  readonly marks = $derived.by(() => timelineMarks(this.ui.app.notes, this.ui.app.focused));

  /** stack id → note colour, for the focused process */
  readonly notedStacks = $derived.by(() => {
    const app = this.ui.app;
    const m = new Map<number, string>();
    for (const n of app.notes) {
      const r = app.noteStacks.get(n.id);
      if (r && r.proc === this.ui.procIndex && !m.has(r.stackId)) m.set(r.stackId, n.color);
    }
    return m;
  });

  readonly notedFns = $derived.by(() => notedFunctions(this.ui.app.notes, this.ui.app.focused?.key ?? null));

  /** notes whose target is not in the loaded job */
  readonly unresolved = $derived.by(() => {
    const app = this.ui.app;
    const out = new Set<string>();
    const procs = app.summary?.processes ?? [];
    for (const n of app.notes) {
      const t = n.target;
      if (t.kind === 'stack') {
        if (!app.noteStacks.has(n.id)) out.add(n.id);
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
    const app = this.ui.app;
    const pn = app.panel;
    if (!pn) return [];
    if (pn.stackId !== undefined)
      return app.notes.filter((n) => {
        const r = app.noteStacks.get(n.id);
        return r !== undefined && r.proc === this.ui.procIndex && r.stackId === pn.stackId;
      });
    if (pn.fn) return notesOnFunction(app.notes, app.focused?.key ?? null, pn.fn.name);
    return [];
  });

  /** flame nodes with notes: nodes of noted functions, and nodes where noted stacks end */
  flameNotes(data: FlameData | null): Map<number, { color: string; texts: string[] }> {
    const app = this.ui.app;
    const out = new Map<number, { color: string; texts: string[] }>();
    if (!data || app.notes.length === 0) return out;
    const key = app.focused?.key ?? null;
    const fnKeys = new Map<number, Note[]>();
    for (const [k, f] of Object.entries(data.frames)) {
      const ns = notesOnFunction(app.notes, key, f.function ?? f.label);
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
    for (const n of app.notes) {
      const r = app.noteStacks.get(n.id);
      if (!r || r.proc !== this.ui.procIndex) continue;
      const node = data.stackNodes[r.stackId];
      if (node !== undefined && node > 0) add(node, [n]);
    }
    return out;
  }

  // -- writing notes ----------------------------------------------------------------------------
  async onStack(stackId: number): Promise<void> {
    const app = this.ui.app;
    const p = this.ui.procIndex;
    if (p < 0 || app.readOnly) return;
    let t: StackTarget | null = null;
    if (app.selectedStack === stackId && app.selectedStackTarget) t = app.selectedStackTarget;
    else t = (await app.client.request({ type: 'stackTargets', proc: p, stackIds: [stackId] })).targets[0] ?? null;
    if (t) app.startNote(t);
  }
  onFunction(name: string, module: string | null): void {
    this.ui.app.startNote({ kind: 'frame', process: this.ui.app.focused?.key ?? null, function: name, module });
  }
  onSnapshot(i: number): void {
    const focused = this.ui.app.focused;
    const r = focused ? refOf(focused, i) : null;
    if (focused && r) this.ui.app.startNote({ kind: 'snapshot', process: focused.key, snapshot: r });
  }
  onSpan(a: number, b: number): void {
    const focused = this.ui.app.focused;
    const from = focused ? refOf(focused, a) : null;
    const to = focused ? refOf(focused, b) : null;
    if (focused && from && to) this.ui.app.startNote({ kind: 'span', process: focused.key, from, to });
  }
  onDiff(): void {
    const app = this.ui.app;
    const focused = app.focused;
    const base = focused ? refOf(focused, app.base) : null;
    const target = focused ? refOf(focused, app.target) : null;
    if (focused && base && target) app.startNote({ kind: 'diff', process: focused.key, base, target });
  }

  /** Notes panel → the view of what the note is on. */
  open(n: Note): void {
    const app = this.ui.app;
    const t: NoteTarget = n.target;
    const procs = app.summary?.processes ?? [];
    if (t.kind === 'frame') {
      app.search = t.function;
      if (app.tab === 'growth') app.tab = 'diff';
      return;
    }
    if (t.kind === 'stack') {
      const r = app.noteStacks.get(n.id);
      if (!r) {
        app.status = `The stack of this note is not in the loaded dumps (${t.label ?? t.frames[0] ?? ''}).`;
        return;
      }
      if (r.proc !== this.ui.procIndex) app.focus(r.proc, false);
      app.tab = 'growth';
      this.ui.selectStack(r.stackId);
      requestAnimationFrame(() =>
        document
          .querySelector(`[data-testid=growth-row][data-stack="${r.stackId}"]`)
          ?.scrollIntoView({ block: 'nearest' }),
      );
      return;
    }
    const p = procs.find((x) => x.key === t.process);
    if (!p) {
      app.status = `The process of this note (${t.process}) is not loaded.`;
      return;
    }
    if (p.index !== this.ui.procIndex) app.focus(p.index, false);
    if (t.kind === 'snapshot') {
      const i = resolveRef(p, t.snapshot);
      if (i >= 0) {
        app.snapshot = i;
        app.tab = 'flame';
      }
    } else if (!app.readOnly) {
      const a = resolveRef(p, t.kind === 'span' ? t.from : t.base);
      const b = resolveRef(p, t.kind === 'span' ? t.to : t.target);
      if (a >= 0 && b >= 0) {
        app.base = a;
        app.target = b;
        app.tab = 'diff';
      }
    }
  }
}
