// Open-in-editor links of the desktop app: a frame's source file and line as the URL an editor registers for
// (VS Code's `vscode://file/<abs path>:<line>`; Insiders, VSCodium and Cursor take the same form under their own
// scheme). The editor is one of the app's settings (recent.ts); the URL is built here, in main, from a checked
// absolute path and line, and handed to the OS (shell.openExternal): the page never names a URL to open.

import { DEFAULT_EDITOR, EDITORS, type Editor } from './host-api.js';

export { DEFAULT_EDITOR, type Editor };

export function isEditor(v: unknown): v is Editor {
  return typeof v === 'string' && (EDITORS as readonly string[]).includes(v);
}

/**
 * `<scheme>://file/<abs path>:<line>`, or null for anything but an absolute path (POSIX, or a Windows drive path,
 * written with '/') free of control characters and a line from 1 on. Each path segment is percent-encoded (a space,
 * '#', '?', non-ASCII) so that the URL names exactly that file.
 */
export function editorUrl(editor: Editor, file: string, line: number): string | null {
  if (!Number.isInteger(line) || line < 1 || line > 1e8) return null;
  if (file.length === 0 || file.length > 4096 || /[\u0000-\u001f\u007f]/.test(file)) return null;
  const drive = /^([A-Za-z]):[\\/]/.exec(file);
  if (!drive && !file.startsWith('/')) return null;
  const segs = (drive ? file.slice(3) : file.slice(1)).split(drive ? /[\\/]/ : '/');
  if (segs.some((s) => s === '..')) return null;
  const pathPart = (drive ? `/${drive[1]}:/` : '/') + segs.map(encodeURIComponent).join('/');
  return `${editor}://file${pathPart}:${line}`;
}
