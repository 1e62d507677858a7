// What a file is, from its first bytes (never from its name): the one place every input's format is told.
// One entry per format, tried in order; a reader's entry says `read: true`, a format heaplens recognizes but
// does not read says what the file is and what to do with it, in one line. Compression is told here too:
// the loader unwraps it (decompress.ts) and sniffs again on the inner bytes.

import { looksLikePickle } from './pickle.js';
import { looksLikeMemleak } from './memleak.js';

/** Bytes the loaders hand to `sniff` (after decompression for a compressed file). */
export const SNIFF_BYTES = 4096;

export interface SniffEntry {
  /** stable name, used by the loader to pick the reader */
  name: string;
  /** what the file is, as the user knows it ("valgrind massif output") */
  what: string;
  /** true when heaplens reads it; else `advice` says what to do instead */
  read: boolean;
  /** for formats not read: what to open it with */
  advice?: string;
  /** a compression container: unwrap and sniff again */
  compression?: boolean;
  test(head: Uint8Array, text: string): boolean;
}

const startsWithBytes = (head: Uint8Array, bytes: readonly number[]): boolean =>
  head.length >= bytes.length && bytes.every((b, i) => head[i] === b);

/** Whether the head is a protobuf message whose first fields fit pprof's Profile (profile.proto). */
export function looksLikePprof(head: Uint8Array): boolean {
  // Profile's fields: 1–6 and 11 are length-delimited (sample_type, sample, mapping, location, function,
  // string_table, period_type), 7–10, 12, 14 varints; 13 (comment) either (packed or not).
  const lenFields = new Set([1, 2, 3, 4, 5, 6, 11, 13]);
  const varFields = new Set([7, 8, 9, 10, 12, 13, 14]);
  let i = 0;
  let fields = 0;
  const varint = (): number | null => {
    let v = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (i >= head.length) return null;
      const b = head[i++];
      v += (b & 0x7f) * mul;
      mul *= 128;
      if ((b & 0x80) === 0) return v;
    }
    return null;
  };
  while (i < head.length && fields < 8) {
    const tag = varint();
    if (tag === null) break;
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (wire === 2 && lenFields.has(field)) {
      const len = varint();
      if (len === null) break;
      // the first field of Go's and every other writer is sample_type: a small ValueType message (08 … 10 …)
      if (fields === 0 && field === 1 && (len > 64 || (i < head.length && head[i] !== 0x08))) return false;
      i += len;
    } else if (wire === 0 && varFields.has(field)) {
      if (varint() === null) break;
    } else return false;
    fields++;
  }
  return fields >= 1 && (fields >= 2 || i >= head.length);
}

