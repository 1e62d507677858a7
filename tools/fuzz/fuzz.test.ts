// Deterministic mutation fuzzing of every reader of untrusted input over the real fixtures (issue 13,
// item 11) and of datasets (issue 24, dataset-fuzz.ts). `npm test` runs HEAPLENS_FUZZ_CASES (default 3,000) reader
// cases and HEAPLENS_FUZZ_DATASET_CASES (default 8) dataset cases; `npm run fuzz` many more. A case is named by
// target, seed and number, and reproduces from them.
import { describe, expect, it } from 'vitest';
import { mutate, Rng } from './mutate.js';
import { targets } from './targets.js';
import { datasetCase, prepareDatasetFuzz } from './dataset-fuzz.js';

const CASES = Number(process.env.HEAPLENS_FUZZ_CASES ?? 3000);
const SEED = Number(process.env.HEAPLENS_FUZZ_SEED ?? 1);
/**
 * Per input: the readers are linear and bounded, so a mutant taking longer than this base plus a share
 * per input megabyte (a gzip mutant may inflate to tens of MB, at pako's speed) is a hang.
 */
const TIME_BUDGET_MS = Number(process.env.HEAPLENS_FUZZ_BUDGET_MS ?? 3000);
const BUDGET_MS_PER_MB = 2000;
/** Resident memory bound for the whole run: inputs are at most a few MB, so more means a blow-up. */
const RSS_LIMIT = 1.5 * 1024 ** 3;
/** Dataset cases cost ~1 s each (a copy, a DuckDB rewrite, four commands and a re-ingest): few in `npm test`. */
const DATASET_CASES = Number(process.env.HEAPLENS_FUZZ_DATASET_CASES ?? 8);
/** Per dataset case, for all its commands together (each reads a few hundred KB of Parquet). */
const DATASET_BUDGET_MS = Number(process.env.HEAPLENS_FUZZ_DATASET_BUDGET_MS ?? 30_000);

describe('mutation fuzzing', async () => {
  // HEAPLENS_FUZZ_TARGET=name runs only that reader's cases (to search one reader longer)
  const all = (await targets()).filter(
    (t) => !process.env.HEAPLENS_FUZZ_TARGET || t.name === process.env.HEAPLENS_FUZZ_TARGET,
  );
  it(`${CASES} mutants over ${all.length} readers: results or their own errors, within ${TIME_BUDGET_MS} ms and ${RSS_LIMIT / 1024 ** 3} GiB each`, async () => {
    const rng = new Rng(SEED);
    const perTarget = new Map<string, { cases: number; slowestMs: number }>();
    for (let i = 0; i < CASES; i++) {
      const t = all[i % all.length];
      const seedIndex = rng.int(t.seeds.length);
      const bytes = mutate(t.seeds[seedIndex], rng);
      const id = `case ${i} (seed ${SEED}): ${t.name}, seed file ${seedIndex}, ${bytes.length} bytes`;
      const t0 = performance.now();
      try {
        await t.run(bytes, i);
      } catch (e) {
        throw new Error(`${id}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      const ms = performance.now() - t0;
      expect(ms, `${id} took ${ms.toFixed(0)} ms`).toBeLessThan(
        TIME_BUDGET_MS + (BUDGET_MS_PER_MB * bytes.length) / 1e6,
      );
      if (i % 50 === 0) expect(process.memoryUsage().rss, `${id}: RSS`).toBeLessThan(RSS_LIMIT);
      const s = perTarget.get(t.name) ?? { cases: 0, slowestMs: 0 };
      s.cases++;
      s.slowestMs = Math.max(s.slowestMs, Math.round(ms));
      perTarget.set(t.name, s);
    }
    console.log('fuzz:', Object.fromEntries(perTarget));
    expect([...perTarget.values()].reduce((a, s) => a + s.cases, 0)).toBe(CASES);
  }, 600_000);
});

describe('dataset mutation fuzzing', () => {
  it(`${DATASET_CASES} damaged copies of an ingested dataset: summary, top, growth and a re-ingest answer or refuse naming the file, touch nothing else, within ${DATASET_BUDGET_MS} ms each`, async () => {
    const fz = await prepareDatasetFuzz();
    const rng = new Rng(SEED);
    const kinds: string[] = [];
    try {
      for (let i = 0; i < DATASET_CASES; i++) kinds.push(await datasetCase(fz, i, rng, DATASET_BUDGET_MS));
    } finally {
      await fz.close();
    }
    console.log('dataset fuzz:', kinds);
    expect(kinds.length).toBe(DATASET_CASES);
  }, 3_600_000);
});

// Every finding of the review that led to issue 13, through the same targets and budget. The detailed
// expectations (warnings, lines, totals) live beside each reader (core/formats/limits.test.ts and others).
describe('fuzz findings kept as regression cases', async () => {
  const { gzipSync } = await import('node:zlib');
  const all = new Map((await targets()).map((t) => [t.name, t]));
  const enc = new TextEncoder();
  const head = 'heap_v2/524288\n  t*: 1: 4096 [0: 0]\n';
  const rec = '@ 0x10 0x20\n  t*: 1: 4096 [0: 0]\n';
  const cases: [string, string, Uint8Array][] = [
    [
      'sampled record with objects and 0 bytes (NaN/Infinity totals)',
      'dump',
      enc.encode(head + '@ 0x1\n  t*: 3: 0 [0: 0]\n' + rec),
    ],
    ['negative counts (negative stack bytes)', 'dump', enc.encode(head + '@ 0x1\n  t*: -5: -40960 [0: 0]\n' + rec)],
    ['a count of 2^64', 'dump', enc.encode(head + '@ 0x1\n  t*: 1: 18446744073709551616 [0: 0]\n')],
    ['a count of 400 digits', 'dump', enc.encode(head + `@ 0x1\n  t*: 1: ${'9'.repeat(400)} [0: 0]\n`)],
    ['a period of 1e23', 'dump', enc.encode('heap_v2/100000000000000000000000\n  t*: 1: 8 [0: 0]\n' + rec)],
    ['64 KB gzip of zeros (quadratic line carrying)', 'dump.gz', new Uint8Array(gzipSync(new Uint8Array(64 << 20)))],
    [
      'one stack of 200,000 frames',
      'dump',
      enc.encode(
        head +
          '@ ' +
          Array.from({ length: 200_000 }, (_, k) => '0x' + (k + 16).toString(16)).join(' ') +
          '\n  t*: 1: 4096 [0: 0]\n',
      ),
    ],
    [
      'a maps path with U+2028 and a flipped permission letter',
      'maps',
      enc.encode(
        '00400000-00401000 r-xp 00000000 08:01 7 /opt/a\u2028b\n00401000-00402000 r-xq 00001000 08:01 7 /opt/c\n',
      ),
    ],
    [
      'a maps path with terminal escapes',
      'maps',
      enc.encode('00400000-00401000 r-xp 00000000 08:01 7 /opt/\u001b]0;x\u0007\u001b[2J\u202Eos.bil\n'),
    ],
  ];
  const contextSeed = all.get('context lines')!.seeds[0];
  cases.push([
    'the context block of a capture, unchanged (its context is read and checked)',
    'context lines',
    contextSeed,
  ]);
  for (const [what, target, bytes] of cases) {
    it(what, async () => {
      const t0 = performance.now();
      await all.get(target)!.run(bytes, -1);
      expect(performance.now() - t0).toBeLessThan(TIME_BUDGET_MS);
    });
  }
});
