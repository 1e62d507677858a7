// Human-readable numbers and tables for the terminal.

import { formatBytes, formatCount } from '../../core/model/units.js';

export { formatBytes };

export function formatSignedBytes(n: number): string {
  return formatBytes(n, true);
}

export const formatInt = formatCount;

export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return '-';
  return `${((100 * part) / whole).toFixed(1)}%`;
}

/** Terminal columns a code point takes: 2 for East Asian wide and fullwidth forms, 0 for combining marks. */
function cpWidth(cp: number): number {
  if ((cp >= 0x300 && cp <= 0x36f) || cp === 0x200d) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  )
    return 2;
  return 1;
}

/** Code points below U+0300 take one column each (cpWidth): a string of only those is as wide as it is long. */
const ONE_COLUMN_EACH = /^[\u0000-\u02ff]*$/;

/** Width of a string on a terminal. */
export function displayWidth(s: string): number {
  // most of what a command prints (numbers, paths, ASCII symbols): one regex test, not a loop per code point
  if (ONE_COLUMN_EACH.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += cpWidth(ch.codePointAt(0) ?? 0);
  return w;
}

/** The string cut to `width` terminal columns, ending in "…" when cut. */
export function fitWidth(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  let w = 0;
  let out = '';
  for (const ch of s) {
    const cw = cpWidth(ch.codePointAt(0) ?? 0);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

/**
 * Fewest columns the last column (the stack) keeps beside the others; with less room it goes on a line of its
 * own under its row, where a narrow terminal (a 100-column pipe, a CI log) still shows its first frames whole.
 */
const MIN_LAST_COLUMN = 32;
/** indent of a stack on its own line, under its row */
const STACK_LINE_INDENT = '    ';

/**
 * Columns padded to the widest cell; `right` marks right-aligned columns. With `columns` (the terminal's width,
 * less what the caller indents by), the last column (the stack) is cut to fit, so each row stays one line and
 * starts with the stack's first frame — or, when fewer than MIN_LAST_COLUMN columns are left for it, each stack
 * goes on its own line under its row, cut to the width.
 */
export function table(
  header: readonly string[],
  rows: readonly string[][],
  right: readonly boolean[],
  columns?: number,
): string {
  const widths = header.map((h, c) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[c] ?? ''))));
  const pad = (cell: string, c: number) => {
    const fill = ' '.repeat(Math.max(0, widths[c] - displayWidth(cell)));
    return right[c] ? fill + cell : cell + fill;
  };
  const lead = widths.slice(0, -1).reduce((a, w) => a + w + 2, 0);
  if (columns !== undefined && header.length > 1 && columns - lead < MIN_LAST_COLUMN) {
    const cells = (r: readonly string[]) =>
      fitWidth(
        r
          .slice(0, -1)
          .map((cell, c) => pad(cell, c))
          .join('  ')
          .trimEnd(),
        columns,
      );
    const under = (cell: string) => STACK_LINE_INDENT + fitWidth(cell, columns - STACK_LINE_INDENT.length);
    const lastOf = (r: readonly string[]) => r[header.length - 1] ?? '';
    return [cells(header), under(lastOf(header)), ...rows.flatMap((r) => [cells(r), under(lastOf(r))])].join('\n');
  }
  const last = columns !== undefined ? columns - lead : Infinity;
  // with a width, every row fits it (a table too wide for the stack's minimum is cut at the width, never wrapped)
  const fmt = (r: readonly string[]) => {
    const line = r
      .map((cell, c) => (c === r.length - 1 ? (last === Infinity ? cell : fitWidth(cell, last)) : pad(cell, c)))
      .join('  ')
      .trimEnd();
    return columns !== undefined ? fitWidth(line, columns) : line;
  };
  return [fmt(header), ...rows.map(fmt)].join('\n');
}

/** The terminal width for output: the TTY's columns, else $COLUMNS, else 100 (pipes, files, CI logs). */
export const DEFAULT_COLUMNS = 100;
export function terminalColumns(
  stream: { isTTY?: boolean; columns?: number },
  env: Record<string, string | undefined>,
): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const c = Number(env.COLUMNS);
  return Number.isInteger(c) && c > 0 ? c : DEFAULT_COLUMNS;
}

/**
 * Lines longer than `columns` wrapped at spaces (continuations indented two more than the line), so that titles
 * and notes fit the terminal; a word wider than a line keeps its end.
 */
export function wrapLines(text: string, columns: number): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (displayWidth(line) <= columns) {
      out.push(line);
      continue;
    }
    const lead = /^\s*/.exec(line)?.[0] ?? '';
    const words = line.slice(lead.length).split(' ');
    let cur = lead;
    let curWidth = displayWidth(lead);
    let fresh = true;
    for (const word of words) {
      // a word wider than a whole line (a long path) keeps its end, where the file name is
      const room = columns - displayWidth(lead) - 2;
      const w = displayWidth(word) > room ? '…' + [...word].slice(-(room - 1)).join('') : word;
      const ww = displayWidth(w);
      if (!fresh && curWidth + 1 + ww > columns) {
        out.push(cur);
        cur = lead + '  ' + w;
        curWidth = displayWidth(lead) + 2 + ww;
      } else {
        cur += (fresh ? '' : ' ') + w;
        curWidth += (fresh ? 0 : 1) + ww;
      }
      fresh = false;
    }
    out.push(cur);
  }
  return out.join('\n');
}
