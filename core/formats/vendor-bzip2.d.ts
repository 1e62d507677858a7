// Types for the pure-JavaScript bzip2 block decoder of unbzip2-stream (its stream wrapper needs Node streams,
// so heaplens drives the block decoder itself: decompress.ts).
declare module 'unbzip2-stream/lib/bzip2.js' {
  /** reads n bits (n = null aligns to a byte) */
  type BitReader = (n: number | null) => number;
  const bzip2: {
    /** reads the stream header "BZh1"…"BZh9"; returns the block size in 100 kB units */
    header(bits: BitReader): number;
    /** decodes one block, calling `out` per byte; returns the running stream CRC, or null after the end-of-stream marker */
    decompress(
      bits: BitReader,
      out: (b: number) => void,
      buf: Int32Array,
      bufsize: number,
      streamCRC: number | null,
    ): number | null;
  };
  export default bzip2;
}
declare module 'unbzip2-stream/lib/bit_iterator.js' {
  const bitIterator: (next: () => Uint8Array | undefined) => ((n: number | null) => number) & { bytesRead: number };
  export default bitIterator;
}
