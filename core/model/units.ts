// Byte quantities as people read them (binary units), and counts (a `_objects` sample's values, never shown as
// bytes), shared by the CLI, the app and the report.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** "1.91 MiB"; `signed` adds "+" to positive values; `minus` is the sign of negative ones. */
export function formatBytes(n: number, signed = false, minus = '-'): string {
  const sign = n < 0 ? minus : signed && n > 0 ? '+' : '';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = u === 0 ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${sign}${v.toFixed(digits)} ${UNITS[u]}`;
}

/** What a sample type's values are (core/model/sample-type.ts sampleUnit): bytes, or a count of objects. */
export type ValueUnit = 'bytes' | 'objects';

/** "7,014": a count rounded, its thousands grouped (not toLocaleString: its first call loads ICU data, a visible
 *  share of a short CLI run). */
export function formatCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A sample's value as its unit reads: bytes in binary units, a count as a count. */
export function formatValue(n: number, unit: ValueUnit, signed = false, minus = '-'): string {
  if (unit === 'bytes') return formatBytes(n, signed, minus);
  const sign = n < 0 && Math.round(n) !== 0 ? minus : signed && Math.round(n) > 0 ? '+' : '';
  return sign + formatCount(Math.abs(n));
}
