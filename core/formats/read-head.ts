// Reads only the head of a dump: its format, sampling and header totals (the `t*:` line of heap_v2,
// the first line of `heap profile:`), for a timeline of every process within seconds of opening a job,
// before any record is parsed. Gzipped heads are inflated as far as needed, never the whole file.

import { Inflate } from 'pako';
import { HeapDumpParser, type Sampling } from './heap-dump.js';
import type { RawCounts } from './dump-types.js';
import type { InputFile } from './input-file.js';
import type { Inflater } from './inflate.js';
import { isGzip } from './read-dump.js';

// The header sits in the first lines; 64 KiB also covers a few hundred leading thread lines or
// `<jemalloc>:` messages. A head that does not show the totals within it gives null (the full read decides).
export const HEAD_BYTES = 64 * 1024;

export interface DumpHead {
  header: RawCounts | null;
  sampling: Sampling;
}

// First try: the header is within the first few hundred bytes of nearly every dump, and each read is an
// IPC round trip in the app, so a small read first and the full head only when it was not enough.
const FIRST_READ = 4096;
/** compressed bytes a gzipped head is first inflated from (~4–10 KiB of text: the header and the first records) */
const HEAD_SLICE = 1024;

/** `known`: the file's first bytes when the caller already read them (the classify step's sniff), else read here. */
export async function readDumpHead(
  file: InputFile,
  inflate: Inflater | null = null,
  known: Uint8Array | null = null,
): Promise<DumpHead> {
  const first = await headOf(
    known && known.length >= Math.min(FIRST_READ, file.size)
      ? known
      : await file.read(0, Math.min(FIRST_READ, file.size)),
    inflate,
  );
  if (first.header !== null || file.size <= FIRST_READ) return first;
  return headOf(await file.read(0, Math.min(HEAD_BYTES, file.size)), inflate);
}

async function headOf(bytes: Uint8Array, inflate: Inflater | null): Promise<DumpHead> {
  if (inflate?.head && isGzip(bytes)) {
    // the header is in the first lines: the first compressed bytes inflated at once give it (at most ~1 and ~4 MiB
    // of text from HEAD_SLICE and FIRST_READ bytes, even for a gzip bomb); else the stream reads on
    for (const n of [HEAD_SLICE, FIRST_READ]) {
      const text = inflate.head(bytes.subarray(0, n));
      if (!text) break;
      const h = headOf(text.subarray(0, HEAD_BYTES), null);
      if ((await h).header !== null || n >= bytes.length) return h;
    }
  }
  const parser = new HeapDumpParser({ onRecord: () => undefined });
  const known = () => parser.info.header !== null || parser.info.fatal !== null || parser.info.recordCount > 0;
  if (!isGzip(bytes)) {
    parser.push(bytes);
  } else if (inflate) {
    let got = 0;
    async function* one(): AsyncGenerator<Uint8Array> {
      yield bytes;
    }
    try {
      for await (const c of inflate(one())) {
        parser.push(c);
        got += c.length;
        if (known() || got >= HEAD_BYTES) break;
      }
    } catch {
      // a head cut mid-stream always "ends early": what was inflated before is what we wanted
    }
  } else {
    const z = new Inflate();
    z.onData = (c: Uint8Array) => parser.push(c);
    z.push(bytes, false);
  }
  const info = parser.info;
  return { header: info.header, sampling: info.sampling };
}
