// The CLI run in-process with its output captured: what the tests of every room call instead of writing it again.
import { run } from './main.js';

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function runCaptured(...argv: string[]): Promise<Captured> {
  return runCapturedAt(undefined, ...argv);
}

/** The same at a terminal width (text tables fit it, longer lines wrap), as node/cli/heaplens.ts passes it. */
export async function runCapturedAt(columns: number | undefined, ...argv: string[]): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s), columns });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The JSON document a command printed (`--json`); throws with its exit code and stderr when it did not exit 0. */
export async function runJson<T>(...argv: string[]): Promise<T> {
  const r = await runCaptured(...argv);
  if (r.code !== 0) throw new Error(`heaplens ${argv.join(' ')} exited ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as T;
}
