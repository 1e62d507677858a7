// Compressed inputs, told by content (sniff.ts), decoded as a stream of chunks and bounded like the gzip path:
// at most inflateLimit(compressed size) bytes come out (limits.ts), so a bomb in any codec stops with a warning.
//
// Decoders (Node's zlib has gzip only, and the core must also run in the browser):
//   gzip   the host's native Inflater (inflate.ts) when given, else pako
//   zstd   fzstd: pure JavaScript, streaming, by the author of fflate (no WASM to load)
//   bzip2  unbzip2-stream's block decoder (pure JavaScript; its stream wrapper needs Node streams, so it is
//          driven here block by block)
//   xz     xz-decompress: xz-embedded (Lasse Collin's decoder) compiled to WebAssembly, a web ReadableStream

// every tsconfig that reaches this file (node, renderer, app, e2e) needs the bzip2 decoder's types
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./vendor-bzip2.d.ts" />
//
// Each decoder's package loads on its first use (dynamic import): together they were a third of the CLI's module
// load time, and most inputs are plain text or gzip through the host's inflater.
import type { Inflate } from 'pako';
import type { InputFile } from './input-file.js';
import type { Inflater } from './inflate.js';
import { inflateLimit, MAX_INFLATE_RATIO, MAX_INFLATED_BYTES, MIN_INFLATE_ALLOWANCE } from './limits.js';
import { ZstdFrameProblem, ZstdFrames } from './zstd-frames.js';

export type Codec = 'gzip' | 'zstd' | 'bzip2' | 'xz';

/**
 * Turns compressed chunks into decompressed ones; throws on corrupt or cut-off input. Each step of a decoder
 * gives a bounded amount (a few MB at most), so the caller's check of `limit` between chunks bounds memory; a
 * decoder whose step cannot be cut (bzip2's block) stops itself one byte past `limit`.
 */
export type Decoder = (compressed: AsyncIterable<Uint8Array>, limit: number) => AsyncIterable<Uint8Array>;

/** The codec these first bytes start with, or null for uncompressed content. */
export function codecOf(head: Uint8Array): Codec | null {
  const b = (i: number) => (i < head.length ? head[i] : -1);
  if (b(0) === 0x1f && b(1) === 0x8b) return 'gzip';
  if (b(0) === 0x28 && b(1) === 0xb5 && b(2) === 0x2f && b(3) === 0xfd) return 'zstd';
  if (b(0) === 0x42 && b(1) === 0x5a && b(2) === 0x68 && b(3) >= 0x31 && b(3) <= 0x39) return 'bzip2';
  if (b(0) === 0xfd && b(1) === 0x37 && b(2) === 0x7a && b(3) === 0x58 && b(4) === 0x5a && b(5) === 0) return 'xz';
  return null;
}

/** Why decoding stopped early: what came out before it is kept by the caller. */
export class DecodeProblem extends Error {}

const pakoGunzip: Decoder = async function* (compressed) {
  const out: Uint8Array[] = [];
  const { Inflate: PakoInflate } = await import('pako');
  const inflate = new PakoInflate();
  inflate.onData = (c: Uint8Array) => void out.push(c);
  let ended = false;
  for await (const c of compressed) {
    // 32 KiB steps: one push inflates at most ~32 MB (deflate's 1032× ceiling) before the bound is checked
    for (let s = 0; s < c.length && !ended; s += 32 * 1024) {
      inflate.push(c.subarray(s, s + 32 * 1024), false);
      if (inflate.err) throw new Error(inflate.msg);
      ended = (inflate as Inflate & { ended: boolean }).ended;
      yield* out.splice(0);
    }
  }
  if (!ended) throw new Error('the gzip stream ends early');
};

const zstd: Decoder = async function* (compressed) {
  const out: Uint8Array[] = [];
  let done = false;
  const { Decompress: ZstdDecompress } = await import('fzstd');
  const d = new ZstdDecompress((chunk, final) => {
    out.push(chunk);
    if (final) done = true;
  });
  // one frame header, block or checksum per push (zstd-frames.ts, which checks the window and block sizes
  // first): a push gives at most a few blocks of ≤ 128 KiB, so the bound is checked between them. Fed 64 KiB at
  // once, fzstd had decoded 16,384 RLE blocks (2 GiB) before the first check.
  const frames = new ZstdFrames();
  try {
    for await (const c of compressed)
      for (const piece of frames.push(c)) {
        d.push(piece);
        yield* out.splice(0);
      }
    frames.end();
  } catch (e) {
    if (e instanceof ZstdFrameProblem)
      throw new DecodeProblem(`zstd stream, at compressed byte ${e.offset}: ${e.message}`, { cause: e });
    throw e;
  }
  d.push(new Uint8Array(0), true);
  yield* out.splice(0);
  if (!done) throw new Error('the zstd stream ends early');
};

