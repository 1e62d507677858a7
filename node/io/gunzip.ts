// node:zlib as the dump reader's Inflater (core/formats/inflate.ts): native, streaming, and the inflate
// itself runs on libuv's thread pool, beside the parser's thread; a small whole file inflates at once in the
// calling thread (Inflater.whole).

import { once } from 'node:events';
import { constants, createGunzip, gunzipSync } from 'node:zlib';
import type { Inflater } from '../../core/formats/inflate.js';

// Output pieces of 256 KiB: zlib's default 16 KiB made the parser join a carried partial line per
// piece, and a bigger piece is lost whole when the stream turns out corrupt inside it.
const OUTPUT_CHUNK = 256 * 1024;

const stream = async function* gunzip(compressed: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
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

/**
 * gunzipSync into one buffer sized by the stream's own trailer (ISIZE, the last member's length mod 2^32):
 * zlib's default 64 KiB pieces were joined by a copy of the whole output (a tenth of a reader's time on the
 * deep-stacks bench). A wrong guess (several members, > 4 GiB) only costs that copy again.
 */
function whole(compressed: Uint8Array, maxBytes: number): Uint8Array | null {
  const n = compressed.length;
  const isize =
    n >= 18
      ? (compressed[n - 4]! | (compressed[n - 3]! << 8) | (compressed[n - 2]! << 16) | (compressed[n - 1]! << 24)) >>> 0
      : 0;
  if (isize > maxBytes) return null;
  try {
    const out = gunzipSync(compressed, {
      chunkSize: Math.max(64 * 1024, isize + 1),
      maxOutputLength: Math.max(1, maxBytes),
    });
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  } catch {
    // corrupt, cut short or over maxBytes: streaming says which, and keeps the bytes before it
    return null;
  }
}

/** A head's compressed bytes inflated as far as they go (Z_SYNC_FLUSH: a cut stream is not an error). */
function head(compressed: Uint8Array): Uint8Array | null {
  try {
    const out = gunzipSync(compressed, { finishFlush: constants.Z_SYNC_FLUSH, chunkSize: 16 * 1024 });
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  } catch {
    return null;
  }
}

export const nodeInflater: Inflater = Object.assign(stream, { whole, head });
