// Number formatting for tables and tooltips.

import {
  formatBytes as bytes,
  formatCount as count,
  formatValue as value,
  type ValueUnit,
} from '../../../core/model/units.js';
import { revealControls } from '../../../core/model/display-text.js';
import { processLabel } from '../../../core/model/process-name.js';
import { pidText } from '../../../core/model/process-host.js';
import type { ProcessSummary } from './protocol.ts';

/** Text from files and notes as shown: control and bidi characters visibly marked as <U+XXXX>. */
export const shown = revealControls;

/** The first number and time formatted through Intl set up ICU's formatters: 35–50 ms in Chromium, paid once. At
 *  start, in idle time, it is not paid in a loading job's frames (the provisional ranking's first counts were one
 *  ~100 ms task, bench/ui-bench.mjs --deep). */
export function warmFormatters(): void {
  void (0).toLocaleString();
  void (0).toLocaleString('en-US');
  void new Date(0).toLocaleTimeString();
}

export function formatBytes(n: number, signed = false): string {
  return bytes(n, signed, '−');
}

export type { ValueUnit };

/** A sample value as its unit reads (core/model/units.ts, the CLI's too), with the page's minus sign. */
export function formatValue(n: number, unit: ValueUnit, signed = false): string {
  return value(n, unit, signed, '−');
}

/** A process as banners, tables and titles name it (core/model/process-name.ts): `7905 python3.12 job.py`. */
export function procLabel(
  p: Pick<ProcessSummary, 'pid' | 'prefix' | 'key' | 'name' | 'labelHost'> | undefined,
): string {
  return p ? revealControls(processLabel(p, p.name ?? null, p.labelHost ?? null)) : '?';
}

/** A process's pid as labels show it: `node-a:12` where pids repeat in the job (ProcessSummary.labelHost), else `12`. */
export function pidShown(p: Pick<ProcessSummary, 'pid' | 'labelHost'> | null | undefined): string {
  return p ? pidText(p.pid, p.labelHost ?? null) : '?';
}

/**
 * A rate as it goes into a ticket: `+1.2 MiB/s`, or `/dump` when the dumps' times are unknown or too close; "no
 * rate" (null) for a series too short to carry one.
 */
export function formatRate(bytesPer: number | null, perSecond: boolean): string {
  if (bytesPer === null) return 'no rate';
  return `${bytes(bytesPer, true, '−')}/${perSecond ? 's' : 'dump'}`;
}

export function formatPct(p: number, signed = true): string {
  if (!Number.isFinite(p)) return p > 0 ? 'new' : '—';
  const sign = p < 0 ? '−' : signed && p > 0 ? '+' : '';
  const v = Math.abs(p);
  return `${sign}${v >= 100 ? v.toFixed(0) : v.toFixed(1)}%`;
}

/** "7,014" (core/model/units.ts, the CLI's too). */
export const formatCount = count;

export function shortFile(p: string): string {
  const i = p.lastIndexOf('/');
  return revealControls(i >= 0 ? p.slice(i + 1) : p);
}

/**
 * What made a dump, as recorded (core/model/dump-trigger.ts: the capture's rule — rss-step, cgroup-fraction 0.9 —
 * over the file name's letter), and an exit dump written after the interpreter's teardown named as such: wherever
 * a dump is listed or pointed at, beside its label.
 */
export function dumpTrigger(s: { trigger?: string; afterTeardown?: boolean } | null | undefined): string {
  if (!s) return '';
  if (s.afterTeardown) return `${s.trigger ?? 'final'}, exit after teardown`;
  return s.trigger === undefined || s.trigger === 'unknown' ? 'trigger not recorded' : s.trigger;
}

/**
 * A snapshot as every label, select, note and tooltip names it: its sequence number from the file name (as the
 * file name and core/notes/notes.ts do), never its position in the list.
 */
export function snapLabel(
  s: { seq: number | null; index: number; massifTree?: 'empty' | 'detailed' | 'peak' } | null | undefined,
): string {
  if (!s) return '#?';
  // massif's peak snapshot is marked wherever a snapshot is named
  return (s.seq !== null ? `#${s.seq}` : `dump ${s.index + 1}`) + (s.massifTree === 'peak' ? ' (peak)' : '');
}
