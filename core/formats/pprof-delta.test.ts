// pprof profiles beyond a plain heap profile: a Go delta profile (fixtures/go/make-go-delta.sh: net/http/pprof's
// ?seconds=2, the second profile minus the first), a profile of alloc_objects only (fixtures/go/allocs/
// make-alloc-only.mjs) and damaged ones (issue 46 S6, S12). Expected figures: `go tool pprof -raw` and `-top` of
// the same files, stored by the scripts.
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from './input-file.js';
import { parsePprof, pprofHeap, pprofIdentity } from './pprof.js';
import { loadJob } from '../load/load-job.js';

const GO = join(FIXTURES, '..', 'go');
const DELTA = join(GO, 'delta');
const decoded = (path: string) => new Uint8Array(gunzipSync(readFileSync(path)));
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

/** go tool pprof -raw: the sample types and each sample's values */
function raw(path: string): { types: string[]; rows: number[][] } {
  // the Samples section only (the Locations after it are "N: 0x…" lines)
  const text = readFileSync(path, 'utf8').split('\nLocations')[0];
  const types = /^Samples:\n(.*)$/m.exec(text)![1].trim().split(/\s+/);
  const rows = [...text.matchAll(/^\s+(-?\d+(?:\s+-?\d+)*):/gm)]
    .map((m) => m[1].split(/\s+/).map(Number))
    .filter((r) => r.length === types.length);
  return { types, rows };
}

/** go tool pprof -top: "Total samples = N" (pprof's total: the sum of the values' magnitudes) and flat by function */
function top(path: string): { total: number; flat: Map<string, number> } {
  const text = readFileSync(path, 'utf8');
  const unit = (v: string) => Number(v.replace(/B$/, ''));
  const total = unit(/Total samples = (-?[\d.]+B?)/.exec(text)?.[1] ?? /of (-?[\d.]+B?) total/.exec(text)![1]);
  const flat = new Map(
    [...text.matchAll(/^\s*(-?\d+B?)\s+[\d.]+%\s+-?[\d.]+%\s+-?\d+B?\s+[\d.]+%\s+(\S+)/gm)].map((m) => [
      m[2],
      unit(m[1]),
    ]),
  );
  return { total, flat };
}

describe('a Go delta profile', () => {
  const file = join(DELTA, 'heap-delta.pb.gz');
  const ref = raw(join(DELTA, 'heap-delta.pprof-raw.txt'));

  it("keeps negative values: every sample type's sum equals go tool pprof's, signed and in magnitude", () => {
    const { profile, problems } = parsePprof(decoded(file));
    expect(problems).toEqual([]);
    const heap = pprofHeap(profile!, 0);
    if ('notHeap' in heap) throw new Error(heap.notHeap);
    expect(heap.delta).toBe(true);
    expect(heap.notes).toContainEqual(expect.stringMatching(/^a delta profile/));
    expect(heap.info.problems).toEqual([]);
    const col = {
      inuse_space: 'liveBytes',
      inuse_objects: 'liveObjects',
      alloc_space: 'accumBytes',
      alloc_objects: 'accumObjects',
    } as const;
    for (const [type, c] of Object.entries(col)) {
      const k = ref.types.indexOf(`${type}/${type.endsWith('space') ? 'bytes' : 'count'}`);
      const signed = ref.rows.reduce((s, r) => s + r[k], 0);
      const ours = heap.records.map((r) => r.counts[c]);
      expect([type, ours.reduce((a, b) => a + b, 0)]).toEqual([type, signed]);
      // pprof's "Total samples" is the sum of magnitudes
      const t = top(join(DELTA, `heap-delta.pprof-top.${type}.txt`));
      expect([type, ours.reduce((a, b) => a + Math.abs(b), 0)]).toEqual([type, t.total]);
    }
    expect(ref.rows.some((r) => r[ref.types.indexOf('inuse_space/bytes')] < 0)).toBe(true);
  });

  it('loads as a snapshot whose live bytes are the signed sum, main.warm negative as in pprof -top', async () => {
    const job = await loadJob([mem('heap-delta.pb.gz', new Uint8Array(readFileSync(file)))]);
    expect(job.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^a delta profile/)]);
    const p = job.processes[0];
    const s = p.snapshots[0];
    const k = ref.types.indexOf('inuse_space/bytes');
    expect(s.live.bytes).toBe(ref.rows.reduce((a, r) => a + r[k], 0));
    // flat by the leaf's function, as pprof -top counts it
    const flat = new Map<string, number>();
    s.stackIds.forEach((id, r) => {
      const leaf = p.addresses.hex[p.stacks.frames[p.stacks.offsets[id]]];
      const fn = p.profileSymbols?.get(leaf)?.[0]?.function ?? leaf;
      flat.set(fn, (flat.get(fn) ?? 0) + s.liveBytes[r]);
    });
    const t = top(join(DELTA, 'heap-delta.pprof-top.inuse_space.txt'));
    for (const fn of ['main.warm', 'main.grow']) expect([fn, flat.get(fn)]).toEqual([fn, t.flat.get(fn)]);
    expect(flat.get('main.warm')).toBeLessThan(0);
  });
});

