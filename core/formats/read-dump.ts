// Reads one dump from an InputFile in chunks, un-gzipping on the fly when the bytes say gzip
// (magic 1f 8b, whatever the file is called), and feeds the push parser. Gzip goes through the host's
// native inflater when given one (inflate.ts), else pako.

import type { Inflate } from 'pako';
import type { InputFile } from './input-file.js';
import { HeapDumpParser, type DumpRecord, type ParsedDumpInfo } from './heap-dump.js';
import type { BacktraceCache } from './backtrace-cache.js';
import { inflateLimit, MAX_INFLATE_RATIO, MAX_INFLATED_BYTES } from './limits.js';
import type { Inflater } from './inflate.js';
import { codecOf, DecodeProblem, decodedChunks } from './decompress.js';

export const READ_CHUNK = 4 * 1024 * 1024;

export interface ReadDumpOptions {
  /** called per complete record, with the header already parsed (sampling known) */
  onRecord?: (r: DumpRecord, info: ParsedDumpInfo) => void;
  /** called after each chunk with the compressed bytes read so far */
  onBytes?: (bytesRead: number) => void;
  signal?: AbortSignal;
  chunkSize?: number;
  /** native streaming gunzip (inflate.ts); pako when absent */
  inflate?: Inflater | null;
  /** backtrace lines this thread has read before (HeapDumpParserOptions.backtraces) */
  backtraces?: BacktraceCache;
}

export interface ReadDumpResult {
  info: ParsedDumpInfo;
  records: DumpRecord[];
  gzip: boolean;
  /** set when a compressed stream (any codec) was corrupt, ended early or hit the bound (everything before it is kept) */
  gzipProblem: string | null;
}

// pako sets `ended` at runtime; its type declarations leave it out.
type InflateWithState = Inflate & { ended: boolean };

export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Thrown from pako's onData to stop inflating a stream (pako has no way to stop from outside). */
class StopInflate extends Error {}

/** Work between two yields to the event loop, so a Cancel (a message to the worker, a signal) is seen. */
export const YIELD_EVERY_MS = 100;
/** Compressed bytes given to the inflater at once: one call inflates at most ~32 MB (deflate's 1032× ceiling), a few hundred ms of parsing, so a Cancel waits no longer. */
const INFLATE_STEP = 32 * 1024;

