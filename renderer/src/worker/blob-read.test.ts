import { describe, expect, it } from 'vitest';
import { readBlob } from './blob-read.ts';

describe('readBlob', () => {
  const text = 'heap_v2/524288\n  t*: 3: 12288 [0: 0]\n';
  const blob = new Blob([text]);
  const decode = (b: Uint8Array): string => new TextDecoder().decode(b);

  it('reads the whole Blob, also when asked for more than it holds', async () => {
    expect(decode(await readBlob(blob, 0, blob.size))).toBe(text);
    expect(decode(await readBlob(blob, 0, blob.size + 100))).toBe(text);
  });

  it('reads a range', async () => {
    expect(decode(await readBlob(blob, 0, 7))).toBe('heap_v2');
    expect(decode(await readBlob(blob, 8, 6))).toBe('524288');
    expect(decode(await readBlob(blob, text.length - 3, 10))).toBe('0]\n');
  });
});
