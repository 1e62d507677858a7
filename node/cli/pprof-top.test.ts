// `heaplens top` on pprof profiles and massif files (issue 45 items 3, 4): a delta profile's rows by magnitude as
// `go tool pprof -top` orders them, a sample type that counts nothing prints no rows of 0 B but a line saying so,
// massif's default and peak snapshots. Expected figures: go tool pprof -top of the same files (fixtures/go/delta,
// stored by make-go-delta.sh) and ms_print's report (fixtures/massif).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { runCaptured } from './run-captured.js';
import { FIXTURES } from '../../tools/fixtures.js';

const GO = join(FIXTURES, '..', 'go');

describe('top on pprof profiles', () => {
  it("a delta profile: rows by magnitude as pprof -top orders them; main.warm's negative flat equals -top's", async () => {
    const r = await runCaptured('top', join(GO, 'delta', 'heap-delta.pb.gz'), '--json', '-n', '1000');
    const out = JSON.parse(r.out) as { stacks: { liveBytes: number; frames: { function?: string }[] }[] };
    const v = out.stacks.map((s) => s.liveBytes);
    expect(v[0]).toBeLessThan(0);
    for (let i = 1; i < v.length; i++) expect(Math.abs(v[i - 1])).toBeGreaterThanOrEqual(Math.abs(v[i]));
    const ref = readFileSync(join(GO, 'delta', 'heap-delta.pprof-top.inuse_space.txt'), 'utf8');
    for (const fn of ['main.warm', 'main.grow']) {
      const want = Number(new RegExp(`^\\s*(-?\\d+)B .*\\s${fn.replace('.', '\\.')}$`, 'm').exec(ref)![1]);
      const ours = out.stacks.filter((s) => s.frames[0]?.function === fn).reduce((a, s) => a + s.liveBytes, 0);
      expect([fn, ours]).toEqual([fn, want]);
    }
  });

  it("a delta profile's shares are of the magnitudes' sum, as pprof -top's flat%", async () => {
    const r = await runCaptured('top', join(GO, 'delta', 'heap-delta.pb.gz'), '-n', '3');
    const ref = readFileSync(join(GO, 'delta', 'heap-delta.pprof-top.inuse_space.txt'), 'utf8');
    for (const fn of ['main.warm', 'main.grow']) {
      const pct = Number(new RegExp(`^\\s*-?\\d+B\\s+([\\d.]+)% .*\\s${fn.replace('.', '\\.')}$`, 'm').exec(ref)![1]);
      const row = r.out.split('\n').find((l) => l.includes(`${fn} (`))!;
      // pprof prints two decimals, top one
      expect([fn, Number(/\s(-?[\d.]+)%\s/.exec(row)![1])]).toEqual([fn, Math.round(pct * 10) / 10]);
    }
  });

  it('a sample type that is 0 everywhere: no rows of 0 B, a line saying so', async () => {
    // the real allocs profile with its in-use values zeroed, as a profile taken once everything was freed
    const p = Profile.decode(gunzipSync(readFileSync(join(GO, 'allocs', 'allocs.pb.gz'))));
    const names = p.sampleType.map((t) => p.stringTable.strings[Number(t.type)]);
    for (const s of p.sample)
      s.value = s.value.map((v, i) => (names[i] === 'inuse_space' || names[i] === 'inuse_objects' ? 0 : v));
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-top-'));
    const file = join(dir, 'freed.pb.gz');
    writeFileSync(file, gzipSync(p.encode()));
    const r = await runCaptured('top', file, '--sample', 'inuse_space', '--no-symbols');
    expect(r.out).toMatch(/every stack's inuse_space is 0: \d+ rows not shown \(another sample type: --sample\)/);
    expect(r.out).not.toMatch(/^\s+1\s+0 B/m);
  });

  it("a massif file: top opens on the last snapshot with a tree, --snapshot peak on ms_print's peak", async () => {
    const dir = join(FIXTURES, '..', 'massif');
    const ms = readFileSync(join(dir, 'massif.out.pages.ms_print.txt'), 'utf8');
    const detailed = /Detailed snapshots: \[(.*)\]/
      .exec(ms)![1]
      .split(',')
      .map((x) => parseInt(x, 10));
    const peak = Number(/(\d+) \(peak\)/.exec(ms)![1]);
    const seqOf = async (...extra: string[]) =>
      (
        JSON.parse((await runCaptured('top', join(dir, 'massif.out.pages'), '--json', '-n', '1', ...extra)).out) as {
          processes: { snapshot: { seq: number; trigger: string } }[];
        }
      ).processes[0].snapshot;
    expect((await seqOf()).seq).toBe(detailed[detailed.length - 1]);
    expect(await seqOf('--snapshot', 'peak')).toMatchObject({ seq: peak, trigger: 'high-water' });
  });
});
