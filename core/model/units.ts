// Byte quantities as people read them (binary units), shared by the CLI, the app and the report.

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
