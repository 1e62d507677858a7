// speedscope's file format (https://www.speedscope.app/file-format-schema.json, src/lib/file-format-spec.ts in
// jlfwong/speedscope): one "sampled" profile per process, unit bytes, each sample a stack of indices into the
// shared frame list, root first, weighted by its live bytes; startValue 0, endValue the total.

import { frameLines, type Frame } from '../frames/describe.js';
import { basename } from '../formats/dump-filename.js';
import { revealControlsInLine } from '../model/display-text.js';
import { processLabel, snapshotSamples, type ExportInput, type SampleOptions } from './samples.js';

export const SPEEDSCOPE_SCHEMA = 'https://www.speedscope.app/file-format-schema.json';

export interface SpeedscopeFrame {
  name: string;
  file?: string;
  line?: number;
}

export interface SpeedscopeSampledProfile {
  type: 'sampled';
  name: string;
  unit: 'bytes' | 'none';
  startValue: number;
  endValue: number;
  samples: number[][];
  weights: number[];
}

export interface SpeedscopeFile {
  $schema: typeof SPEEDSCOPE_SCHEMA;
  version?: string;
  shared: { frames: SpeedscopeFrame[] };
  profiles: SpeedscopeSampledProfile[];
  name?: string;
  activeProfileIndex?: number;
  exporter?: string;
}

export interface SpeedscopeOptions extends SampleOptions {
  name?: string;
  /** weights: live bytes (default, unit bytes) or live objects (unit none) */
  measure?: 'bytes' | 'objects';
}

export function toSpeedscope(inputs: readonly ExportInput[], options: SpeedscopeOptions = {}): SpeedscopeFile {
  const measure = options.measure ?? 'bytes';
  const frames: SpeedscopeFrame[] = [];
  const frameIndex = new Map<string, number>();
  const frameOf = (name: string, file: string | null, line: number | null): number => {
    const key = `${name}\u0000${file ?? ''}\u0000${line ?? ''}`;
    let i = frameIndex.get(key);
    if (i === undefined) {
      i = frames.length;
      frameIndex.set(key, i);
      // the display rule (core/model/display-text.ts): speedscope shows names and files as given, so a bidi
      // override or a terminal escape would reach its viewer
      const f: SpeedscopeFrame = { name: revealControlsInLine(name) };
      if (file) f.file = revealControlsInLine(file);
      if (line !== null && line > 0) f.line = line;
      frames.push(f);
    }
    return i;
  };
  const indices = (f: Frame): number[] => {
    if (f.kind === 'python') return [frameOf(f.function ?? '?', f.file ?? null, f.line ?? null)];
    return frameLines(f)
      .map((l) => frameOf(l.function ?? '?', l.file, l.line))
      .reverse();
  };
  const procs = inputs.map((i) => i.proc);
  const profiles: SpeedscopeSampledProfile[] = inputs.map((input) => {
    const snap = input.proc.snapshots[input.snapshotIndex];
    const samples: number[][] = [];
    const weights: number[] = [];
    let total = 0;
    for (const s of snapshotSamples(input, options)) {
      const w = measure === 'bytes' ? s.intBytes : s.intObjects;
      if (w === 0) continue;
      const stack: number[] = [];
      for (let i = s.frames.length - 1; i >= 0; i--) stack.push(...indices(s.frames[i]));
      samples.push(stack);
      weights.push(w);
      total += w;
    }
    return {
      type: 'sampled',
      name: revealControlsInLine(`${processLabel(input.proc, procs)} — ${basename(snap.file)}`),
      unit: measure === 'bytes' ? 'bytes' : 'none',
      startValue: 0,
      endValue: total,
      samples,
      weights,
    };
  });
  return {
    $schema: SPEEDSCOPE_SCHEMA,
    version: '0.0.1',
    shared: { frames },
    profiles,
    name: revealControlsInLine(options.name ?? 'heaplens live heap'),
    activeProfileIndex: 0,
    exporter: 'heaplens',
  };
}
