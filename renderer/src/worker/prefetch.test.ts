import { describe, expect, it } from 'vitest';
import type { InputFile } from '../../../core/formats/input-file.ts';
import { withPrefetch } from './prefetch.ts';

function files(n: number, size: number): { files: InputFile[]; log: string[] } {
  const log: string[] = [];
  const out: InputFile[] = Array.from({ length: n }, (_, i) => ({
    path: `f${i}`,
    size,
    mtimeMs: null,
    async read(offset: number, length: number): Promise<Uint8Array> {
      log.push(`direct ${i} ${offset} ${length}`);
      return new Uint8Array(Math.max(0, Math.min(size, offset + length) - offset)).fill(i);
    },
  }));
  return { files: out, log };
}

describe('withPrefetch', () => {
  it('reads ahead in the given order, whole files, with bounded concurrency', async () => {
    const { files: fs } = files(10, 100);
    const fetched: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const readWhole = async (i: number): Promise<Uint8Array> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      fetched.push(i);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return new Uint8Array(100).fill(i);
    };
    const order = [3, 1, 4, 0, 5, 9, 2, 6, 8, 7];
    const wrapped = withPrefetch(fs, order, readWhole, { concurrency: 3, maxBytesAhead: 1000, maxFileBytes: 1000 });
    for (const i of order) {
      const b = await wrapped[i].read(0, 100);
      expect(b.length).toBe(100);
      expect(b[0]).toBe(i);
    }
    expect(fetched).toEqual(order);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  });

  it('serves partial reads from the fetched file and leaves large files to direct reads', async () => {
    const { files: fs, log } = files(2, 50);
    fs[1] = { ...fs[1], size: 5000 };
    const wrapped = withPrefetch(fs, [0, 1], async (i) => new Uint8Array(fs[i].size).map((_, k) => k % 256), {
      concurrency: 2,
      maxBytesAhead: 10_000,
      maxFileBytes: 1000,
    });
    expect(Array.from(await wrapped[0].read(10, 5))).toEqual([10, 11, 12, 13, 14]);
    expect((await wrapped[0].read(45, 100)).length).toBe(5);
    await wrapped[1].read(0, 10);
    expect(log).toEqual(['direct 1 0 10']);
  });
});
