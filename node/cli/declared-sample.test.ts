// Every sample type a pprof profile declares is a --sample choice. Go's runtime/pprof writes only the four built-in
// types, so fixtures/go/extra-types/make-extra-types.mjs derives a profile from a real one (pprof-series/heap.003)
// with pprof-format, declaring `samples/count` and `freed_space/bytes` besides; the expected totals are what
// `go tool pprof -top -unit=B -sample_index=NAME` reads from that file (stored beside it), and -raw's columns.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import { runCaptured } from './run-captured.js';

const DIR = join(FIXTURES, '..', 'go', 'extra-types');
const FILE = join(DIR, 'extra.pb.gz');
/** `go tool pprof -top -unit=B -sample_index=t`: "… of 25221818B total" */
const pprofTotal = (t: string, base = 'extra'): number =>
  Number(/ of (\d+)B total$/m.exec(readFileSync(join(DIR, `${base}.pprof-top.${t}.txt`), 'utf8'))![1]);

interface TopJson {
  processes: { sample: string; total: number }[];
  stacks: { value?: number; liveBytes: number }[];
}

const top = async (...more: string[]) => topOf(FILE, ...more);
const topOf = async (file: string, ...more: string[]) => {
  const r = await runCaptured('top', file, '--no-symbols', '--json', '-n', '1000', ...more);
  expect(r.code).toBe(0);
  const j = JSON.parse(r.out) as TopJson;
  return { ...j.processes[0], stackSum: j.stacks.reduce((a, x) => a + (x.value ?? x.liveBytes), 0) };
};

describe('a sample type the profile declares beyond the four', () => {
  it('the fixture declares them, as go tool pprof -raw reads it', () => {
    const raw = readFileSync(join(DIR, 'extra.pprof-raw.txt'), 'utf8');
    expect(raw).toMatch(
      /^alloc_objects\/count alloc_space\/bytes inuse_objects\/count inuse_space\/bytes samples\/count freed_space\/bytes$/m,
    );
  });

  for (const t of ['samples', 'freed_space', 'inuse_space'])
    it(`--sample ${t} totals what go tool pprof -sample_index=${t} reads`, async () => {
      const p = await top('--sample', t);
      expect([p.sample, p.total, p.stackSum]).toEqual([t, pprofTotal(t), pprofTotal(t)]);
    });

  it('a count reads as a count, bytes as bytes', async () => {
    const count = await runCaptured('top', FILE, '--no-symbols', '-n', '1', '--sample', 'samples');
    expect(count.out).toMatch(/: 26 samples$/m);
    const bytes = await runCaptured('top', FILE, '--no-symbols', '-n', '1', '--sample', 'freed_space');
    expect(bytes.out).toMatch(/: [\d.]+ MiB freed_space$/m);
  });

  it('a type no profile declares is refused with the ones it can show', async () => {
    const r = await runCaptured('top', FILE, '--no-symbols', '--sample', 'tlab');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/--sample tlab: no profile of this job declares that sample type/);
    expect(r.err).toMatch(
      /inuse_space, inuse_objects, alloc_space, alloc_objects, space, objects, samples, freed_space/,
    );
  });

  it('and no "sample types not shown" note any more', async () => {
    const r = await runCaptured('summary', FILE);
    expect(r.out + r.err).not.toMatch(/not shown/);
  });

  it('a profile of its own types only (samples/count, bytes/bytes) opens on the last, as go tool pprof does', async () => {
    const own = join(DIR, 'own-types.pb.gz');
    expect(readFileSync(join(DIR, 'own-types.pprof-top.bytes.txt'), 'utf8')).toMatch(/^Type: bytes$/m);
    const d = await topOf(own);
    expect([d.sample, d.total, d.stackSum]).toEqual([
      'bytes',
      pprofTotal('bytes', 'own-types'),
      pprofTotal('bytes', 'own-types'),
    ]);
    const n = await topOf(own, '--sample', 'samples');
    expect([n.sample, n.total]).toEqual(['samples', pprofTotal('samples', 'own-types')]);
  });
});
