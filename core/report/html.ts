// The single-file report: one HTML page running the app's own renderer read-only (its script and style inline),
// the job embedded as a compressed payload in a non-executable element, and a Content-Security-Policy that
// allows nothing else: no network, no other scripts (the inline ones are allowed by their SHA-256), images
// only as data: URLs.

import { DATA_ELEMENT_ID, DATA_MIME, fromBase64, toBase64 } from './payload.js';
import { ReportError } from './errors.js';

export interface ReportApp {
  /** the renderer's report build (dist/report-app/report.js): one script, no imports */
  js: string;
  /** its styles (dist/report-app/report.css) */
  css: string;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** Inline script text can never close its element early. */
function safeInlineScript(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** Inline style text can never close its element early. */
function safeInlineStyle(css: string): string {
  return css.replace(/<\/(style)/gi, '<\\/$1');
}

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toBase64(new Uint8Array(digest));
}

export function contentSecurityPolicy(scriptHash: string, styleHash: string): string {
  return [
    "default-src 'none'",
    `script-src 'sha256-${scriptHash}'`,
    // the renderer sets element styles through the CSSOM (el.style.x = …), which CSP does not govern
    `style-src 'sha256-${styleHash}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export async function buildReportHtml(
  payload: Uint8Array,
  meta: { title: string; generator: string },
  app: ReportApp,
): Promise<string> {
  const js = safeInlineScript(app.js);
  const css = safeInlineStyle(app.css);
  const csp = contentSecurityPolicy(await sha256Base64(js), await sha256Base64(css));
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="${escapeHtml(meta.generator)}">`,
    `<title>${escapeHtml(meta.title)}</title>`,
    `<style>${css}</style>`,
    '</head>',
    '<body>',
    '<noscript>This heaplens report needs JavaScript to show its data (it runs only the script inside this file).</noscript>',
    '<div id="app"></div>',
    `<script id="${DATA_ELEMENT_ID}" type="${DATA_MIME}">${toBase64(payload)}</script>`,
    `<script>${js}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The payload's bytes (deflated), from the text of a report file (for reopening; no script runs). */
export function extractPayload(html: string): Uint8Array {
  const open = `<script id="${DATA_ELEMENT_ID}" type="${DATA_MIME}">`;
  const i = html.indexOf(open);
  if (i < 0) throw new ReportError('not a heaplens report (no embedded data)');
  const j = html.indexOf('</script>', i + open.length);
  if (j < 0) throw new ReportError('the report is cut off (its data does not end)');
  const b64 = html.slice(i + open.length, j);
  if (!/^[A-Za-z0-9+/=\s]*$/.test(b64)) throw new ReportError("the report's data is damaged (not base64)");
  try {
    return fromBase64(b64);
  } catch {
    throw new ReportError("the report's data is damaged (not base64)");
  }
}