/** Inflated bytes one whole-file inflate may hold at once (the bound on that buffer); past it, the file streams. */
const WHOLE_INFLATE_MAX = 64 * 1024 * 1024;

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());
const macrotask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export async function readDump(file: InputFile, options: ReadDumpOptions = {}): Promise<ReadDumpResult> {
  const onRecord = options.onRecord;
  const parser: HeapDumpParser = new HeapDumpParser({
    ...(onRecord ? { onRecord: (r: DumpRecord) => onRecord(r, parser.info) } : {}),
    ...(options.backtraces ? { backtraces: options.backtraces } : {}),
  });
  const chunkSize = options.chunkSize ?? READ_CHUNK;
  const signal = options.signal;
  let offset = 0;
  let gzip = false;
  let gzipProblem: string | null = null;
  let inflate: InflateWithState | null = null;
  let inflated = 0;
  const limit = inflateLimit(file.size);
  let lastYield = now();
  const maybeYield = async (): Promise<void> => {
    if (now() - lastYield < YIELD_EVERY_MS) return;
    await macrotask();
    lastYield = now();
    signal?.throwIfAborted();
  };

  // the first chunk, read once: to tell the codec, then parsed as the start of a plain file
  let head: Uint8Array | null = null;
  if (file.size >= 6) {
    head = await file.read(0, Math.min(chunkSize, file.size));
    const codec = codecOf(head);
    if (codec !== null && codec !== 'gzip') {
      // zstd, bzip2, xz: one decoder path for every input (decompress.ts); gzip keeps its tuned path below
      let problem: string | null = null;
      try {
        for await (const c of decodedChunks(file, codec, {
          chunkSize,
          ...(signal ? { signal } : {}),
          ...(options.onBytes ? { onBytes: options.onBytes } : {}),
        })) {
          parser.push(c);
          if (parser.info.fatal) break;
          await maybeYield();
        }
      } catch (e) {
        if (!(e instanceof DecodeProblem)) throw e;
        problem = e.message;
      }
      return { info: parser.finish(), records: parser.records, gzip: true, gzipProblem: problem };
    }
    if (options.inflate && isGzip(head)) {
      // a small file read whole by its first read: inflated at once where the host can (Inflater.whole)
      const all = head.length === file.size && options.inflate.whole?.(head, Math.min(limit, WHOLE_INFLATE_MAX));
      if (all) {
        parser.push(all);
        options.onBytes?.(file.size);
        signal?.throwIfAborted();
        return { info: parser.finish(), records: parser.records, gzip: true, gzipProblem: null };
      }
      const gzipProblem = await inflateNative(file, head, parser, options.inflate, chunkSize, options);
      return { info: parser.finish(), records: parser.records, gzip: true, gzipProblem };
    }
  }

  while (offset < file.size) {
    signal?.throwIfAborted();
    const bytes =
      offset === 0 && head !== null ? head : await file.read(offset, Math.min(chunkSize, file.size - offset));
    head = null;
    if (bytes.length === 0) break;
    if (offset === 0 && isGzip(bytes)) {
      gzip = true;
      // pako loads only when there is no native inflater (the browser): the CLI never pays for it
      const { Inflate: PakoInflate } = await import('pako');
      inflate = new PakoInflate() as InflateWithState;
      inflate.onData = (c: Uint8Array) => {
        inflated += c.length;
        if (inflated > limit) {
          gzipProblem = `stopped inflating after ${inflated} bytes from ${file.size} compressed (limit ${limit}: at most ${MAX_INFLATE_RATIO}× the compressed size, and ${MAX_INFLATED_BYTES} bytes); the rest of the file is not read`;
          throw new StopInflate();
        }
        if (signal?.aborted) throw new StopInflate();
        parser.push(c);
        if (parser.info.fatal) throw new StopInflate();
      };
    }
    offset += bytes.length;
    if (inflate) {
      for (let s = 0; s < bytes.length && !inflate.ended && !gzipProblem && !parser.info.fatal; s += INFLATE_STEP) {
        try {
          inflate.push(bytes.subarray(s, Math.min(bytes.length, s + INFLATE_STEP)), false);
        } catch (e) {
          if (!(e instanceof StopInflate)) throw e;
          signal?.throwIfAborted();
          break;
        }
        if (inflate.err)
          gzipProblem = `gzip data is corrupt near compressed byte ${offset - bytes.length + s}: ${inflate.msg}`;
        await maybeYield();
      }
    } else {
      parser.push(bytes);
    }
    options.onBytes?.(offset);
    if (gzipProblem || parser.info.fatal) break;
    await maybeYield();
  }
  if (inflate && !gzipProblem && !parser.info.fatal && !inflate.ended) {
    try {
      inflate.push(new Uint8Array(0), true);
    } catch (e) {
      if (!(e instanceof StopInflate)) throw e;
      signal?.throwIfAborted();
    }
    if (!gzipProblem && (!inflate.ended || inflate.err))
      gzipProblem = `gzip stream ends early (after ${offset} compressed bytes)`;
  }
  const info = parser.finish();
  return { info, records: parser.records, gzip, gzipProblem };
}

/** Gzip through a native inflater, fed in chunks; returns the gzip problem, if any (what came before it is kept). */
async function inflateNative(
  file: InputFile,
  head: Uint8Array,
  parser: HeapDumpParser,
  inflater: Inflater,
  chunkSize: number,
  options: ReadDumpOptions,
): Promise<string | null> {
  const signal = options.signal;
  const limit = inflateLimit(file.size);
  let fed = 0;
  let allFed = false;
  let readError: unknown = null;
  let inflated = 0;
  let lastYield = now();
  async function* compressed(): AsyncGenerator<Uint8Array> {
    let bytes = head;
    while (bytes.length > 0) {
      signal?.throwIfAborted();
      fed += bytes.length;
      yield bytes;
      options.onBytes?.(fed);
      if (fed >= file.size) break;
      try {
        bytes = await file.read(fed, Math.min(chunkSize, file.size - fed));
      } catch (e) {
        readError = e;
        throw e;
      }
    }
    allFed = true;
  }
  try {
    for await (const c of inflater(compressed())) {
      inflated += c.length;
      if (inflated > limit) {
        return `stopped inflating after ${inflated} bytes from ${file.size} compressed (limit ${limit}: at most ${MAX_INFLATE_RATIO}× the compressed size, and ${MAX_INFLATED_BYTES} bytes); the rest of the file is not read`;
      }
      parser.push(c);
      if (parser.info.fatal) return null;
      if (now() - lastYield >= YIELD_EVERY_MS) {
        await macrotask();
        lastYield = now();
      }
      signal?.throwIfAborted();
    }
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (readError !== null) throw readError;
    const why = e instanceof Error ? e.message : String(e);
    return allFed
      ? `gzip stream ends early (after ${fed} compressed bytes): ${why}`
      : `gzip data is corrupt near compressed byte ${fed}: ${why}`;
  }
  return null;
}
