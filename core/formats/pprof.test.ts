// pprof protobuf profiles written by Go's runtime/pprof (fixtures/go/make-go-fixture.sh), checked against what
// `go tool pprof -raw` reads from the same files (stored by the script beside them).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../../tools/fixtures.js';
import { parsePprof, pprofHeap, pprofIdentity, wellFormedPrefix } from './pprof.js';

const GO = join(FIXTURES, '..', 'go');
const SERIES = join(GO, 'pprof-series');
const decoded = (path: string) => new Uint8Array(gunzipSync(readFileSync(path)));

/** go tool pprof -raw: the sample types' line and each sample's values. */
function raw(path: string): { types: string[]; rows: number[][]; time: string | null } {
  const text = readFileSync(path, 'utf8');
  const types = /^Samples:\n(.*)$/m.exec(text)![1].trim().split(/\s+/);
  const rows = [...text.matchAll(/^\s+(-?\d+(?:\s+-?\d+)*):/gm)]
    .map((m) => m[1].split(/\s+/).map(Number))
    .filter((r) => r.length === types.length);
  return { types, rows, time: /^Time: (.*)$/m.exec(text)?.[1] ?? null };
}

describe('pprof reader', () => {
  for (const n of ['001', '002', '003']) {
    it(`heap.${n}.pb.gz: every sample type totals what go tool pprof -raw reads`, () => {
      const ref = raw(join(SERIES, `heap.${n}.pprof-raw.txt`));
      const { profile, problems } = parsePprof(decoded(join(SERIES, `heap.${n}.pb.gz`)));
      expect(problems).toEqual([]);
      expect(profile!.sampleTypes.map((t) => `${t.type}/${t.unit}`)).toEqual(ref.types);
      ref.types.forEach((_, k) => {
        const ours = profile!.samples.reduce((s, x) => s + x.values[k], 0);
        expect([ref.types[k], ours]).toEqual([ref.types[k], ref.rows.reduce((s, r) => s + r[k], 0)]);
      });
      expect(profile!.period).toBe(65536);
      expect(profile!.periodType).toEqual({ type: 'space', unit: 'bytes' });
      // pprof prints the profile's time_nanos in UTC to the nanosecond
      const t = new Date(profile!.timeNanos! / 1e6).toISOString().slice(0, 19).replace('T', ' ');
      expect(ref.time).toContain(t);
      const heap = pprofHeap(profile!, 0);
      if ('notHeap' in heap) throw new Error(heap.notHeap);
      // the program's own functions are named by the profile; the binary is a mapping
      const names = new Set([...heap.symbols.values()].flat().map((f) => f.function));
      expect(names.has('main.keepSmall')).toBe(true);
      expect(heap.mapsText).toMatch(/^[0-9a-f]+-[0-9a-f]+ r-xp [0-9a-f]+ 00:00 0 \/\S+heapgo$/m);
      const live = heap.records.reduce((s, r) => s + r.counts.liveBytes, 0);
      const k = ref.types.indexOf('inuse_space/bytes');
      expect(live).toBe(ref.rows.reduce((s, r) => s + r[k], 0));
    });
  }

  it('the workload grows as the program did: 2,000 × 4 KiB, then 64 × 256 KiB more live', () => {
    const live = ['001', '002', '003'].map((n) => {
      const h = pprofHeap(parsePprof(decoded(join(SERIES, `heap.${n}.pb.gz`))).profile!, 0);
      if ('notHeap' in h) throw new Error(h.notHeap);
      return h.records.reduce((s, r) => s + r.counts.liveBytes, 0);
    });
    // ~125 samples of 4 KiB at one per 64 KiB: σ ≈ 9 %, so 4σ either way
    expect(live[0] / (2000 * 4096)).toBeGreaterThan(0.6);
    expect(live[0] / (2000 * 4096)).toBeLessThan(1.4);
    expect((live[1] - live[0]) / (64 * 262144)).toBeGreaterThan(0.8);
    expect((live[1] - live[0]) / (64 * 262144)).toBeLessThan(1.2);
  });

  it('a CPU profile is named, not read', () => {
    const { profile } = parsePprof(decoded(join(GO, 'cpu.pb.gz')));
    const h = pprofHeap(profile!, 0);
    expect('notHeap' in h && h.notHeap).toMatch(
      /^a pprof CPU profile \(sample types samples\/count, cpu\/nanoseconds\)/,
    );
  });

  it('bad varints and lengths past the end: the fields before them are read, the problem names its byte', () => {
    const good = decoded(join(SERIES, 'heap.003.pb.gz'));
    const cut = good.subarray(0, Math.floor(good.length / 2));
    const r = parsePprof(cut);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0].message).toMatch(/says \d+ bytes but the file has \d+ left/);
    expect(r.problems[0].byteOffset).toBeLessThan(cut.length);
    expect(r.profile!.sampleTypes.length).toBe(4);
    // a huge length on the first field
    const huge = new Uint8Array([0x5a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0x01]);
    expect(wellFormedPrefix(huge)).toEqual({ end: 0, problem: expect.objectContaining({ byteOffset: 0 }) });
    // a varint that never ends
    const bad = new Uint8Array([0x60, ...new Array(12).fill(0xff)]);
    expect(wellFormedPrefix(bad).problem!.message).toMatch(/bad varint/);
    expect(parsePprof(bad).profile!.samples).toEqual([]);
  });

  it("pprofIdentity: the profile's time without decoding it, and no pid where Go writes no labels", () => {
    for (const n of ['001', '003']) {
      const b = decoded(join(SERIES, `heap.${n}.pb.gz`));
      // the executable: the main mapping's name (Go's own build ID is not a GNU one, so no id)
      expect(pprofIdentity(b)).toEqual({
        timeMs: parsePprof(b).profile!.timeNanos! / 1e6,
        pid: null,
        pids: 0,
        exe: 'heapgo',
      });
      // cut anywhere: no throw, at most less known
      expect(() => pprofIdentity(b.subarray(0, b.length >> 1))).not.toThrow();
    }
    expect(pprofIdentity(new Uint8Array([0x4a, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toEqual({
      timeMs: null,
      pid: null,
      pids: 0,
      exe: null,
    });
  });
});