/** The formats in the order they are tried (the more specific first: DUMP_DEEP before jemalloc's "heap profile:"). */
export const SNIFFERS: SniffEntry[] = [
  {
    name: 'gzip',
    what: 'gzip-compressed',
    read: true,
    compression: true,
    test: (h) => startsWithBytes(h, [0x1f, 0x8b]),
  },
  {
    name: 'zstd',
    what: 'zstd-compressed',
    read: true,
    compression: true,
    test: (h) => startsWithBytes(h, [0x28, 0xb5, 0x2f, 0xfd]),
  },
  {
    name: 'bzip2',
    what: 'bzip2-compressed',
    read: true,
    compression: true,
    // "BZh" + block size 1–9 + the first block's magic (π's digits 0x314159265359) or the end-of-stream magic
    test: (h) => startsWithBytes(h, [0x42, 0x5a, 0x68]) && h.length > 3 && h[3] >= 0x31 && h[3] <= 0x39,
  },
  {
    name: 'xz',
    what: 'xz-compressed',
    read: true,
    compression: true,
    test: (h) => startsWithBytes(h, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]),
  },
  {
    name: 'chromium-deep',
    what: 'a Chromium Deep Memory Profiler dump (heap profile: DUMP_DEEP_…)',
    read: false,
    advice:
      "read it with Chromium's dmprof (tools/deep_memory_profiler); heaplens reads jemalloc, gperftools, Go, pprof and massif profiles",
    test: (_h, t) => /^heap profile: DUMP_DEEP_\d/.test(t),
  },
  {
    name: 'jemalloc',
    what: 'a jemalloc / gperftools / Go text heap profile',
    read: true,
    // blank lines first allowed; [^\S\n] rather than \s, whose overlap with \n made a head of newlines backtrack
    // exponentially (64 KiB of them hung the load: issue 46's bzip2 of newlines, once decoded)
    test: (_h, t) => /^(?:[^\S\n]*\n)*(?:heap_v2\/|heap profile:|<jemalloc>:)/.test(t),
  },
  {
    name: 'massif',
    what: 'valgrind massif output',
    read: true,
    test: (_h, t) => /^desc:.*\ncmd:.*\ntime_unit:/.test(t),
  },
  {
    name: 'heaptrack',
    what: 'a heaptrack capture',
    read: false,
    advice:
      'open it with heaptrack_gui, or print it with `heaptrack_print FILE`; heaplens does not read heaptrack captures',
    // heaptrack's first line: "v <heaptrack version, hex> <file format version, hex>", then "X <executable>"
    test: (_h, t) => /^v [0-9a-f]+ [0-9a-f]+\n/.test(t),
  },
  {
    name: 'dhat',
    what: 'valgrind DHAT output (dhat-heap.json)',
    read: false,
    advice:
      "open it in DHAT's viewer (valgrind's dh_view.html); it holds DHAT's access statistics, not a heap profile heaplens reads",
    test: (_h, t) => /^\s*\{[\s\S]{0,200}"dhatFileVersion"/.test(t),
  },
  {
    name: 'pytorch-snapshot',
    what: 'a Python pickle (a PyTorch memory snapshot, torch.cuda.memory._dump_snapshot)',
    // read by core/formats/torch-snapshot.ts through the restricted unpickler (pickle.ts): a pickle that is not
    // plain data is refused there with the opcode and offset
    read: true,
    test: (h) => looksLikePickle(h),
  },
  {
    name: 'memleak',
    what: "bcc memleak's report (or heaplens' memleak.bt)",
    read: true,
    test: (_h, t) => looksLikeMemleak(t),
  },
  {
    name: 'java-heapz',
    what: 'a Java heap profile (--- heapz … ---)',
    read: false,
    advice: 'convert it with `go tool pprof -proto FILE > FILE.pb.gz` and open that',
    test: (_h, t) => /^\s*--- ?heapz? ?\d* ?---/.test(t),
  },
  {
    name: 'pprof',
    what: 'a pprof protobuf profile',
    read: true,
    // text never is: protobuf tags and lengths are control bytes (a text's letters can pass for field tags)
    test: (h) => !isText(h) && looksLikePprof(h),
  },
];

export interface Sniffed {
  entry: SniffEntry | null;
  /** for content no entry knows: 'text' (its first line says what it is) or 'binary' */
  kind: 'known' | 'text' | 'binary' | 'empty';
}

const decoder = new TextDecoder('utf-8');

/** The entry for these first bytes (at most SNIFF_BYTES of them), or what kind of unknown content it is. */
export function sniff(head: Uint8Array): Sniffed {
  if (head.length === 0) return { entry: null, kind: 'empty' };
  const text = decoder.decode(head.subarray(0, SNIFF_BYTES));
  for (const e of SNIFFERS) if (e.test(head, text)) return { entry: e, kind: 'known' };
  return { entry: null, kind: isText(head) ? 'text' : 'binary' };
}

/** Text: no NUL and almost no control bytes other than tab, CR, LF (UTF-8 bytes above 0x7f are text). */
function isText(head: Uint8Array): boolean {
  let control = 0;
  const n = Math.min(head.length, SNIFF_BYTES);
  for (let i = 0; i < n; i++) {
    const c = head[i];
    if (c === 0) return false;
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
  }
  return control * 100 <= n;
}

/** The first bytes as hex (at most 16), for content nothing knows: never shown as raw characters. */
export function hexHead(head: Uint8Array): string {
  return [...head.subarray(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}

/** A text file's first non-blank line, cut to 200 characters. */
export function firstLine(head: Uint8Array): string {
  const line =
    decoder
      .decode(head.subarray(0, SNIFF_BYTES))
      .split(/\r?\n/)
      .find((l) => l.trim() !== '') ?? '';
  const t = line.trim();
  return t.length > 200 ? t.slice(0, 200) + '…' : t;
}

/**
 * The one line for a file that is not read: what it is and what to do (the caller prefixes the file name).
 * Null for formats heaplens reads.
 */
export function refusal(s: Sniffed, head: Uint8Array): string | null {
  if (s.entry) return s.entry.read ? null : `${s.entry.what}, not read by heaplens: ${s.entry.advice ?? ''}`.trim();
  switch (s.kind) {
    case 'empty':
      return 'empty file (zero bytes): a dump whose writer was stopped before its first write';
    case 'text':
      return `not a heap profile; the file says: "${firstLine(head)}"`;
    default:
      return `not a heap profile: unknown binary content (first bytes ${hexHead(head)})`;
  }
}
