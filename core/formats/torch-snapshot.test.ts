// The PyTorch memory snapshot reader on its own (the loader's series are tested in core/load/capture-series.test.ts):
// per device the figures fixtures/torch/make-torch-snapshots.py counted from its own simulated allocator
// (expected.json), at every pickle protocol it wrote.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TORCH_FIXTURES, torchExpected } from '../../tools/fixtures.js';
import { MAX_DEVICE_BYTES, MAX_VISITS, readTorchSnapshot, TorchSnapshotError } from './torch-snapshot.js';
import { memoBomb, OP, Ops } from '../../tools/fuzz/pickle-ops.js';

const want = torchExpected();

describe('PyTorch memory snapshot reader', () => {
  for (const p of ['p2', 'p4', 'p5'])
    it(`snapshot-${p}.pickle: each device's segments and bytes by state equal the simulation's`, () => {
      const s = readTorchSnapshot(new Uint8Array(readFileSync(join(TORCH_FIXTURES, `snapshot-${p}.pickle`))));
      expect(s.problems).toEqual([]);
      expect(
        s.devices.map((d) => [
          d.index,
          d.segments.length,
          d.reservedBytes,
          d.allocatedBytes,
          d.pendingFreeBytes,
          d.inactiveBytes,
        ]),
      ).toEqual(
        want.devices.map((d) => [
          d.device,
          d.segments,
          d.reserved_bytes,
          d.allocated_bytes,
          d.pending_free_bytes,
          d.inactive_bytes,
        ]),
      );
    });

  const figures = (s: ReturnType<typeof readTorchSnapshot>) =>
    s.devices.map((d) => [
      d.index,
      d.segments.length,
      d.reservedBytes,
      d.allocatedBytes,
      d.pendingFreeBytes,
      d.inactiveBytes,
    ]);
  const wanted = want.devices.map((d) => [
    d.device,
    d.segments,
    d.reserved_bytes,
    d.allocated_bytes,
    d.pending_free_bytes,
    d.inactive_bytes,
  ]);
  const read = (rel: string) => readTorchSnapshot(new Uint8Array(readFileSync(join(TORCH_FIXTURES, rel))));

  it('the bare segment list torch.cuda.memory_snapshot() returns, pickled: the same state, no trace', () => {
    const s = read(want.list.file);
    expect(s.shape).toBe('segments');
    expect(s.devices.reduce((n, d) => n + d.segments.length, 0)).toBe(want.list.segments);
    expect(figures(s)).toEqual(wanted);
    expect(s.devices.every((d) => d.trace.length === 0)).toBe(true);
  });

  it('S3: an oom entry at time_us 1e20 is kept without a date, with a warning; every other figure stands', () => {
    const s = read(want.bounds.oom_time.file);
    expect(figures(s)).toEqual(wanted);
    const d0 = s.devices[0];
    expect(d0.ooms.map((o) => [o.index, o.timeUs, o.size])).toEqual([
      [want.bounds.oom_time.oom_index, null, want.devices[0].ooms[0].size],
    ]);
    expect(s.problems).toEqual([
      expect.stringMatching(
        /^1 out-of-memory entries carry a time outside .* kept without a date \(the first: an oom entry time_us 1\.00e20, past 2\^53 /,
      ),
    ]);
    // the timeline keeps its peak: the entry sits at the time before it
    expect(Math.max(...d0.timeline.allocated)).toBe(want.devices[0].peak_allocated_bytes);
  });

  it('S6: segments past 1 PiB, a device 1e300 and trace times ±1e18 µs are skipped or undated, each said once', () => {
    const s = read(want.bounds.bounds.file);
    const b = want.bounds.bounds;
    // the huge and far segments are left out: the devices' figures are the simulation's
    expect(figures(s)).toEqual(wanted);
    expect(2 ** 53 - 1).toBeGreaterThan(MAX_DEVICE_BYTES);
    expect(s.problems).toEqual(
      expect.arrayContaining([
        `${b.far_devices} segments on a device outside 0–127 (c10::DeviceIndex) were skipped (the first: a segment on device 1.00e300, past 2^53)`,
        `${b.huge_segments} segments larger than 1 PiB (damage) were skipped (the first: a segment of 9007199254740991 bytes)`,
        expect.stringMatching(new RegExp(`^${b.bad_times} trace entries carry a time outside 1970 to a year from now`)),
      ]),
    );
    const t = s.devices[1].timeline.timeUs;
    for (const u of t) expect(Math.abs(u / 1000 - want.devices[1].first_time_us / 1000)).toBeLessThan(86_400_000);
  });

  it("S1 below the unpickler's bound: blocks multiplied by shared references stop at the visits bound, at once", () => {
    // 1,000 references to a segment of 5,000 references to one block: 4.5·10^7 slots (the unpickler takes it),
    // 5·10^6 blocks to visit (more than MAX_VISITS)
    const { bytes } = memoBomb(1000, 5000, 1);
    const t0 = performance.now();
    expect(() => readTorchSnapshot(bytes)).toThrow(TorchSnapshotError);
    expect(() => readTorchSnapshot(bytes)).toThrow(
      new RegExp(`more than ${MAX_VISITS} blocks once the file's shared references are followed`),
    );
    expect(performance.now() - t0).toBeLessThan(5000);
    // below the bound the shared block is one object: 800 × 5,000 blocks of 512 bytes
    const ok = readTorchSnapshot(memoBomb(800, 5000, 1).bytes);
    expect(ok.devices[0].allocatedBytes).toBe(800 * 5000 * 512);
  });

  it('S2: 100,000 device traces become at most 128 devices (c10::DeviceIndex), the rest said once', () => {
    // {'device_traces': [[e], [e], …]} with one shared alloc entry e
    const o = new Ops().op(OP.DICT).str('device_traces').op(OP.LIST, OP.LIST, OP.DICT, OP.BINPUT, 0, OP.MARK);
    o.str('action').str('alloc').str('addr').int(4096).str('size').int(512).op(OP.SETITEMS, OP.APPEND, OP.APPEND);
    o.times(99_999, (x) => x.op(OP.LIST, OP.BINGET, 0, OP.APPEND, OP.APPEND)).op(OP.SETITEM, OP.STOP);
    const s = readTorchSnapshot(o.bytes());
    expect(s.devices.map((d) => d.index)).toEqual([...Array(128).keys()]);
    expect(s.devices.every((d) => d.allocatedBytes === 0 && d.timeline.allocated[0] === 512)).toBe(true);
    expect(s.problems).toContain('100000 device traces: devices above cuda:127 (c10::DeviceIndex) were skipped');
  });
});
