// Paths the OS passes on the command line when a .heap file is opened with heaplens (file association).

import path from 'node:path';

/** Arguments that look like paths (not switches), made absolute against `cwd`. */
export function heapPathsFromArgv(args: string[], cwd: string = process.cwd()): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (a === '' || a.startsWith('-') || a === '.') continue;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(a)) continue;
    out.push(path.resolve(cwd, a));
  }
  return out;
}
