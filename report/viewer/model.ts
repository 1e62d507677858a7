// The viewer's data helpers: labels, flame-graph trees from the report's stacks, notes per item. DOM-free, so
// the tests run them in Node.

import type { Note, StackTarget } from '../../session/schema.js';
import type { ReportData, ReportFrame, ReportProcess, ReportStack } from '../data.js';
import { formatBytes } from '../../analysis/units.js';

export function str(data: ReportData, id: number): string {
  return id > 0 ? (data.strings[id] ?? '') : '';
}

export function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}

/** Name of one line of a frame: its function, else module+offset, else the address. */
export function lineName(data: ReportData, f: ReportFrame, line: ReportFrame['lines'][number]): string {
  const fn = str(data, line[0]);
  if (fn) return fn;
  const mod = f.module >= 0 ? str(data, f.module) : '';
  return mod && f.moduleOffset ? `${mod}+${f.moduleOffset}` : f.address;
}

/** A frame as one line of text: "fn (file:line)" (outermost function), or module+offset. */
export function frameText(data: ReportData, f: ReportFrame): string {
  const outer = f.lines[f.lines.length - 1];
  const name = lineName(data, f, outer);
  const file = str(data, outer[1]);
  const where = file ? ` (${basename(file)}${outer[2] ? ':' + outer[2] : ''})` : '';
  const inl = f.lines.length > 1 ? ` [+${f.lines.length - 1} inlined]` : '';
  return `${f.kind === 'python' ? '[py] ' : ''}${name}${where}${inl}`;
}

/** The leaf's function: what a table row shows. Markers of folded frames are skipped: the first surviving frame leads. */
export function stackTitle(data: ReportData, p: ReportProcess, s: ReportStack): string {
  const shown = s.frames.filter((i) => p.frames[i].kind !== 'folded');
  const names = shown.slice(0, 3).map((i) => {
    const f = p.frames[i];
    return lineName(data, f, f.lines[f.lines.length - 1]);
  });
  return names.length ? names.join(' ← ') + (shown.length > 3 ? ' ← …' : '') : '(no frames)';
}

export interface FlameNode {
  name: string;
  /** first file:line seen for this node, for the tooltip */
  where: string;
  total: number;
  base: number;
  children: FlameNode[];
  depth: number;
  /** indices into p.stacks of the stacks through this node */
  stacks: number[];
}

/** Root → leaf tree of the included stacks, merged by name; "(other stacks)" holds the rest. */
export function flameTree(data: ReportData, p: ReportProcess): FlameNode {
  const root: FlameNode = { name: 'all', where: '', total: 0, base: 0, children: [], depth: 0, stacks: [] };
  const index = new Map<FlameNode, Map<string, FlameNode>>();
  const child = (parent: FlameNode, name: string, where: string): FlameNode => {
    let m = index.get(parent);
    if (!m) index.set(parent, (m = new Map()));
    let c = m.get(name);
    if (!c) {
      c = { name, where, total: 0, base: 0, children: [], depth: parent.depth + 1, stacks: [] };
      m.set(name, c);
      parent.children.push(c);
    }
    return c;
  };
  const add = (node: FlameNode, s: { targetBytes: number; baseBytes: number }, si: number): void => {
    node.total += s.targetBytes;
    node.base += s.baseBytes;
    if (si >= 0) node.stacks.push(si);
  };
  p.stacks.forEach((s, si) => {
    let node = root;
    add(root, s, si);
    for (let k = s.frames.length - 1; k >= 0; k--) {
      const f = p.frames[s.frames[k]];
      for (let l = f.lines.length - 1; l >= 0; l--) {
        const line = f.lines[l];
        const file = str(data, line[1]);
        node = child(node, (f.kind === 'python' ? '[py] ' : '') + lineName(data, f, line), file ? `${file}${line[2] ? ':' + line[2] : ''}` : f.module >= 0 ? `${str(data, f.module)}+${f.moduleOffset ?? ''}` : f.address);
        add(node, s, si);
      }
    }
  });
  if (p.other.stacks > 0) add(child(root, `(${p.other.stacks} other stacks)`, ''), p.other, -1);
  root.total += p.other.targetBytes;
  root.base += p.other.baseBytes;
  const sort = (n: FlameNode): void => {
    n.children.sort((a, b) => Math.max(b.total, b.base) - Math.max(a.total, a.base) || (a.name < b.name ? -1 : 1));
    n.children.forEach(sort);
  };
  sort(root);
  return root;
}

export function sameStack(t: StackTarget, processKey: string, s: ReportStack): boolean {
  return t.process === processKey && t.frames.length === s.addresses.length && t.frames.every((a, i) => a === s.addresses[i]);
}

export function notesOnStack(notes: readonly Note[], p: ReportProcess, s: ReportStack): Note[] {
  return notes.filter((n) => n.target.kind === 'stack' && sameStack(n.target, p.key, s));
}

export function notesOnName(notes: readonly Note[], p: ReportProcess, name: string): Note[] {
  return notes.filter((n) => n.target.kind === 'frame' && n.target.function === name && (n.target.process === null || n.target.process === p.key));
}

export function snapshotIndex(p: ReportProcess, ref: { file: string; seq: number | null }): number {
  const i = p.snapshots.findIndex((s) => s.file === ref.file);
  return i >= 0 ? i : ref.seq === null ? -1 : p.snapshots.findIndex((s) => s.seq === ref.seq);
}

export { formatBytes };

export function formatSigned(n: number): string {
  return formatBytes(n, true);
}
