// The usage text fitted to the terminal: a line too long wraps with its continuation under the column its
// description starts at (after the run of spaces that ends the synopsis or the option), not at the line's start.

import { wrapLines } from '../format.js';

export function wrapUsage(text: string, columns: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.length <= columns) return line;
      // the description column: after the first run of 2+ spaces that follows text; a line that is all
      // description (a continuation already) keeps its own indent
      const m = /^(\s*\S.*?\s{2,})\S/.exec(line);
      const col = m ? m[1].length : (/^\s*/.exec(line)?.[0].length ?? 0);
      if (col >= columns - 20) return wrapLines(line, columns);
      const words = line.slice(col).split(' ');
      const out: string[] = [];
      let cur = line.slice(0, col);
      let fresh = true;
      for (const w of words) {
        if (!fresh && cur.length + 1 + w.length > columns) {
          out.push(cur);
          cur = ' '.repeat(col) + w;
        } else cur += (fresh ? '' : ' ') + w;
        fresh = false;
      }
      out.push(cur);
      return out.join('\n');
    })
    .join('\n');
}
