// Human-readable numbers and tables for the terminal.

import { formatBytes } from '../analysis/units.js';

export { formatBytes };

export function formatSignedBytes(n: number): string {
  return formatBytes(n, true);
}

export function formatInt(n: number): string {
  // Not toLocaleString: its first call loads ICU data, a visible share of a short CLI run.
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return '-';
  return `${((100 * part) / whole).toFixed(1)}%`;
}

/** Columns padded to the widest cell; `right` marks right-aligned columns. */
export function table(header: readonly string[], rows: readonly string[][], right: readonly boolean[]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const fmt = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : right[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)].join('\n');
}
