// The PyTorch memory snapshot reader on its own (the loader's series are tested in core/load/capture-series.test.ts):
// per device the figures fixtures/torch/make-torch-snapshots.py counted from its own simulated allocator
// (expected.json), at every pickle protocol it wrote.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TORCH_FIXTURES, torchExpected } from '../../tools/fixtures.js';
import { readTorchSnapshot } from './torch-snapshot.js';

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
});
