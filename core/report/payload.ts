// The embedded payload: core/report/job-pack.ts bytes (deflated) → base64, inside a non-executable
// <script type=…> element. Shared by the builder, the report page and reopening. Pure (no Node, no DOM).

export const DATA_ELEMENT_ID = 'heaplens-report-data';
export const DATA_MIME = 'application/x-heaplens-report';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const PAD = '='.charCodeAt(0);

/**
 * Standard base64 with padding (btoa's output), written as ASCII bytes and decoded once: a binary string built
 * for btoa took 1.5 s for the 1,000-process job's 15 MB payload (Node's btoa checks it char by char), this 0.1 s.
 */
export function toBase64(bytes: Uint8Array): string {
  const n = bytes.length;
  const out = new Uint8Array(Math.ceil(n / 3) * 4);
  let o = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out[o++] = CODES[v >>> 18];
    out[o++] = CODES[(v >>> 12) & 63];
    out[o++] = CODES[(v >>> 6) & 63];
    out[o++] = CODES[v & 63];
  }
  if (i < n) {
    const v = (bytes[i] << 16) | (i + 1 < n ? bytes[i + 1] << 8 : 0);
    out[o++] = CODES[v >>> 18];
    out[o++] = CODES[(v >>> 12) & 63];
    out[o++] = i + 1 < n ? CODES[(v >>> 6) & 63] : PAD;
    out[o++] = PAD;
  }
  return new TextDecoder().decode(out);
}

export function fromBase64(b64: string): Uint8Array {
  const s = atob(b64.replace(/\s+/g, ''));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
