// The device timeline of a PyTorch snapshot (gpu-timeline.ts) on the generator's snapshots: figures from
// fixtures/torch/expected.json, the simulation's own arithmetic.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { InputFile } from '../formats/input-file.js';
import { TORCH_FIXTURES, torchExpected } from '../../tools/fixtures.js';
import { gpuTimeline } from './gpu-timeline.js';
import { jobSummary } from './job-summary.js';

const want = torchExpected();
const file = (name: string): InputFile => {
  const b = new Uint8Array(readFileSync(join(TORCH_FIXTURES, name)));
  return { path: name, size: b.length, mtimeMs: null, read: async (o, l) => b.subarray(o, o + l) };
};

describe('gpuTimeline', () => {
  it('reserved, allocated and cached on the µs clock; the record_function spans in lanes; the peak', async () => {
    const p = (await loadJob([file(want.cpp.file)])).processes[0];
    const t = gpuTimeline(p)!;
    expect(t.timed).toBe(true);
    expect(t.timeMs[0]).toBe(want.cpp.first_time_us / 1000);
    expect(t.cached.map((c, i) => c + t.allocated[i])).toEqual(t.reserved);
    expect(t.spans.map((s) => [s.name, s.endMs !== null, s.lane])).toEqual(want.cpp.spans.map(([n, c]) => [n, c, 0]));
    expect(t.peak!.allocated).toBe(want.cpp.peak_allocated_bytes);
    expect(p.snapshots[t.peak!.snapshot!].live.bytes).toBe(want.cpp.peak_allocated_bytes);
  });

  it('the job summary names the snapshot a device opens on: its peak', async () => {
    const job = await loadJob([file('snapshot-p4.pickle')]);
    const s = jobSummary(job, { hasPython: () => true, loadMs: 0, waitMs: 0, bytesTotal: 0, partial: true });
    expect(s.processes.map((p) => p.snapshots[p.openSnapshot!].liveBytes)).toEqual(
      want.devices.map((d) => d.peak_allocated_bytes),
    );
  });

  it('a long trace cut to a few points keeps every peak; nested spans go one lane down', async () => {
    const job = await loadJob([file('snapshot-p4.pickle')]);
    const p = job.processes[0];
    const t = gpuTimeline(p, 20)!;
    expect(t.timeMs.length).toBeLessThanOrEqual(41);
    expect(Math.max(...t.allocated)).toBe(want.devices[0].peak_allocated_bytes);
    expect(Math.max(...t.reserved)).toBe(want.devices[0].peak_reserved_bytes);
    for (let i = 1; i < t.timeMs.length; i++) expect(t.timeMs[i]).toBeGreaterThanOrEqual(t.timeMs[i - 1]);
    expect(t.spans.length).toBe(want.annotations / 2);
    p.gpu!.spans = [
      { name: 'step', startMs: 0, endMs: 10 },
      { name: 'forward', startMs: 1, endMs: 4 },
      { name: 'backward', startMs: 5, endMs: 9 },
      { name: 'optimizer', startMs: 9, endMs: null },
    ];
    expect(gpuTimeline(p)!.spans.map((s) => [s.name, s.lane])).toEqual([
      ['step', 0],
      ['forward', 1],
      ['backward', 1],
      ['optimizer', 1],
    ]);
    expect(gpuTimeline(job.processes[1])!.ooms).toEqual([]);
  });
});
