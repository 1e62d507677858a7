// Reading an opened session or report file: from a Blob (browser) or in chunks through the host (Electron).
import { describe, expect, it } from 'vitest';
import { readTextVia } from './host.ts';

describe('readTextVia', () => {
  it('reads a Blob', async () => {
    expect(await readTextVia({ path: 's.heaplens.json', size: -1, mtimeMs: null, blob: new Blob(['{"a":"é"}']) }, null)).toBe('{"a":"é"}');
  });
  it('reads a host path in chunks until a short/empty read, UTF-8 across chunk ends', async () => {
    const bytes = new TextEncoder().encode('x'.repeat(10) + 'é'.repeat(5));
    const calls: number[] = [];
    const read = async (_p: string, off: number, len: number): Promise<Uint8Array> => {
      calls.push(off);
      return bytes.slice(off, Math.min(bytes.length, off + Math.min(len, 11)));
    };
    expect(await readTextVia({ path: 'r.html', size: bytes.length, mtimeMs: null, hostPath: '/x/r.html' }, read)).toBe('x'.repeat(10) + 'é'.repeat(5));
    expect(calls).toEqual([0, 11, 20]);
  });
  it('refuses a file without content', async () => {
    await expect(readTextVia({ path: 'a', size: 1, mtimeMs: null }, null)).rejects.toThrow(/no content/);
  });
});
