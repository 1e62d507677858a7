// Brendan Gregg's folded stacks: one line per distinct stack, `root;…;leaf weight`, root first, as read by
// flamegraph.pl, inferno and speedscope. Inlined functions become frames of their own (outermost first); Python
// frames read `function (file:line)` like py-spy's. Several processes: each stack starts with the process.

import { frameLines, type Frame } from '../frames/describe.js';
import { basename } from '../formats/dump-filename.js';
import { revealControlsInLine } from '../model/display-text.js';
import { processLabel, snapshotSamples, type ExportInput, type SampleOptions } from './samples.js';

export interface FoldedOptions extends SampleOptions {
  /** weight: live bytes (default) or live objects */
  measure?: 'bytes' | 'objects';
}

/**
 * A frame name safe for the format: no ';' (the separator); controls, bidi marks, tabs and newlines shown as
 * <U+XXXX> (the display rule, core/model/display-text.ts), so a terminal or viewer shows what the name holds.
 */
export function foldedName(s: string): string {
  return revealControlsInLine(s.replace(/;/g, ':'));
}

/** Names of one frame, root-most first. */
function names(f: Frame): string[] {
  if (f.kind === 'python') {
    const where = f.file ? ` (${basename(f.file)}${f.line != null ? ':' + f.line : ''})` : '';
    return [foldedName(`${f.function ?? '?'}${where}`)];
  }
  return frameLines(f)
    .map((l) => foldedName(l.function ?? '?'))
    .reverse();
}

export function toFolded(inputs: readonly ExportInput[], options: FoldedOptions = {}): string {
  const measure = options.measure ?? 'bytes';
  const multi = inputs.length > 1;
  const weights = new Map<string, number>();
  const procs = inputs.map((i) => i.proc);
  for (const input of inputs) {
    const prefix = multi ? [foldedName(processLabel(input.proc, procs))] : [];
    for (const s of snapshotSamples(input, options)) {
      const w = measure === 'bytes' ? s.intBytes : s.intObjects;
      if (w === 0) continue;
      const path = [...prefix];
      for (let i = s.frames.length - 1; i >= 0; i--) path.push(...names(s.frames[i]));
      if (path.length === 0) path.push('(no frames)');
      const key = path.join(';');
      weights.set(key, (weights.get(key) ?? 0) + w);
    }
  }
  const lines = [...weights.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([k, w]) => `${k} ${w}`);
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** Reads folded text back: stack (root first) and weight per line. */
export function parseFolded(text: string): { stack: string[]; weight: number }[] {
  const out: { stack: string[]; weight: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    if (sp < 0) throw new Error(`folded line without a weight: ${JSON.stringify(line.slice(0, 80))}`);
    const weight = Number(line.slice(sp + 1));
    if (!Number.isFinite(weight)) throw new Error(`bad weight in ${JSON.stringify(line.slice(0, 80))}`);
    out.push({ stack: line.slice(0, sp).split(';'), weight });
  }
  return out;
}
