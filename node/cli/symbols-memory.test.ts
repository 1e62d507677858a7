// Symbolizer memory failure (issue 13, item 6): under an address-space limit (ulimit -v, as clusters set)
// WASM memory cannot be had; the command still prints its stacks, unsymbolized, with a note per module.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';

const root = resolve(import.meta.dirname, '..', '..');
const built = existsSync(resolve(root, 'dist/node/cli/heaplens.js'));
if (!built)
  console.warn(
    'symbols-memory.test: skipped, dist/ is not built (npm run build); the test runs the built CLI under ulimit -v',
  );

describe.skipIf(!built)('symbolizer under an address-space limit', () => {
  it('falls back to unsymbolized frames with a note, exit 0, no internal error', () => {
    // 3 GB of address space: enough for Node, too little for a WASM instance (V8 reserves 8+ GB per memory)
    const r = spawnSync('bash', ['-c', `ulimit -v 3000000 && exec node bin/heaplens.js top "${FIXTURES}/job" -n 1`], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, HEAPLENS_SYMBOL_CACHE: 'off' },
      timeout: 60_000,
    });
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/out of memory for the symbolizer .*frames left unsymbolized/);
    // the stacks are still there, as module+offset
    expect(r.stdout).toMatch(/libc\.so\.6\+0x[0-9a-f]+/);
  });
});
