// Go's legacy text heap profiles (issue 13, item 13): "heap profile: … @ heap/N" with "#" frame comments and
// a "# runtime.MemStats" block, as runtime/pprof writes with debug=1 (fixtures/go/make-go-fixture.sh runs a
// Go program under the installed toolchain). Unsampled like Go's pprof: Poisson, rate N/2, per record.
// The reference is `go tool pprof` on the same file (stored by the script; recomputed when Go is here).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from './load-job.js';
import { HeapDumpParser } from '../formats/heap-dump.js';
import type { InputFile } from '../formats/input-file.js';
import { FIXTURES } from '../../tools/fixtures.js';

const GO = join(FIXTURES, '..', 'go');
const profile = join(GO, 'go-heap.prof');
const bytes = new Uint8Array(readFileSync(profile));
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});

/** Sample rows of `go tool pprof -raw`: [alloc_objects, alloc_space, inuse_objects, inuse_space]. */
function pprofRows(raw: string): number[][] {
  return [...raw.matchAll(/^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+):/gm)].map((m) => m.slice(1, 5).map(Number));
}
const sum = (rows: number[][], k: number) => rows.reduce((a, r) => a + r[k], 0);

const hasGo = spawnSync('go', ['version']).status === 0;
if (!hasGo)
  console.warn(
    'go-heap.test: `go` not found; compared with the stored `go tool pprof -raw` output only (apt-get install golang-go)',
  );

const n = Number(/@ heap\/(\d+)/.exec(new TextDecoder().decode(bytes.subarray(0, 200)))![1]);

describe('Go legacy heap profile', () => {
  const stored = pprofRows(readFileSync(join(GO, 'go-heap.pprof-raw.txt'), 'utf8'));

  it('is recognized as Go: Poisson at rate N/2, comment lines read as comments (no warnings)', () => {
    const p = new HeapDumpParser();
    p.push(bytes);
    const info = p.finish();
    expect(info.goRuntime).toBe(true);
    expect(info.sampling).toEqual({ kind: 'poisson', period: n / 2 });
    expect(info.problems).toEqual([]);
    // pprof leaves out records whose four values are all 0
    expect(p.records.filter((r) => r.counts.accumObjects + r.counts.liveObjects > 0).length).toBe(stored.length);
  });

  it("live and allocated totals equal go tool pprof's (it truncates each record to whole units)", async () => {
    const rows = hasGo
      ? pprofRows(
          execFileSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', profile], {
            encoding: 'utf8',
            env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
        )
      : stored;
    expect(rows.length).toBeGreaterThan(3);
    const job = await loadJob([mem('go/go-heap.prof', bytes)]);
    const s = job.processes[0].snapshots[0];
    // each of pprof's records is rounded down: ours may be above by less than one unit per record
    for (const [ours, k] of [
      [s.live.bytes, 3],
      [s.live.objects, 2],
      [s.accumulated.bytes, 1],
      [s.accumulated.objects, 0],
    ] as const) {
      expect(ours - sum(rows, k)).toBeGreaterThanOrEqual(0);
      expect(ours - sum(rows, k)).toBeLessThan(rows.length);
    }
    // and the workload's own arithmetic, within sampling noise: 2,000 × 4 KiB + 64 × 256 KiB are live
    expect(s.live.bytes / (2000 * 4096 + 64 * 262144)).toBeGreaterThan(0.8);
    expect(s.live.bytes / (2000 * 4096 + 64 * 262144)).toBeLessThan(1.2);
  });

  it('a heap/N profile without Go\'s "#" lines is read by the same rule, as pprof reads it', async () => {
    const plain = new Uint8Array(readFileSync(join(GO, 'go-heap-nocomments.prof')));
    const p = new HeapDumpParser();
    p.push(plain);
    const info = p.finish();
    expect(info.goRuntime).toBe(false);
    expect(info.sampling).toEqual({ kind: 'poisson', period: n / 2 });
    const rows = pprofRows(readFileSync(join(GO, 'go-heap-nocomments.pprof-raw.txt'), 'utf8'));
    expect(rows.length).toBeGreaterThan(3);
    const s = (await loadJob([mem('go/go-heap-nocomments.prof', plain)])).processes[0].snapshots[0];
    for (const [ours, k] of [
      [s.live.bytes, 3],
      [s.accumulated.bytes, 1],
    ] as const) {
      expect(ours - sum(rows, k)).toBeGreaterThanOrEqual(0);
      expect(ours - sum(rows, k)).toBeLessThan(rows.length);
    }
  });
});