describe('a profile of alloc_objects only', () => {
  it('is read: its one type is the one shown, totals equal go tool pprof -top', async () => {
    const path = join(GO, 'allocs', 'alloc-objects-only.pb.gz');
    const t = top(join(GO, 'allocs', 'alloc-objects-only.pprof-top.txt'));
    const job = await loadJob([mem('alloc-objects-only.pb.gz', new Uint8Array(readFileSync(path)))]);
    expect(job.warnings).toEqual([]);
    const s = job.processes[0].snapshots[0];
    expect(s.accumulated.objects).toBe(t.total);
    expect(s.defaultSample).toBe('alloc_objects');
    const r = raw(join(GO, 'allocs', 'alloc-objects-only.pprof-raw.txt'));
    expect(s.accumulated.objects).toBe(r.rows.reduce((a, x) => a + x[0], 0));
  });
});

describe('damaged pprof profiles', () => {
  const good = decoded(join(GO, 'pprof-series', 'heap.003.pb.gz'));

  it('a sample whose packed field claims 65,535 bytes inside 5: named with its offset, the rest read', () => {
    // field 2 (Sample), 5 bytes: field 1 (location_id, packed) says 65,535 bytes, then one byte
    const bad = new Uint8Array([...good, 0x12, 0x05, 0x0a, 0xff, 0xff, 0x03, 0x01]);
    const r = parsePprof(bad);
    expect(r.problems).toEqual([
      {
        line: 0,
        byteOffset: good.length + 2,
        message: `the sample at byte ${good.length} is damaged: protobuf field 1 says 65535 bytes but its message has 1 left: cut off or damaged in a Sample (byte ${good.length + 2}); it is left out`,
      },
    ]);
    expect(r.profile!.samples.length).toBe(parsePprof(good).profile!.samples.length);
    // a location's line (a message two levels down) that is not whole
    const loc = new Uint8Array([...good, 0x22, 0x04, 0x22, 0x02, 0x08, 0x80]);
    expect(parsePprof(loc).problems[0].message).toMatch(
      new RegExp(`^the location at byte ${good.length} is damaged: protobuf field 1 is a bad varint in a Line`),
    );
  });

  it('time_nanos 2^63-1 is out of the dump-time bounds: a warning, the time not used', () => {
    // field 9 (time_nanos), varint 2^63-1: the last value of a field wins
    const late = new Uint8Array([...good, 0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    const r = parsePprof(late);
    expect(r.profile!.timeNanos).toBeNull();
    expect(r.problems.map((p) => p.message)).toEqual([
      "its time_nanos 9.22e18, past 2^53: 2262-04-11 is more than a year in the future; the file's modification time is used",
    ]);
    expect(pprofIdentity(late).timeMs).toBeNull();
  });

  it('more than 50 samples dropped: 50 said, then the count', () => {
    const p = Profile.decode(decoded(join(GO, 'allocs', 'allocs.pb.gz')));
    for (const s of p.sample.slice(0, 60)) s.value = s.value.map(() => 2n ** 60n);
    const r = parsePprof(p.encode());
    const heap = pprofHeap(r.profile!, 0);
    if ('notHeap' in heap) throw new Error(heap.notHeap);
    expect(heap.info.problems).toHaveLength(51);
    expect(heap.info.problems[0].message).toMatch(/^sample 0 dropped: its alloc_objects 1\.15e\+18 is past 2\^53/);
    expect(heap.info.problems[50].message).toBe('60 samples dropped in all (10 more than said above)');
    expect(gzipSync(p.encode()).length).toBeGreaterThan(0);
  });
});
