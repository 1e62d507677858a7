// Number formatting for tables and tooltips.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number, signed = false): string {
  const sign = n < 0 ? '−' : signed && n > 0 ? '+' : '';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = u === 0 ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${sign}${v.toFixed(digits)} ${UNITS[u]}`;
}

export function formatPct(p: number, signed = true): string {
  if (!Number.isFinite(p)) return p > 0 ? 'new' : '—';
  const sign = p < 0 ? '−' : signed && p > 0 ? '+' : '';
  const v = Math.abs(p);
  return `${sign}${v >= 100 ? v.toFixed(0) : v.toFixed(1)}%`;
}

export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function shortFile(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
