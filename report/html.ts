// The single-file report: one HTML page with the viewer's script and style inline, the data embedded as a
// compressed payload in a non-executable element, and a Content-Security-Policy that allows nothing else:
// no network, no other scripts (the inline ones are allowed by their SHA-256), images only as data: URLs.

import type { ReportData } from './data.js';
import { DATA_ELEMENT_ID, DATA_MIME, decodePayload, encodePayload, toBase64, ReportError } from './payload.js';
import { REPORT_CSS } from './style.js';

export interface ViewerBundle {
  /** the viewer's bundled script (dist/report/viewer.js) */
  js: string;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Inline script text can never close its element early. */
function safeInlineScript(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toBase64(new Uint8Array(digest));
}

export function contentSecurityPolicy(scriptHash: string, styleHash: string): string {
  return [
    "default-src 'none'",
    `script-src 'sha256-${scriptHash}'`,
    `style-src 'sha256-${styleHash}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export async function buildReportHtml(data: ReportData, viewer: ViewerBundle): Promise<string> {
  const js = safeInlineScript(viewer.js);
  const css = REPORT_CSS;
  const csp = contentSecurityPolicy(await sha256Base64(js), await sha256Base64(css));
  const payload = encodePayload(data);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="${escapeHtml(data.generator)}">`,
    `<title>${escapeHtml(data.title)}</title>`,
    `<style>${css}</style>`,
    '</head>',
    '<body>',
    '<noscript>This heaplens report needs JavaScript to show its data (it runs only the script inside this file).</noscript>',
    '<div id="app"></div>',
    `<script id="${DATA_ELEMENT_ID}" type="${DATA_MIME}">${payload}</script>`,
    `<script>${js}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The report's data, from the text of a report file (for reopening; no script runs). */
export function extractReportData(html: string): ReportData {
  const open = `<script id="${DATA_ELEMENT_ID}" type="${DATA_MIME}">`;
  const i = html.indexOf(open);
  if (i < 0) throw new ReportError('not a heaplens report (no embedded data)');
  const j = html.indexOf('</script>', i + open.length);
  if (j < 0) throw new ReportError('the report is cut off (its data does not end)');
  const b64 = html.slice(i + open.length, j);
  if (!/^[A-Za-z0-9+/=\s]*$/.test(b64)) throw new ReportError('the report\'s data is damaged (not base64)');
  return decodePayload(b64);
}
