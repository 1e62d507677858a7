// Reads one dump from an InputFile in chunks, un-gzipping on the fly when the bytes say gzip
// (magic 1f 8b, whatever the file is called), and feeds the push parser. Gzip goes through the host's
// native inflater when given one (inflate.ts), else pako.

import { Inflate } from 'pako';
import type { InputFile } from './input-file.js';
import { HeapDumpParser, type DumpRecord, type ParsedDumpInfo } from './heap-dump.js';
import type { Inflater } from './inflate.js';

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
}

export interface ReadDumpResult {
  info: ParsedDumpInfo;
  records: DumpRecord[];
  gzip: boolean;
  /** set when a gzip stream was corrupt or ended early (everything before it is kept) */
  gzipProblem: string | null;
}

// pako sets `ended` at runtime; its type declarations leave it out.
type InflateWithState = Inflate & { ended: boolean };

export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

export async function readDump(file: InputFile, options: ReadDumpOptions = {}): Promise<ReadDumpResult> {
  const onRecord = options.onRecord;
  const parser: HeapDumpParser = new HeapDumpParser(onRecord ? { onRecord: (r) => onRecord(r, parser.info) } : {});
  const chunkSize = options.chunkSize ?? READ_CHUNK;
  let offset = 0;
  let gzip = false;
  let gzipProblem: string | null = null;
  let inflate: InflateWithState | null = null;

  if (options.inflate && file.size >= 2) {
    const head = await file.read(0, Math.min(chunkSize, file.size));
    if (isGzip(head)) {
      const gzipProblem = await inflateNative(file, head, parser, options.inflate, chunkSize, options);
      return { info: parser.finish(), records: parser.records, gzip: true, gzipProblem };
    }
  }

  while (offset < file.size) {
    options.signal?.throwIfAborted();
    const bytes = await file.read(offset, Math.min(chunkSize, file.size - offset));
    if (bytes.length === 0) break;
    if (offset === 0 && isGzip(bytes)) {
      gzip = true;
      inflate = new Inflate() as InflateWithState;
      inflate.onData = (c: Uint8Array) => parser.push(c);
    }
    offset += bytes.length;
    if (inflate) {
      if (!inflate.ended) {
        inflate.push(bytes, false);
        if (inflate.err) gzipProblem = `gzip data is corrupt near compressed byte ${offset}: ${inflate.msg}`;
      }
    } else {
      parser.push(bytes);
    }
    options.onBytes?.(offset);
    if (gzipProblem) break;
  }
  if (inflate && !gzipProblem && !inflate.ended) {
    inflate.push(new Uint8Array(0), true);
    if (!inflate.ended || inflate.err) gzipProblem = `gzip stream ends early (after ${offset} compressed bytes)`;
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
  let fed = 0;
  let allFed = false;
  let readError: unknown = null;
  async function* compressed(): AsyncGenerator<Uint8Array> {
    let bytes = head;
    while (bytes.length > 0) {
      options.signal?.throwIfAborted();
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
    for await (const c of inflater(compressed())) parser.push(c);
  } catch (e) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (readError !== null) throw readError;
    const why = e instanceof Error ? e.message : String(e);
    return allFed ? `gzip stream ends early (after ${fed} compressed bytes): ${why}` : `gzip data is corrupt near compressed byte ${fed}: ${why}`;
  }
  return null;
}
