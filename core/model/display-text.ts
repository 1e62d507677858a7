// Text from files (maps paths, frame tables, symbol names, notes, file names) may hold characters that
// act on the display instead of showing: terminal escapes (ESC, CR, other C0/C1 controls), bidi
// overrides and marks (U+202E shows "gpj.exe" for "exe.jpg"), and line/paragraph separators. One
// function makes them visible as <U+XXXX>; the CLI runs all its text output through it, the app its labels.

// C0 controls but tab and newline, DEL and C1; ALM; LRM, RLM; LRE…RLO; LRI…PDI; LS, PS; BOM/ZWNBSP.

const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/g;

const hex4 = (c: string): string => c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');

/** Each unsafe character as the visible text "<U+XXXX>"; everything else unchanged. */
export function revealControls(s: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(s) ? s.replace(UNSAFE, (c) => `<U+${hex4(c)}>`) : s;
}

/**
 * For JSON text: each unsafe character as its JSON escape "\uXXXX", so the document still parses to the
 * same data while a terminal shows the escape (JSON.stringify leaves bidi marks and U+2028 raw).
 */
export function escapeControlsInJson(json: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(json) ? json.replace(UNSAFE, (c) => (c === '\n' ? c : `\\u${hex4(c).toLowerCase()}`)) : json;
}

/**
 * For one-line fields of a file others' tools read (folded stacks, speedscope and pprof names): revealControls,
 * and newline and tab marked too, so a name cannot start a line of its own.
 */
export function revealControlsInLine(s: string): string {
  return revealControls(s).replace(/[\t\n]/g, (c) => `<U+${hex4(c)}>`);
}

/** True when the text holds a character revealControls would mark. */
export function hasControls(s: string): boolean {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(s);
}