const bz2: Decoder = async function* (compressed, limit) {
  const [{ default: bzip2 }, { default: bitIterator }] = await Promise.all([
    import('unbzip2-stream/lib/bzip2.js'),
    import('unbzip2-stream/lib/bit_iterator.js'),
  ]);
  const it = compressed[Symbol.asyncIterator]();
  const queue: Uint8Array[] = [];
  let buffered = 0;
  let ended = false;
  let read = 0; // compressed bytes the decoder has taken (bits.bytesRead, once it exists)
  // A block is decoded only when all of it is buffered (the decoder reads synchronously): at most
  // 100 kB × level of block plus its Huffman tables, so 25 kB more than that, or the end of input.
  const fill = async (want: number) => {
    while (!ended && buffered - read < want) {
      const r = await it.next();
      if (r.done) ended = true;
      else {
        queue.push(r.value);
        buffered += r.value.length;
      }
    }
  };
  await fill(4);
  // the bit reader takes its first chunk when it is made
  const bits = bitIterator(() => queue.shift());
  const taken = () => (read = bits.bytesRead);
  let blockSize = 0;
  let crc: number | null = 0;
  const buf: { b: Int32Array | null } = { b: null };
  // One output buffer, allocated once, at most the bound plus a byte: the decoder calls back per byte, so a
  // block is taken whole (a block of runs gives up to 46.6 MB, and a JavaScript array of them took 1.2 GB).
  let outBuf: Uint8Array | null = null;
  let given = 0;
  let n = 0;
  let room = 0;
  const put = (byte: number) => {
    if (n === room) throw BLOCK_FULL;
    outBuf![n++] = byte;
  };
  for (;;) {
    if (blockSize === 0) {
      if (ended && buffered - taken() <= 0) break; // every stream read (concatenated streams allowed)
      blockSize = bzip2.header(bits);
      crc = 0;
      if (!buf.b || buf.b.length < blockSize * 100000) buf.b = new Int32Array(blockSize * 100000);
      const want = Math.min(bzip2BlockOutput(blockSize), limit - given + 1);
      if (!outBuf || outBuf.length < want) outBuf = new Uint8Array(want);
      continue;
    }
    taken();
    await fill(blockSize * 100000 + 25000);
    n = 0;
    room = Math.min(outBuf!.length, limit - given + 1);
    try {
      crc = bzip2.decompress(bits, put, buf.b!, blockSize * 100000, crc);
    } catch (e) {
      if (e !== BLOCK_FULL) throw e;
      if (room <= limit - given)
        throw new Error(`a block expands beyond bzip2's ${bzip2BlockOutput(blockSize)} bytes`, { cause: e });
      // past the bound: what came out, one byte over it, so that decodedChunks stops here
      yield outBuf!.slice(0, n);
      return;
    }
    if (crc === null) {
      blockSize = 0;
      bits(null);
      taken();
      await fill(4);
    } else if (n > 0) {
      given += n;
      yield outBuf!.slice(0, n);
    }
  }
};

/** Thrown by the output callback when the block's buffer is full. */
const BLOCK_FULL = new Error('bzip2 block buffer full');

/**
 * The most one bzip2 block of `level` (100 kB units) gives: the block holds ≤ level × 100,000 symbols after the
 * first run-length step, which writes 4 equal bytes and a count (0–255) as 5 symbols: ≤ 259 bytes per 5.
 */
function bzip2BlockOutput(level: number): number {
  return Math.ceil((level * 100000) / 5) * 259;
}

