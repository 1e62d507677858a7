// The README's example outputs are real output (issue 13, item 12): each "$ node bin/heaplens.js …" line of
// its example block is run, and what it prints on stdout must be the lines below it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
/** the terminal width the README's examples are shown at (output fits the terminal: node/cli/format.ts) */
const README_COLUMNS = 160;
const BUILT = resolve(ROOT, 'dist/node/cli/heaplens.js');

/** [command, expected output] pairs from the README's "$ node bin/heaplens.js" examples. */
function examples(): [string, string][] {
  const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
  const out: [string, string][] = [];
  for (const block of readme.split('```').filter((_, i) => i % 2 === 1)) {
    const parts = block.split(/^\$ /m).slice(1);
    for (const p of parts) {
      const nl = p.indexOf('\n');
      const cmd = p.slice(0, nl);
      if (cmd.startsWith('node bin/heaplens.js ')) out.push([cmd, p.slice(nl + 1).replace(/\n+$/, '')]);
    }
  }
  return out;
}

describe('README examples', () => {
  const list = examples();
  // npm test builds first; a missing build fails here rather than passing silently with nothing checked
  it('the CLI is built', () => expect(existsSync(BUILT), `${BUILT} is missing: run npm run build`).toBe(true));
  it('there are examples to check', () => expect(list.length).toBeGreaterThanOrEqual(2));
  for (const [cmd, want] of list) {
    it(cmd, () => {
      const args = cmd.split(' ').slice(1);
      const got = execFileSync(process.execPath, args, {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, HEAPLENS_SYMBOL_CACHE: 'off', COLUMNS: String(README_COLUMNS) },
      });
      expect(got.replace(/\n+$/, '')).toBe(want);
    });
  }
});
