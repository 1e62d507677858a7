// The search box's query as a regular expression (case-insensitive): a query that is not a valid expression is
// searched as plain text, so typing "foo(" never errors. Frames match on their label, function, source file or
// module path. Shared by the flame graphs (highlight + count) and the tables (highlighted text).

import type { FrameInfo } from './protocol.ts';

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The query as a RegExp (null for an empty query); `valid` says whether it parsed as an expression. */
export function searchRegex(query: string): { re: RegExp; valid: boolean } | null {
  const q = query.trim();
  if (q === '') return null;
  try {
    return { re: new RegExp(q, 'i'), valid: true };
  } catch {
    return { re: new RegExp(escape(q), 'i'), valid: false };
  }
}

/**
 * Names always match; source files and module paths only for a query that looks like a path (has '/' or '.'),
 * so "leak" finds leak_steady, not every frame of /tmp/lab/leaky.
 */
export function frameMatchesSearch(
  f: Pick<FrameInfo, 'label' | 'function' | 'file' | 'modulePath'>,
  re: RegExp,
): boolean {
  if (re.test(f.label) || (f.function !== null && re.test(f.function))) return true;
  const pathy = re.source.includes('/') || re.source.includes('.');
  return pathy && ((f.file !== null && re.test(f.file)) || (f.modulePath !== null && re.test(f.modulePath)));
}

/** Text split into plain and matching parts, for <mark>ing the matches. */
export function highlightParts(text: string, re: RegExp | null): { text: string; hit: boolean }[] {
  if (!re) return [{ text, hit: false }];
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
  const out: { text: string; hit: boolean }[] = [];
  let last = 0;
  for (const m of text.matchAll(g)) {
    if (m[0] === '') break; // an empty match would loop; show the text plain
    const at = m.index ?? 0;
    if (at > last) out.push({ text: text.slice(last, at), hit: false });
    out.push({ text: m[0], hit: true });
    last = at + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), hit: false });
  return out.length > 0 ? out : [{ text, hit: false }];
}
