// Human-readable numbers and tables for the terminal.

export function formatBytes(n: number): string {
  const sign = n < 0 ? '-' : '';
  let v = Math.abs(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${sign}${u === 0 ? Math.round(v).toString() : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

export function formatSignedBytes(n: number): string {
  return (n > 0 ? '+' : '') + formatBytes(n);
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
