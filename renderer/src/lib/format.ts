// Number formatting for tables and tooltips.

import { formatBytes as bytes } from '../../../analysis/units.js';
import { revealControls } from '../../../analysis/display-text.js';

/** Text from files and notes as shown: control and bidi characters visibly marked as <U+XXXX>. */
export const shown = revealControls;

export function formatBytes(n: number, signed = false): string {
  return bytes(n, signed, '−');
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
  return revealControls(i >= 0 ? p.slice(i + 1) : p);
}
