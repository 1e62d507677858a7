// Reading an opened session or report file: from a Blob (browser) or in chunks through the host (Electron).
import { describe, expect, it } from 'vitest';
import { readTextVia } from './host.ts';

describe('readTextVia', () => {
  it('reads a Blob', async () => {
    expect(
      await readTextVia({ path: 's.heaplens.json', size: -1, mtimeMs: null, blob: new Blob(['{"a":"é"}']) }, null),
    ).toBe('{"a":"é"}');
  });
  it('reads a host path in chunks until a short/empty read, UTF-8 across chunk ends', async () => {
    const bytes = new TextEncoder().encode('x'.repeat(10) + 'é'.repeat(5));
    const calls: number[] = [];
    const read = async (_p: string, off: number, len: number): Promise<Uint8Array> => {
      calls.push(off);
      return bytes.slice(off, Math.min(bytes.length, off + Math.min(len, 11)));
    };
    expect(await readTextVia({ path: 'r.html', size: bytes.length, mtimeMs: null, hostPath: '/x/r.html' }, read)).toBe(
      'x'.repeat(10) + 'é'.repeat(5),
    );
    expect(calls).toEqual([0, 11, 20]);
  });
  it('refuses a file without content', async () => {
    await expect(readTextVia({ path: 'a', size: 1, mtimeMs: null }, null)).rejects.toThrow(/no content/);
  });
});

describe('readTextVia size bound', () => {
  it('refuses a file larger than the bound before reading it (sessions: MAX_SESSION_BYTES)', async () => {
    let reads = 0;
    const read = async () => {
      reads++;
      return new Uint8Array(0);
    };
    await expect(
      readTextVia(
        { path: 'big.heaplens.json', size: 1000, mtimeMs: null, hostPath: '/x/big.heaplens.json' },
        read,
        999,
      ),
    ).rejects.toThrow(/too large \(1000 bytes, at most 999/);
    expect(reads).toBe(0);
    await expect(
      readTextVia({ path: 'b.json', size: -1, mtimeMs: null, blob: new Blob(['x'.repeat(1000)]) }, null, 999),
    ).rejects.toThrow(/too large/);
  });
});
