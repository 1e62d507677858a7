// A zstd stream cut at its structure (RFC 8878 §3.1): frame headers, blocks, checksums; skippable frames dropped.
// fzstd decodes whatever one push holds at once and trusts the sizes it reads (a frame's window, allocated whole;
// an RLE block's length, up to 2 MiB from 4 bytes), so decompress.ts hands it one piece of this structure at a
// time and bounds are checked here first: a window over MAX_ZSTD_WINDOW and a block over the format's block
// maximum are refused with their byte offset. fzstd has no option for either, and its internals are not an API.

import { MAX_ZSTD_WINDOW } from './limits.js';

const FRAME_MAGIC = 0xfd2fb528;
/** skippable frames: 0x184D2A50…0x184D2A5F */
const SKIPPABLE_MAGIC = 0x184d2a50;
/** Block_Maximum_Size's ceiling (§3.1.1.2) */
const MAX_BLOCK = 128 * 1024;

/** Damage or a bound found by the splitter; `offset` is the compressed byte it is at. */
export class ZstdFrameProblem extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

type State =
  { k: 'frame' } | { k: 'block'; window: number; checksum: boolean } | { k: 'checksum' } | { k: 'skip'; left: number };

const u32 = (b: Uint8Array, i: number): number => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;

/** Pieces of a zstd stream, each handed to the decoder whole (a frame header, one block, a checksum). */
export class ZstdFrames {
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  /** stream offset of buf[0] */
  private base = 0;
  private state: State = { k: 'frame' };

  /** The whole pieces `chunk` completes, in order; what is left waits for the next chunk. */
  *push(chunk: Uint8Array): Generator<Uint8Array> {
    const rest = this.buf.length - this.pos;
    if (rest === 0) {
      this.base += this.buf.length;
      this.buf = chunk;
    } else {
      // the tail (at most one block, 128 KiB and 3) joined to the new chunk
      const b = new Uint8Array(rest + chunk.length);
      b.set(this.buf.subarray(this.pos));
      b.set(chunk, rest);
      this.base += this.pos;
      this.buf = b;
    }
    this.pos = 0;
    for (;;) {
      const piece = this.next();
      if (piece === null) return;
      if (piece.length > 0) yield piece;
    }
  }

  /** Throws (a plain Error: the caller names where the input ended) when the stream ended inside a frame. */
  end(): void {
    if (this.state.k !== 'frame' || this.pos < this.buf.length) throw new Error('the zstd stream ends inside a frame');
  }

  private take(n: number): Uint8Array {
    const p = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return p;
  }

  /** The next whole piece (empty when bytes were only skipped), or null when more input is needed. */
  private next(): Uint8Array | null {
    const b = this.buf;
    const i = this.pos;
    const have = b.length - i;
    const at = this.base + i;
    const s = this.state;
    switch (s.k) {
      case 'skip': {
        const n = Math.min(s.left, have);
        if (n === 0) return null;
        this.pos += n;
        s.left -= n;
        if (s.left === 0) this.state = { k: 'frame' };
        return new Uint8Array(0);
      }
      case 'checksum':
        if (have < 4) return null;
        this.state = { k: 'frame' };
        return this.take(4);
      case 'frame': {
        if (have < 4) return null;
        const magic = u32(b, i);
        if ((magic & 0xfffffff0) === SKIPPABLE_MAGIC) {
          if (have < 8) return null;
          this.pos += 8;
          this.state = { k: 'skip', left: u32(b, i + 4) };
          return new Uint8Array(0);
        }
        if (magic !== FRAME_MAGIC) throw new ZstdFrameProblem(at, 'not a zstd frame (bad magic number)');
        if (have < 5) return null;
        const fhd = b[i + 4];
        const fcsFlag = fhd >> 6;
        const single = (fhd >> 5) & 1;
        if (fhd & 8) throw new ZstdFrameProblem(at + 4, 'a zstd frame header with its reserved bit set');
        const dictBytes = [0, 1, 2, 4][fhd & 3];
        const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
        const size = 5 + (single ? 0 : 1) + dictBytes + fcsBytes;
        if (have < size) return null;
        let window: number;
        if (single) {
          // the window is the content size (at most 8 bytes; read as a double, exact up to 2^53)
          let fcs = 0;
          const o = i + size - fcsBytes;
          for (let k = fcsBytes - 1; k >= 0; k--) fcs = fcs * 256 + b[o + k];
          window = fcsBytes === 2 ? fcs + 256 : fcs;
        } else {
          const wd = b[i + 5];
          const wb = 2 ** (10 + (wd >> 3));
          window = wb + (wb / 8) * (wd & 7);
        }
        if (window > MAX_ZSTD_WINDOW)
          throw new ZstdFrameProblem(
            at,
            `a zstd frame asks for a ${window}-byte window, over the limit of ${MAX_ZSTD_WINDOW} bytes (zstd's own default; the file was written with --long or --ultra, or is damaged)`,
          );
        this.state = { k: 'block', window, checksum: ((fhd >> 2) & 1) === 1 };
        return this.take(size);
      }
      case 'block': {
        if (have < 3) return null;
        const h = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
        const last = h & 1;
        const type = (h >> 1) & 3;
        const size = h >>> 3;
        if (type === 3) throw new ZstdFrameProblem(at, 'a zstd block of the reserved type');
        // raw and RLE sizes are what comes out: at most min(window, 128 KiB) (§3.1.1.2); compressed ones are
        // bounded by 128 KiB in, the decoder's buffer out
        const max = type === 2 ? MAX_BLOCK : Math.min(s.window, MAX_BLOCK);
        if (size > max)
          throw new ZstdFrameProblem(at, `a zstd block of ${size} bytes, over the format's maximum of ${max}`);
        const body = type === 1 ? 1 : size;
        if (have < 3 + body) return null;
        if (last) this.state = s.checksum ? { k: 'checksum' } : { k: 'frame' };
        return this.take(3 + body);
      }
    }
  }
}
