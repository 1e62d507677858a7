// The embedded payload: JSON → deflate (pako) → base64, inside a non-executable <script type=…> element.
// Shared by the builder, the viewer and reopening. Pure (no Node, no DOM).

import { deflate, inflate } from 'pako';
import { REPORT_FORMAT, REPORT_VERSION, type ReportData } from './data.js';
import { validateReportData } from './validate.js';
import { ReportError } from './errors.js';

export const DATA_ELEMENT_ID = 'heaplens-report-data';
export const DATA_MIME = 'application/x-heaplens-report';

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(b64: string): Uint8Array {
  const s = atob(b64.replace(/\s+/g, ''));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function encodePayload(data: ReportData): string {
  return toBase64(deflate(new TextEncoder().encode(JSON.stringify(data)), { level: 9 }));
}

export { ReportError };

/** Decodes and checks the envelope (format, version); the content is then trusted only as data, never as markup. */
export function decodePayload(b64: string): ReportData {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder().decode(inflate(fromBase64(b64))));
  } catch (e) {
    throw new ReportError(`the report's data is damaged (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof v !== 'object' || v === null || (v as { format?: unknown }).format !== REPORT_FORMAT) throw new ReportError('not a heaplens report');
  const version = (v as { version?: unknown }).version;
  if (typeof version !== 'number' || !Number.isInteger(version)) throw new ReportError('report without a version');
  if (version > REPORT_VERSION) throw new ReportError(`this report was written by a newer heaplens (report version ${version}); this one reads up to ${REPORT_VERSION}`);
  return validateReportData(v);
}
