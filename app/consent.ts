// What the user is asked before a session file (which may come from someone else) gets paths granted: the text
// of the native confirmation, built so that it cannot hide what it grants (issue 24 item 4).
//   - A path holding a control, format or separator character (newline, tab, ESC, U+202E, U+2028, …) is refused:
//     in a message box it could draw fake lines or read backwards. The renderer shows such paths marked by the
//     one display rule (core/model/display-text.ts); main never shows them.
//   - The dialog names what is granted, resolved through symlinks (a link to `/` is shown as `/`): every folder,
//     widest first, then the files grouped by their folder. More lines than fit is refused outright, never cut.

import path from 'node:path';

/** Cc (C0, DEL, C1: newline, tab, ESC…), Cf (bidi marks and overrides, BOM, zero-width…), Zl, Zp. */
const REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Lines the dialog lists at most; a session naming more places than this is refused, never shown in part. */
export const MAX_CONSENT_LINES = 30;

export function refusedPath(p: string): boolean {
  return REFUSED.test(p);
}

export interface ConsentTarget {
  /** resolved through symlinks: what would be granted */
  real: string;
  isDirectory: boolean;
}

export type Consent =
  { ask: true; message: string; detail: string; grant: string[] } | { ask: false; message: string; detail: string };

const depth = (p: string): number => p.split(path.sep).filter(Boolean).length;
const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * The confirmation for `targets` (the session's paths that exist, resolved), `refused` paths with control
 * characters and `gone` paths that no longer exist.
 */
export function sessionConsent(targets: readonly ConsentTarget[], refused: number, gone: number): Consent {
  const folders = [...new Set(targets.filter((t) => t.isDirectory).map((t) => t.real))].sort(
    (a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0),
  );
  // files already inside a listed folder add nothing to what is granted
  const inFolder = (f: string): boolean =>
    folders.some((d) => f === d || f.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
  const byDir = new Map<string, string[]>();
  for (const t of targets)
    if (!t.isDirectory && !inFolder(t.real)) {
      const d = path.dirname(t.real);
      const names = byDir.get(d) ?? [];
      if (!names.includes(path.basename(t.real))) names.push(path.basename(t.real));
      byDir.set(d, names);
    }
  const dirs = [...byDir.keys()].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
  const notes: string[] = [];
  if (refused > 0)
    notes.push(`${plural(refused, 'path')} refused: they hold control characters (a newline, a bidi override…)`);
  if (gone > 0) notes.push(`${plural(gone, 'path')} no longer exist`);
  const places = folders.length + dirs.length;
  if (places === 0)
    return { ask: false, message: 'This session names nothing that can be opened.', detail: notes.join('\n') };
  if (places > MAX_CONSENT_LINES)
    return {
      ask: false,
      message: `This session names ${plural(places, 'place')} to open; at most ${MAX_CONSENT_LINES} can be shown for you to confirm, so none is opened.`,
      detail: ['Open its folders yourself (File → Open).', ...notes].join('\n'),
    };
  const lines: string[] = [];
  for (const d of folders)
    lines.push(`${d}${d.endsWith(path.sep) ? '' : path.sep}  (the whole folder, every file below it)`);
  for (const d of dirs) {
    const names = byDir.get(d) ?? [];
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
    lines.push(`${plural(names.length, 'file')} in ${d}${d.endsWith(path.sep) ? '' : path.sep}: ${shown}`);
  }
  const files = [...byDir.values()].reduce((a, n) => a + n.length, 0);
  return {
    ask: true,
    message: `Open ${[folders.length > 0 ? plural(folders.length, 'folder') : '', files > 0 ? plural(files, 'file') : ''].filter(Boolean).join(' and ')} this session names?`,
    detail: [...lines, ...(notes.length > 0 ? ['', ...notes] : []), '', 'Only these are opened.'].join('\n'),
    grant: [...folders, ...targets.filter((t) => !t.isDirectory && !inFolder(t.real)).map((t) => t.real)],
  };
}
