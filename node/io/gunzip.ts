// node:zlib as the dump reader's Inflater (core/formats/inflate.ts): native, streaming, and the inflate
// itself runs on libuv's thread pool, beside the parser's thread.

import { once } from 'node:events';
import { createGunzip } from 'node:zlib';
import type { Inflater } from '../../core/formats/inflate.js';

// Output pieces of 256 KiB: zlib's default 16 KiB made the parser join a carried partial line per
// piece, and a bigger piece is lost whole when the stream turns out corrupt inside it.
const OUTPUT_CHUNK = 256 * 1024;

export const nodeInflater: Inflater = async function* gunzip(compressed) {
  const z = createGunzip({ chunkSize: OUTPUT_CHUNK });
  let stop = false;
  const feed = (async () => {
    try {
      for await (const c of compressed) {
        if (stop) return;
        if (!z.write(c)) await Promise.race([once(z, 'drain'), once(z, 'close')]);
      }
      z.end();
    } catch (e) {
      z.destroy(e instanceof Error ? e : new Error(String(e)));
    }
  })();
  try {
    for await (const out of z) yield out as Uint8Array;
  } finally {
    stop = true;
    z.destroy();
    await feed;
  }
};
