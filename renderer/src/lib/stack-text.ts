// A stack as text for a ticket or a chat ("copy stack" in the stack panel): its name, then its Python frames leaf
// first, then its native frames, each with its file:line (and a native frame's module+offset). Pure.

import type { FrameInfo } from './protocol.ts';

type TextFrame = Pick<FrameInfo, 'function' | 'label' | 'file' | 'line' | 'kind' | 'module' | 'offset' | 'inlined'>;

/** "path:line" as the frame gives its file (the path as recorded), null for a frame without a file */
export function frameLocation(f: Pick<FrameInfo, 'file' | 'line'>): string | null {
  if (!f.file) return null;
  return f.line ? `${f.file}:${f.line}` : f.file;
}

function frameLine(f: TextFrame): string {
  const name = f.function ?? f.label;
  const where = frameLocation(f);
  const mod = f.kind === 'python' || !f.module ? null : `${f.module}${f.offset ? `+${f.offset}` : ''}`;
  const parts = [name + (f.inlined ? ' (inlined)' : '')];
  if (where) parts.push(where);
  if (mod && mod !== name) parts.push(`[${mod}]`);
  return `  ${parts.join('  ')}`;
}

/**
 * `title`, then "Python frames (leaf first):" and "Native frames (leaf first):", each frame on its line:
 * `  function  file:line  [module+offset]`. The frames as the panel shows them (the caller leaves out allocator
 * frames it hides); the interpreter's folded markers are not frames and are left out.
 */
export function stackText(title: string, frames: readonly TextFrame[]): string {
  const real = frames.filter((f) => f.kind !== 'folded');
  const py = real.filter((f) => f.kind === 'python');
  const native = real.filter((f) => f.kind !== 'python');
  const out = [title];
  if (py.length > 0) out.push('Python frames (leaf first):', ...py.map(frameLine));
  if (native.length > 0) out.push(`${py.length > 0 ? 'Native' : 'Frames'} (leaf first):`, ...native.map(frameLine));
  return out.join('\n') + '\n';
}
