// `npm run build`, after tsc: the CLI as one CommonJS file, dist/node/cli/bundle/heaplens.cjs (what bin/heaplens.js
// runs through V8's code cache, node/cli/code-cache.ts), and the dump reader's worker as one ES module beside it,
// next to tsc's one-file-per-source dist/ (what tests, benches and the app import). Node 20's ES module loader costs
// ~0.3 ms a file and has no compile cache, and V8's code cache (vm.Script cachedData) takes scripts, not modules:
// `top` of a 1 MB dump went from 0.32 to 0.28 s (bench/README.md, issue 25 item 3). Lazily loaded parts stay lazy:
// esbuild evaluates a dynamically imported module's body only when it is first imported. esbuild rather than our
// own concatenation: it keeps the modules' evaluation order.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// at the depth of dist/node/cli/commands/: paths the modules resolve from import.meta.url stay right
const out = join(root, 'dist/node/cli/bundle');
rmSync(out, { recursive: true, force: true });

const common = { bundle: true, platform: 'node', target: 'node20', packages: 'external', sourcemap: true };
const results = await Promise.all([
  build({
    ...common,
    entryPoints: [join(root, 'dist/node/cli/heaplens.js')],
    outfile: join(out, 'heaplens.cjs'),
    format: 'cjs',
    // A script has no import.meta: the modules' own URL is the bundle's (same folder depth as before).
    define: { 'import.meta.url': '__heaplensUrl', 'import.meta.resolve': '__heaplensResolve' },
    banner: {
      js:
        'const __heaplensUrl = require("node:url").pathToFileURL(__filename).href;\n' +
        'const __heaplensResolve = (s) => { throw new Error(`import.meta.resolve(${s}) outside the ES modules`); };',
    },
    // packages through require, not import(): a script compiled with V8's cached data loses the dynamic import
    // callback (Node 20), and every package we use has a CommonJS entry
    supported: { 'dynamic-import': false },
    logLevel: 'silent',
  }),
  build({
    ...common,
    // dump-pool.ts starts it as ./dump-worker.js beside itself
    entryPoints: [join(root, 'dist/node/io/dump-worker.js')],
    outfile: join(out, 'dump-worker.js'),
    format: 'esm',
    logLevel: 'silent',
  }),
]);
// a warning here is a silent break (import.meta left empty in the script, say): refuse it
const warnings = results.flatMap((r) => r.warnings);
if (warnings.length > 0) {
  for (const w of warnings)
    console.error(`bundle-cli: ${w.text} (${w.location?.file ?? '?'}:${w.location?.line ?? '?'})`);
  process.exit(1);
}