const xz: Decoder = async function* (compressed) {
  // a CommonJS (UMD) module: Node's ESM loader gives its exports as `default`, bundlers as named exports
  type XzModule = Partial<Pick<typeof import('xz-decompress'), 'XzReadableStream'>>;
  const xzModule: XzModule & { default?: XzModule } = await import('xz-decompress');
  const XzReadableStream = xzModule.default?.XzReadableStream ?? xzModule.XzReadableStream;
  if (!XzReadableStream) throw new Error('the xz decoder (xz-decompress) did not load');
  const it = compressed[Symbol.asyncIterator]();
  let inputDone = false;
  const source = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await it.next();
      if (r.done) {
        inputDone = true;
        controller.close();
      } else controller.enqueue(r.value);
    },
  });
  const reader = new XzReadableStream(source).getReader();
  let finished = false;
  let idle = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        finished = true;
        break;
      }
      // xz-decompress gives empty chunks for ever when the input ends inside the stream
      if (r.value.length === 0 && inputDone && ++idle > 2) throw new Error('the xz stream ends early');
      if (r.value.length > 0) idle = 0;
      yield r.value;
    }
  } finally {
    // its decoder is one per process, held until the stream ends or is cancelled
    if (!finished) await reader.cancel().catch(() => undefined);
  }
};

/** The decoder of a codec; gzip through the host's native inflater when there is one. */
export function decoderFor(codec: Codec, inflate?: Inflater | null): Decoder {
  switch (codec) {
    case 'gzip':
      return inflate ?? pakoGunzip;
    case 'zstd':
      return zstd;
    case 'bzip2':
      return bz2;
    case 'xz':
      return xz;
  }
}

export interface DecodeOptions {
  signal?: AbortSignal;
  chunkSize?: number;
  inflate?: Inflater | null;
  /** compressed bytes read so far */
  onBytes?: (n: number) => void;
}

/**
 * The decompressed bytes of `file` (compressed with `codec`), chunk by chunk. Ends with a DecodeProblem
 * naming the compressed byte offset when the data is corrupt or cut off, or when more than
 * inflateLimit(file.size) bytes come out; every chunk before it has been given.
 */
export async function* decodedChunks(
  file: InputFile,
  codec: Codec,
  options: DecodeOptions = {},
): AsyncGenerator<Uint8Array> {
  const chunkSize = options.chunkSize ?? 4 * 1024 * 1024;
  const limit = inflateLimit(file.size);
  let fed = 0;
  let allFed = false;
  let readError: unknown = null;
  async function* compressed(): AsyncGenerator<Uint8Array> {
    while (fed < file.size) {
      options.signal?.throwIfAborted();
      let bytes: Uint8Array;
      try {
        bytes = await file.read(fed, Math.min(chunkSize, file.size - fed));
      } catch (e) {
        readError = e;
        throw e;
      }
      if (bytes.length === 0) break;
      fed += bytes.length;
      options.onBytes?.(fed);
      yield bytes;
    }
    allFed = true;
  }
  let out = 0;
  try {
    for await (const c of decoderFor(codec, options.inflate)(compressed(), limit)) {
      out += c.length;
      if (out > limit) {
        // what came out up to the bound is kept, as before any other stop
        if (out - c.length < limit) yield c.subarray(0, limit - (out - c.length));
        throw new DecodeProblem(
          `stopped decompressing (${codec}) at the limit of ${limit} bytes from ${file.size} compressed (at most ${MAX_INFLATE_RATIO}× the compressed size, at least ${MIN_INFLATE_ALLOWANCE} and at most ${MAX_INFLATED_BYTES} bytes); the rest of the file is not read`,
        );
      }
      options.signal?.throwIfAborted();
      yield c;
    }
  } catch (e) {
    if (e instanceof DecodeProblem) throw e;
    if (options.signal?.aborted) throw options.signal.reason;
    if (readError !== null) throw readError;
    const why = e instanceof Error ? e.message : String(e);
    throw new DecodeProblem(
      allFed
        ? `${codec} stream ends early (after ${fed} compressed bytes): ${why}`
        : `${codec} data is corrupt near compressed byte ${fed}: ${why}`,
    );
  }
}

/** The first `max` decompressed bytes (for sniffing a compressed file's content); null when none decode. */
export async function decodedHead(
  file: InputFile,
  codec: Codec,
  max: number,
  inflate?: Inflater | null,
): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let n = 0;
  try {
    for await (const c of decodedChunks(file, codec, { chunkSize: 64 * 1024, inflate: inflate ?? null })) {
      parts.push(c);
      n += c.length;
      if (n >= max) break;
    }
  } catch (e) {
    if (!(e instanceof DecodeProblem)) throw e;
  }
  if (n === 0) return null;
  const head = new Uint8Array(Math.min(n, max));
  let o = 0;
  for (const p of parts) {
    if (o >= head.length) break;
    head.set(p.subarray(0, head.length - o), o);
    o += Math.min(p.length, head.length - o);
  }
  return head;
}
