// A flame tree's start-up fold and sibling order (issue 22 item 8): each stack's root-side start-up frames
// (core/frames/startup.ts) become one marker, and when every stack passes through one marker it shares the
// root's row (call-tree.ts mergeOnlyChildIntoRoot), so the program's frames start on the second row. The marker
// names the frames it folded, those of the heaviest stack through it, for the row's label and its tooltip.

import type { FrameCatalog, FrameInfo } from '../frames/catalog.js';
import { foldStartupKeys, startupRun, type StartupKind } from '../frames/startup.js';
import { mergeOnlyChildIntoRoot, type CallTree } from '../stats/call-tree.js';

export interface StartupFold {
  key: number;
  kind: StartupKind;
  /** the folded frames' labels of the heaviest stack through the marker, root first */
  frames: string[];
  /** the marker shares the root's row */
  inRoot: boolean;
}

type Catalog = Pick<FrameCatalog, 'frames' | 'startupKey' | 'startupKindOf'>;

/** Folds stacks one by one (`fold`), then arranges the tree built from them (`finish`). */
export class StartupFolder {
  private readonly heaviest = new Map<StartupKind, { weight: number; keys: Int32Array }>();

  constructor(private readonly table: Catalog) {}

  /** A stack's keys (leaf first) with its start-up run folded; `weight` picks the run the marker names. */
  fold(keys: Int32Array, weight: number): Int32Array {
    const run = startupRun(keys, this.table.startupKindOf);
    if (!run) return keys;
    const best = this.heaviest.get(run.kind);
    if (!best || Math.abs(weight) > best.weight)
      this.heaviest.set(run.kind, { weight: Math.abs(weight), keys: keys.subarray(keys.length - run.frames) });
    return foldStartupKeys(keys, this.table.startupKindOf, (k) => this.table.startupKey(k));
  }

  /** The tree with a lone root-side marker merged into the root, and the folds it shows. */
  finish(tree: CallTree): { tree: CallTree; folds: StartupFold[] } {
    const markers = new Map<number, StartupKind>();
    for (const kind of this.heaviest.keys()) markers.set(this.table.startupKey(kind), kind);
    const inRoot = tree.size > 1 && tree.end[1] === tree.size && markers.has(tree.key[1]);
    const out = inRoot ? mergeOnlyChildIntoRoot(tree) : tree;
    const folds: StartupFold[] = [];
    for (const [key, kind] of markers) {
      const run = this.heaviest.get(kind);
      const frames = run ? Array.from(run.keys, (k) => this.table.frames[k].label).reverse() : [];
      folds.push({ key, kind, frames, inRoot: inRoot && tree.key[1] === key });
    }
    return { tree: out, folds };
  }
}

/** Siblings by name (flamegraph.pl's and the Firefox Profiler's order: the same frame stays put across dumps). */
export function compareByName(frames: readonly FrameInfo[]): (a: number, b: number) => number {
  return (a, b) => {
    const la = frames[a]?.label ?? '';
    const lb = frames[b]?.label ?? '';
    return la < lb ? -1 : la > lb ? 1 : a - b;
  };
}
