// The CLI run in-process with its output captured: what the tests of every room call instead of writing it again.
import { run } from './main.js';

export async function runCaptured(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
