// Process entry point: runs the CLI with the real stdout/stderr and sets the exit code.

import { run } from './main.js';
import { terminalColumns } from './format.js';

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
