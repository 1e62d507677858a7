// Process entry point: runs the CLI with the real stdout/stderr and sets the exit code.

import { run } from './main.js';
import { terminalColumns } from './format.js';
import { applyCliV8Flags } from './v8-flags.js';

// (already set when bin/heaplens.js runs the bundle through code-cache.ts; this covers a direct run of this file)
applyCliV8Flags();

// `heaplens top … | head`: the reader went away; stop quietly rather than die on EPIPE.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

run(process.argv.slice(2), {
  columns: terminalColumns(process.stdout, process.env),
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`heaplens: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
