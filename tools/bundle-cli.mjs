// `npm run build`, after tsc: the CLI as a few bundled ES modules in dist/node/cli/bundle/ (what bin/heaplens.js
// runs), beside tsc's one-file-per-source dist/ (what tests, benches and the app import). Node 20's ES module loader
// costs ~0.3 ms a file (resolve, read, link) and has no compile cache: `top` of a 1 MB dump loaded ~60 files, and the
// bundle (each command, and each lazily loaded part, a chunk of its own; packages stay external) took its wall time
// from 0.32 to 0.30 s (bench/README.md, issue 25 item 3). esbuild rather than our own concatenation: it keeps the
// modules' evaluation order and the dynamic imports' split.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/node/cli/bundle');
rmSync(out, { recursive: true, force: true });
await build({
  // the worker is an entry of its own: dump-pool.ts starts it as ./dump-worker.js beside itself
  entryPoints: [join(root, 'dist/node/cli/heaplens.js'), join(root, 'dist/node/io/dump-worker.js')],
  // at the depth of dist/node/cli/commands/: paths the modules resolve from import.meta.url stay right
  outdir: out,
  entryNames: '[name]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
