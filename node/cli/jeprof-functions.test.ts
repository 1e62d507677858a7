// Per-function totals of a sampled, symbolized dump against jeprof's --text report of the same dump:
// an independent check of per-stack unbiasing and of symbolization together.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runJson } from './run-captured.js';
import { FIXTURES, fixturePath } from '../../tools/fixtures.js';

/** jeprof --text lines: flat flat% sum% cum cum% name */
function jeprofFunctions(rel: string): Map<string, { flat: number; cum: number }> {
  const out = new Map<string, { flat: number; cum: number }>();
  for (const line of readFileSync(fixturePath(rel), 'utf8').split('\n')) {
    const m = /^\s*(-?\d+)\s+\S+%\s+\S+%\s+(-?\d+)\s+\S+%\s+(.+)$/.exec(line);
    if (m) out.set(m[3].trim(), { flat: Number(m[1]), cum: Number(m[2]) });
  }
  return out;
}

describe('per-function totals vs jeprof', () => {
  it("the last sampled dump: cum of leak_steady, churn, plateau, worker, main and flat of make_node equal jeprof's", async () => {
    const [, last] = readFileSync(fixturePath('references/jeprof-sampled-base.files'), 'utf8').trim().split('\t');
    const doc = await runJson<{ stacks: { liveBytes: number; frames: { function?: string | null }[] }[] }>(
      'top',
      `${FIXTURES}/job/${last}`,
      '-n',
      '100000',
      '--json',
      '--symbols',
      `${FIXTURES}/bin`,
    );
    const cum = new Map<string, number>();
    const flat = new Map<string, number>();
    for (const s of doc.stacks) {
      const names = new Set(s.frames.map((f) => f.function ?? ''));
      for (const n of names) cum.set(n, (cum.get(n) ?? 0) + s.liveBytes);
      const leaf = s.frames[0]?.function ?? '';
      flat.set(leaf, (flat.get(leaf) ?? 0) + s.liveBytes);
    }
    const ref = jeprofFunctions('references/jeprof-sampled-last.txt');
    for (const fn of ['leak_steady', 'churn', 'plateau', 'worker', 'main']) {
      expect(ref.has(fn), fn).toBe(true);
      expect(Math.abs((cum.get(fn) ?? 0) - ref.get(fn)!.cum), fn).toBeLessThanOrEqual(1);
    }
    expect(Math.abs((flat.get('make_node') ?? 0) - ref.get('make_node')!.flat)).toBeLessThanOrEqual(1);
  });
});
