// A Go delta profile (fixtures/go/make-go-delta.sh: net/http/pprof's ?seconds=2, the second profile minus the
// first) through a dataset: its negative values are written to Parquet and read back as pprof keeps them, so
// `summary`, `top` and `growth` on the dataset give the profile's own figures. Expected: `go tool pprof -raw` (each
// sample's four values, summed signed) and `go tool pprof -top -sample_index=…` (flat by function) of the same
// file, stored by the script — and the same command on the profile itself.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { FIXTURES, pprofRawSums } from '../../tools/fixtures.js';

const DELTA = join(FIXTURES, '..', 'go', 'delta');
const PROFILE = join(DELTA, 'heap-delta.pb.gz');
const TYPES = ['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects'] as const;

const temps: string[] = [];
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

/** go tool pprof -raw: each sample type's values summed, signed */
const rawSums = (): Record<string, number> =>
  pprofRawSums(readFileSync(join(DELTA, 'heap-delta.pprof-raw.txt'), 'utf8'));

/**
 * go tool pprof -top -sample_index=<type>: flat by function of its first rows whose function is only ever a leaf
 * (flat = cum, not "(inline)"): `top` rows are stacks named by their leaf location's outermost function, so a
 * function with an inlined callee at its leaf holds the callee's bytes too (a matter of names, not of values).
 */
function topRows(type: string, n = 8): Map<string, number> {
  const text = readFileSync(join(DELTA, `heap-delta.pprof-top.${type}.txt`), 'utf8');
  const rows = [...text.matchAll(/^\s*(-?\d+)B?\s+[\d.]+%\s+-?[\d.]+%\s+(-?\d+)B?\s+[\d.]+%\s+(\S+)( \(inline\))?$/gm)];
  return new Map(rows.slice(0, n).flatMap((m) => (m[4] || m[1] !== m[2] ? [] : [[m[3], Number(m[1])] as const])));
}

interface TopJson {
  /** value: the row's figure in the sample type asked for, when it is not the live columns */
  stacks: { value?: number; liveBytes: number; liveObjects: number; frames: { function?: string }[] }[];
}

describe('a Go delta profile through a dataset', () => {
  it('summary, top for each sample type and growth give the signed figures pprof gives, as on the profile itself', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'heaplens-delta-dataset-'));
    temps.push(dir);
    const ds = join(dir, 'ds');
    // as a user ingests it: the profile's own function names kept in the dataset
    await runCaptured('ingest', PROFILE, '-o', ds);
    const raw = rawSums();
    expect(raw.inuse_space).toBeLessThan(0);

    // summary: the snapshot's live bytes and objects, signed sums of -raw's inuse columns
    const summary = JSON.parse((await runCaptured('summary', ds, '--json')).out) as {
      processes: { snapshots: { liveBytes: number; liveObjects: number }[] }[];
    };
    expect(summary.processes[0].snapshots[0]).toMatchObject({
      liveBytes: raw.inuse_space,
      liveObjects: raw.inuse_objects,
    });

    // top, each sample type: main.warm (freed inside the window: negative in use) and main.grow as pprof -top
    for (const type of TYPES) {
      const rows = async (input: string): Promise<TopJson['stacks']> =>
        (JSON.parse((await runCaptured('top', input, '--json', '-n', '10000', '--sample', type)).out) as TopJson)
          .stacks;
      const fromDataset = await rows(ds);
      const value = (s: TopJson['stacks'][number]): number =>
        s.value ?? (type === 'inuse_objects' ? s.liveObjects : s.liveBytes);
      // pprof -top's first rows: main.warm (freed inside the window: negative in use), main.grow, the runtime's own
      const want = topRows(type);
      expect(want.size).toBeGreaterThanOrEqual(2);
      const ours = new Map<string, number>();
      for (const s of fromDataset) {
        const fn = s.frames[0]?.function ?? '';
        if (want.has(fn)) ours.set(fn, (ours.get(fn) ?? 0) + value(s));
      }
      expect([type, Object.fromEntries(ours)]).toEqual([type, Object.fromEntries(want)]);
      // every row as the profile itself gives it
      expect(fromDataset).toEqual(await rows(PROFILE));
      // the column the type counts sums to -raw's signed total
      expect([type, fromDataset.reduce((a, s) => a + value(s), 0)]).toEqual([type, raw[type]]);
    }
    expect(topRows('inuse_space').get('main.warm')).toBeLessThan(0);

    // growth: the same stacks and figures from the dataset's SQL ranking as from the profile (negative ones kept)
    const growth = async (input: string): Promise<unknown> => {
      const g = JSON.parse((await runCaptured('growth', input, '--json', '-n', '1000')).out) as {
        stacks: { lastBytes: number; frames: { function?: string }[] }[];
      };
      return g.stacks.map((s) => [s.frames[0]?.function, s.lastBytes]);
    };
    const fromDataset = (await growth(ds)) as [string, number][];
    expect(fromDataset).toEqual(await growth(PROFILE));
    const warm = fromDataset.filter(([f]) => f === 'main.warm').reduce((a, [, b]) => a + b, 0);
    expect(warm).toBe(topRows('inuse_space').get('main.warm'));
  });
});
