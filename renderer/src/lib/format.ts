// Number formatting for tables and tooltips.

import { formatBytes as bytes } from '../../../core/model/units.js';
import { revealControls } from '../../../core/model/display-text.js';

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

/**
 * A snapshot as every label, select, note and tooltip names it: its sequence number from the file name (as the
 * file name and core/notes/notes.ts do), never its position in the list.
 */
export function snapLabel(s: { seq: number | null; index: number } | null | undefined): string {
  if (!s) return '#?';
  return s.seq !== null ? `#${s.seq}` : `dump ${s.index + 1}`;
}
