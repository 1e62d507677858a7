// Reads one dump from an InputFile in chunks, un-gzipping on the fly when the bytes say gzip
// (magic 1f 8b, whatever the file is called), and feeds the push parser.

import { Inflate } from 'pako';
import type { InputFile } from './input-file.js';
import { HeapDumpParser, type DumpRecord, type ParsedDumpInfo } from './heap-dump.js';

export const READ_CHUNK = 4 * 1024 * 1024;

export interface ReadDumpOptions {
  /** called per complete record, with the header already parsed (sampling known) */
  onRecord?: (r: DumpRecord, info: ParsedDumpInfo) => void;
  /** called after each chunk with the compressed bytes read so far */
  onBytes?: (bytesRead: number) => void;
  signal?: AbortSignal;
  chunkSize?: number;
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
