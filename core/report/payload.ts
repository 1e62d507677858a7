// The embedded payload: core/report/job-pack.ts bytes (deflated) → base64, inside a non-executable
// <script type=…> element. Shared by the builder, the report page and reopening. Pure (no Node, no DOM).

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
