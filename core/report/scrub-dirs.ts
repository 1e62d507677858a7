// Sanitizing free text (warnings): no part of a directory name may survive, including names with spaces,
// which a token-based rule cuts in the middle ("/home/my dir/x.heap" → "my x.heap"). The known paths of
// the report (files, process keys, mappings) give the exact directories; they go first, longest first;
// then a token rule catches the paths the text names that the report does not know.

/** Every directory prefix of each path: "/a/b c/x.heap" → "/a", "/a/b c"; "job/x.heap" → "job". */
export function directoriesOf(paths: Iterable<string>): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    for (let i = p.indexOf('/', 1); i > 0; i = p.indexOf('/', i + 1)) dirs.add(p.slice(0, i));
  }
  dirs.delete('');
  return [...dirs].sort((a, b) => b.length - a.length);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const BEFORE = `(^|[\\s'"\`(\\[=:,])`;
const AFTER = `(?=$|[\\s'"\`)\\],:;.])`;

/** Text with every directory part removed: "dir/x" → "x", a bare directory → "…". */
export function scrubDirectories(text: string, knownDirs: readonly string[]): string {
  let t = text;
  for (const d of knownDirs) {
    if (!t.includes(d)) continue;
    t = t.split(d + '/').join('');
    t = t.replace(new RegExp(BEFORE + escapeRe(d) + AFTER, 'g'), '$1…');
  }
  // paths the report does not know: every run of non-blank characters ending in "/" before a name
  return t.replace(/(?:[^\s'"`()[\]/]*\/)+(?=[^\s/])/g, '');
}
