// A Go delta profile's flame graph (fixtures/go/make-go-delta.sh: the second profile minus the first, negative where
// its window freed): each node's width is the sum of its stacks' magnitudes (FlameData.absTotal), so children tile
// their parent and the root is as wide as pprof's own total; the labels keep the signed figures. Expected:
// `go tool pprof -top -sample_index=…` ("Total samples", the sum of magnitudes; flat of main.warm and main.grow) and
// `go tool pprof -raw` (signed sums) of the same file, stored by the script.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { FIXTURES, pprofRawSums } from '../../tools/fixtures.js';
import type { SampleType } from '../model/vocab.js';
import { QuerySession } from './session.js';
import { flameTree, type FlameData } from './flame.js';

const DELTA = join(FIXTURES, '..', 'go', 'delta');
const TYPES: SampleType[] = ['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects'];

/** go tool pprof -top: "Total samples" (the sum of magnitudes) and the flat of main.* functions */
function top(type: string): { total: number; flat: Map<string, number> } {
  const text = readFileSync(join(DELTA, `heap-delta.pprof-top.${type}.txt`), 'utf8');
  const total = Number(/Total samples = (-?\d+)B?/.exec(text)![1]);
  const flat = new Map([...text.matchAll(/^\s*(-?\d+)B? .*\s(main\.\w+)$/gm)].map((m) => [m[2], Number(m[1])]));
  return { total, flat };
}

/** go tool pprof -raw: the sample type's values summed, signed */
const rawSum = (type: string): number =>
  pprofRawSums(readFileSync(join(DELTA, 'heap-delta.pprof-raw.txt'), 'utf8'))[type];

/** the nodes whose children's widths add up past their own (a layout that overlaps) */
function overflowing(f: FlameData, width: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let n = 0; n < f.size; n++) {
    let sum = 0;
    for (let c = n + 1; c < f.end[n]; c = f.end[c]) sum += width[c];
    if (width[n] < 0 || sum > width[n] + 1e-6) out.push(n);
  }
  return out;
}

describe("a delta profile's flame graph", () => {
  it('widths by magnitude: children tile their parent, the root as wide as pprof -top’s total; labels signed', async () => {
    const job = await loadJob(await collectInputFiles([join(DELTA, 'heap-delta.pb.gz')]));
    const s = new QuerySession();
    s.open(job);
    for (const sample of TYPES) {
      const view = { mode: 'native' as const, hideAllocator: true, sample };
      const want = top(sample);
      const { flame } = flameTree(s, { proc: 0, snapshot: 0, base: null, view });
      expect([sample, flame.targetGrand]).toEqual([sample, rawSum(sample)]);
      // the width the flame graph draws (components/FlameGraph.svelte): magnitudes where a figure is negative
      const width = flame.absTotal ?? flame.total;
      expect([sample, flame.absTotal !== null]).toEqual([sample, rawSum(sample) !== want.total]);
      expect([sample, width[0]]).toEqual([sample, want.total]);
      expect([sample, overflowing(flame, width)]).toEqual([sample, []]);
      // bottom-up, the leaves are the roots' children: main.* as pprof -top's flat, signed, as wide as its magnitude
      const { flame: up } = flameTree(s, { proc: 0, snapshot: 0, base: null, view, shape: { kind: 'inverted' } });
      // (unsymbolized here: a leaf is named by the profile's own function for its address)
      const fnOf = (c: number): string | undefined =>
        job.processes[0].profileSymbols?.get(up.frames[up.key[c]].address)?.[0]?.function;
      for (const [fn, flat] of want.flat) {
        let [total, width] = [0, 0];
        for (let c = 1; c < up.size; c = up.end[c])
          if (fnOf(c) === fn) [total, width] = [total + up.total[c], width + (up.absTotal ?? up.total)[c]];
        expect([sample, fn, total, width]).toEqual([sample, fn, flat, Math.abs(flat)]);
      }
    }
    // in use, the signed totals cannot be widths: main.warm's branch is below 0 and its parents narrower than it
    const { flame } = flameTree(s, {
      proc: 0,
      snapshot: 0,
      base: null,
      view: { mode: 'native', hideAllocator: true, sample: 'inuse_space' },
    });
    expect(top('inuse_space').flat.get('main.warm')).toBeLessThan(0);
    expect(overflowing(flame, flame.total).length).toBeGreaterThan(0);
  });

  it('a profile without negative figures keeps its totals as widths (no second column)', async () => {
    const job = await loadJob(await collectInputFiles([join(FIXTURES, '..', 'go', 'go-heap.prof')]));
    const s = new QuerySession();
    s.open(job);
    const { flame } = flameTree(s, { proc: 0, snapshot: 0, base: null, view: { mode: 'native', hideAllocator: true } });
    expect(flame.absTotal).toBeNull();
    expect(overflowing(flame, flame.total)).toEqual([]);
  });
});
