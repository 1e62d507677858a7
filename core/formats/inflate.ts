// Streaming gunzip behind one small interface, so each host can use its native inflater (node:zlib in
// the CLI, DecompressionStream in browsers and Electron) and the reader keeps pako as the fallback.
// Native inflate runs 2–3× faster than pako and, in Node, off the JavaScript thread.

/** Turns gzip bytes into the decompressed bytes, chunk by chunk; throws on corrupt or cut-off input. */
export interface Inflater {
  (compressed: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
  /**
   * A whole small gzip file at once, in this thread (a host with a synchronous inflater: node:zlib): the
   * decompressed bytes, or null when they are not one valid, complete stream of at most `maxBytes` (the caller
   * then streams the file, which says what is wrong and keeps what came before). Streaming through a thread
   * pool cost a reader thread a hop and a stream's bookkeeping per 256 KiB piece.
   */
  whole?: (compressed: Uint8Array, maxBytes: number) => Uint8Array | null;
  /**
   * The first bytes of a gzip file from its first compressed bytes (a head: the stream is cut), at once in this
   * thread: what they inflate to, or null when they are not a gzip stream's start. The timeline from dump heads
   * reads 10,000 heads at 1,000 processes; a stream per head (and its 256 KiB output piece) was most of that time.
   */
  head?: (compressed: Uint8Array) => Uint8Array | null;
}

/** The platform's DecompressionStream as an Inflater, or null where there is none (then pako is used). */
export function webInflater(): Inflater | null {
  // `in`, not typeof: Node defines the global as a lazy getter, and reading it loads its web streams modules
  // (~26 of them) at startup, before any gzip is seen
  if (!('DecompressionStream' in globalThis)) return null;
  return async function* inflateWeb(compressed) {
    const ds = new DecompressionStream('gzip');
    const writer = ds.writable.getWriter();
    // The writer is fed in the background; its errors surface through the reader below.
    const feed = (async () => {
      try {
        for await (const c of compressed) {
          await writer.ready;
          await writer.write(c as Uint8Array<ArrayBuffer>);
        }
        await writer.close();
      } catch (e) {
        await writer.abort(e).catch(() => undefined);
      }
    })();
    const reader = ds.readable.getReader();
    let done = false;
    try {
      while (!done) {
        const r = await reader.read();
        done = r.done;
        if (r.value) yield r.value;
      }
    } finally {
      // A consumer that stops early (cancel, parser gave up) must not leave the writer blocked.
      if (!done) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
      await feed;
    }
  };
}
