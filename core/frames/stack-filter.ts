// Slicing stacks like pprof (google/pprof profile/filter.go FilterSamplesByName), on described frames:
//   focus  - keep a stack only if some frame matches (and none matches ignore)
//   ignore - drop every stack with a matching frame
//   hide   - remove the matching lines (inlined functions) of each frame; a frame left with none goes
//   show   - keep only the matching lines of each frame; a frame left with none goes
// A stack left with no frame is dropped. A frame matches when one of its lines' function or file name does, or
// the path of its module (pprof's mapping file); a module match hides or shows every line of the frame. The
// expressions are unanchored searches, as Go's MatchString. Granularity says what a frame is when stacks are
// grouped and labelled: its function (and file), its function and line, or its file (the module for native frames
// without a file).

import { frameText, type LabelFrame } from './stack-labels.js';

export type Granularity = 'functions' | 'lines' | 'files';
export const GRANULARITIES: readonly Granularity[] = ['functions', 'lines', 'files'];

export interface FilterLine {
  function: string | null;
  file: string | null;
  line: number | null;
}

export interface FilterFrame extends LabelFrame {
  /** the module's path as in the maps (pprof's mapping file) */
  modulePath?: string | null;
  /** inlined lines, innermost first (the last is `function` itself) */
  inlined?: FilterLine[];
}

export interface StackFilter {
  focus?: RegExp | null;
  ignore?: RegExp | null;
  hide?: RegExp | null;
  show?: RegExp | null;
}

export function parseGranularity(s: string): Granularity | null {
  return (GRANULARITIES as readonly string[]).includes(s) ? (s as Granularity) : null;
}

export function isActive(f: StackFilter): boolean {
  return !!(f.focus || f.ignore || f.hide || f.show);
}

/** The lines of a frame as pprof's Location.Line: inlined functions innermost first, else the frame itself. */
export function frameLines(f: FilterFrame): FilterLine[] {
  if (f.inlined && f.inlined.length > 0) return f.inlined;
  return [{ function: f.function ?? null, file: f.file ?? null, line: f.line ?? null }];
}

/** The name a line has in the exported profile (core/export/frames.ts frameLines): its function, else module+offset or the address. */
function lineName(f: FilterFrame, l: FilterLine): string {
  if (l.function) return l.function;
  return f.module !== null && f.moduleOffset ? `${f.module}+${f.moduleOffset}` : (f.address ?? '');
}

function lineMatches(f: FilterFrame, l: FilterLine, re: RegExp): boolean {
  return re.test(lineName(f, l)) || (l.file !== null && re.test(l.file));
}

function moduleMatches(f: FilterFrame, re: RegExp): boolean {
  const m = f.modulePath ?? null;
  return m !== null && m !== '' && re.test(m);
}

/** pprof's Location.matchesName. */
export function frameMatches(f: FilterFrame, re: RegExp): boolean {
  return frameLines(f).some((l) => lineMatches(f, l, re)) || moduleMatches(f, re);
}

/** The frame with only the lines kept (null when none is); the frame itself when all are. */
function withLines<F extends FilterFrame>(f: F, keep: (l: FilterLine) => boolean): F | null {
  const lines = frameLines(f);
  const kept = lines.filter(keep);
  if (kept.length === lines.length) return f;
  if (kept.length === 0) return null;
  const outer = kept[kept.length - 1];
  const out: F = { ...f, function: outer.function, file: outer.file, line: outer.line };
  if (kept.length > 1) out.inlined = kept;
  else delete out.inlined;
  return out;
}

/** A stack through the filter, leaf first: its remaining frames, or null when the stack is dropped. */
export function filterStack<F extends FilterFrame>(frames: readonly F[], filter: StackFilter): F[] | null {
  if (!isActive(filter)) return [...frames];
  const { focus, ignore, hide, show } = filter;
  let focused = false;
  for (const f of frames) {
    if (ignore && frameMatches(f, ignore)) return null;
    if (!focus || frameMatches(f, focus)) focused = true;
  }
  if (!focused) return null;
  if (!hide && !show) return [...frames];
  const out: F[] = [];
  for (const f of frames) {
    let g: F | null = f;
    if (hide && frameMatches(f, hide))
      g = moduleMatches(f, hide) ? null : withLines(f, (l) => !lineMatches(f, l, hide));
    if (g && show) g = moduleMatches(g, show) ? g : withLines(g, (l) => lineMatches(f, l, show));
    if (g) out.push(g);
  }
  return out.length > 0 ? out : null;
}

function baseOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** What a frame is at a granularity: the key stacks are grouped by. */
export function frameKey(f: FilterFrame, g: Granularity): string {
  if (g === 'files') return f.file ? `file|${f.file}` : `module|${f.modulePath ?? f.module ?? f.address ?? ''}`;
  const lines = frameLines(f);
  const name = lines
    .map((l) => `${lineName(f, l)}|${l.file ?? ''}${g === 'lines' ? '|' + (l.line ?? '') : ''}`)
    .join('>');
  return `${f.kind === 'python' ? 'py' : 'n'}|${name}`;
}

/** A frame as text at a granularity: `fn (file:line)`, `fn (file)` or `file`. */
export function frameTextAt(f: FilterFrame, g: Granularity): string {
  if (g === 'lines') return frameText(f);
  if (g === 'files') return f.file ? baseOf(f.file) : (f.module ?? frameText(f));
  if (f.kind === 'python' || f.function)
    return f.file ? `${f.function ?? '?'} (${baseOf(f.file)})` : (f.function ?? '?');
  return frameText(f);
}

/** Frames at a granularity: at `files`, consecutive frames of one file are one (the file's frames in a row). */
export function atGranularity<F extends FilterFrame>(frames: readonly F[], g: Granularity): F[] {
  if (g !== 'files') return [...frames];
  const out: F[] = [];
  let prev = '';
  for (const f of frames) {
    const k = frameKey(f, g);
    if (k !== prev) out.push(f);
    prev = k;
  }
  return out;
}
