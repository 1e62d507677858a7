// Process entry point: runs the CLI with the real stdout/stderr and sets the exit code.

import { setFlagsFromString } from 'node:v8';
import { run } from './main.js';
import { terminalColumns } from './format.js';

/**
 * V8 optimizes a JS function once it has run about 66 KB of bytecode (its default interrupt budget, made for
 * long-lived pages): in a CLI run of a fraction of a second the optimizing compiler's background work costs more
 * than it saves (`top -n 20` of a 1 MB python3.11 dump: 0.84× the CPU with a 1 MB budget). Functions that stay hot on large
 * inputs are still optimized (`summary` of a 105 MB process and of a 0.78 GB job: the same CPU or less). Set before
 * any command runs: V8 reads it whenever a function's budget is (re)set.
 */
setFlagsFromString('--interrupt-budget=1000000');

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
