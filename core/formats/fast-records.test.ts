// The WASM record reader (fast-records.ts) against the JavaScript parser it stands in for: every real fixture
// dump and every form the module turns back read to the same records, counts, line numbers, problems and info,
// in any chunking; the records the module reads are most of a real dump's; its serials never meet the
// BacktraceCache's; and the committed module is what native-tools/dump-lines/build.sh makes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BacktraceCache } from './backtrace-cache.js';
import { FAST_SERIAL_BASE, fastRecords } from './fast-records.js';
import { HeapDumpParser, type DumpRecord } from './heap-dump.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface Read {
  records: Omit<DumpRecord, 'frameEntry' | 'frameWords'>[];
  words: number[][];
  viaWasm: number;
  info: unknown;
}

/** A parse of `text` in pieces of `chunk` bytes, with or without the WASM reader, records copied out. */
function parse(text: Uint8Array, fast: boolean, chunk: number, cache = new BacktraceCache()): Read {
  const records: Read['records'] = [];
  const words: number[][] = [];
  let viaWasm = 0;
  const p = new HeapDumpParser({
    fastRecords: fast,
    backtraces: cache,
    onRecord: (r) => {
      if ((r.frameEntry ?? -1) >= FAST_SERIAL_BASE) viaWasm++;
      words.push([...r.frameWords]);
      records.push({
        frameHash: r.frameHash,
        counts: { ...r.counts },
        threads: r.threads.map((t) => ({ uid: t.uid, counts: { ...t.counts } })),
        line: r.line,
      });
    },
  });
  for (let o = 0; o < text.length; o += chunk) p.push(text.subarray(o, Math.min(text.length, o + chunk)));
  return { records, words, viaWasm, info: p.finish() };
}

function expectSame(text: Uint8Array, chunks = [1 << 30, 65536, 777]): Read {
  let fast: Read | null = null;
  for (const c of chunks) {
    const js = parse(text, false, c);
    const f = parse(text, true, c);
    expect(f.records).toEqual(js.records);
    expect(f.words).toEqual(js.words);
    expect(f.info).toEqual(js.info);
    fast ??= f;
  }
  return fast!;
}

function fixtureDumps(): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.heap(\.gz)?$/.test(n)) out.push(p);
    }
  };
  walk(join(ROOT, 'fixtures'));
  return out.sort();
}

const bytesOf = (p: string): Uint8Array => {
  const b = readFileSync(p);
  return new Uint8Array(p.endsWith('.gz') ? gunzipSync(b) : b);
};
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('WASM record reader', () => {
  it('loads in Node (else every test below would compare the JavaScript parser with itself)', () => {
    expect(fastRecords()).not.toBeNull();
  });

  const dumps = fixtureDumps();
  it(`reads every real fixture dump as the JavaScript parser does (${dumps.length} dumps, 3 chunkings)`, () => {
    expect(dumps.length).toBeGreaterThan(100);
    let wasm = 0;
    let all = 0;
    for (const p of dumps) {
      const f = expectSame(bytesOf(p), [1 << 30, 4099]);
      wasm += f.viaWasm;
      all += f.records.length;
    }
    // most records of jemalloc's own dumps take the WASM path (a piece's last record is read here)
    expect(wasm / all).toBeGreaterThan(0.9);
  });

  // One real record section, then each form the module turns back, put into its middle.
  const real = new TextDecoder().decode(bytesOf(dumps.find((p) => /job\/dumps\/.*\.heap$/.test(p)) ?? dumps[0]));
  const lines = real.split('\n');
  const firstAt = lines.findIndex((l) => l.startsWith('@'));
  const mid = lines.findIndex((l, k) => k > firstAt + 40 && l.startsWith('@'));
  const variants: [string, (ls: string[]) => string[]][] = [
    ['CRLF line ends', (ls) => ls.map((l) => `${l}\r`)],
    ['a tab before a frame', (ls) => with_(ls, mid, ls[mid].replace(' 0x', '\t0x'))],
    ['two spaces between frames', (ls) => with_(ls, mid, ls[mid].replace(' 0x', '  0x'))],
    ['"0X" prefixes', (ls) => with_(ls, mid, ls[mid].replaceAll('0x', '0X'))],
    ['an address of 17 digits, zero-padded', (ls) => with_(ls, mid, ls[mid].replace('0x', '0x00000'))],
    ['a malformed address', (ls) => with_(ls, mid, ls[mid].replace('0x', '0xg'))],
    ['a record without frames', (ls) => with_(ls, mid, '@')],
    ['a total line with a tab', (ls) => with_(ls, mid + 1, ls[mid + 1].replace(' t*', '\tt*'))],
    ['a negative count', (ls) => with_(ls, mid + 1, ls[mid + 1].replace('t*: ', 't*: -'))],
    ['a count of 16 digits', (ls) => with_(ls, mid + 1, ls[mid + 1].replace(/\[\d+:/, '[1234567890123456:'))],
    ['a count past MAX_COUNT', (ls) => with_(ls, mid + 1, ls[mid + 1].replace(/\[\d+:/, '[99999999999999999999:'))],
    ['text after a count line', (ls) => with_(ls, mid + 1, `${ls[mid + 1]} extra`)],
    ['a second total line', (ls) => ins(ls, mid + 2, ls[mid + 1])],
    ['a thread line before the total', (ls) => ins(ls, mid + 1, '  t3: 1: 16 [0: 0]')],
    ['a record without count lines', (ls) => del(ls, mid + 1)],
    ['a record whose total is malformed', (ls) => with_(ls, mid + 1, '  t*: 1: x [0: 0]')],
    ['objects without bytes', (ls) => with_(ls, mid + 1, '  t*: 1: 0 [0: 0]')],
    ['a blank line inside the records', (ls) => ins(ls, mid, '')],
    ['an unknown line', (ls) => ins(ls, mid, 'hello')],
    ['1,025 frames', (ls) => with_(ls, mid, `@${' 0x7f0000001000'.repeat(1025)}`)],
    ['1,024 frames', (ls) => with_(ls, mid, `@${' 0x7f0000001000'.repeat(1024)}`)],
    ['the file cut inside a count line', (ls) => [...ls.slice(0, mid + 1), ls[mid + 1].slice(0, 7)]],
    ['the file cut after a backtrace line', (ls) => ls.slice(0, mid + 1)],
  ];
  it.each(variants)('%s: the same records, problems and info', (_name, change) => {
    expectSame(enc(change([...lines]).join('\n')));
  });

  it('reads a line that differs from one it kept by one byte, by its length or its line end as its own', () => {
    const dump = (...bt: string[]): Uint8Array =>
      enc(
        ['heap_v2/1', '  t*: 9: 900 [0: 0]', ...bt.flatMap((r, k) => [r, `  t*: 1: ${k + 1} [0: 0]`]), ''].join('\n'),
      );
    const kept = ['@ 0x7f0000001000 0x7f0000002000', '@ 0x7f0000003000 0x7f0000004000', '@ 0xa 0xb'];
    // the module's tables outlive a parse (one instance a thread): each variant is read after the kept lines
    for (const variant of [
      ['@ 0x7f0000001000 0x7f0000002001', kept[1], kept[2]],
      ['@ 0x7f0000001000 0x7f000000200', kept[1], kept[2]],
      ['@ 0x7f0000001000 0x7f00000020000', kept[1], kept[2]],
      [kept[0], '@ 0x7f0000003000 0x7f0000004000 0x1', kept[2]],
      [kept[0], kept[1], '@ 0xa 0xc'],
      [kept[0], kept[1], '@ 0xa'],
      [kept[2], kept[1], kept[0]],
    ]) {
      expectSame(dump(...kept));
      expectSame(dump(...variant));
      expectSame(dump(...kept));
    }
  });

  it('keeps reading a CRLF file line by line after turning back a few records, with the same result', () => {
    const crlf = enc(lines.map((l) => `${l}\r`).join('\n'));
    const f = expectSame(crlf, [1 << 30]);
    expect(f.viaWasm).toBe(0);
  });

  it('its serials never meet the BacktraceCache’s, and equal serials are equal words', () => {
    const text = enc(real);
    const cache = new BacktraceCache();
    const seen = new Map<number, string>();
    for (let pass = 0; pass < 2; pass++) {
      const p = new HeapDumpParser({
        backtraces: cache,
        onRecord: (r) => {
          const key = [...r.frameWords].join(',');
          const e = r.frameEntry ?? -1;
          if (e < 0) return;
          const before = seen.get(e);
          if (before !== undefined) expect(before).toBe(key);
          seen.set(e, key);
        },
      });
      for (let o = 0; o < text.length; o += 5000) p.push(text.subarray(o, Math.min(text.length, o + 5000)));
      p.finish();
    }
    const serials = [...seen.keys()];
    expect(serials.some((s) => s >= FAST_SERIAL_BASE)).toBe(true);
    expect(serials.some((s) => s < FAST_SERIAL_BASE)).toBe(true);
    expect(new BacktraceCache().serial(0)).toBeLessThan(FAST_SERIAL_BASE);
  });

  it('restarts its tables past 32 MiB of lines with every record still read right', () => {
    // 60,000 distinct backtrace lines of ~600 bytes: past the module's 32 MiB of kept lines
    const parts = ['heap_v2/524288', '  t*: 60000: 60000 [0: 0]'];
    for (let k = 0; k < 60_000; k++) {
      const frames: string[] = [];
      for (let f = 0; f < 40; f++) frames.push(`0x7f${(k * 40 + f).toString(16).padStart(10, '0')}`);
      parts.push(`@ ${frames.join(' ')}`, '  t*: 1: 1 [0: 0]', '  t0: 1: 1 [0: 0]');
    }
    parts.push('', 'MAPPED_LIBRARIES:', '');
    const text = enc(parts.join('\n'));
    const f = expectSame(text, [262144]);
    expect(f.records.length).toBe(60_000);
    expect(f.viaWasm).toBeGreaterThan(59_000);
  }, 60_000);
});

function with_(ls: string[], k: number, line: string): string[] {
  const out = [...ls];
  out[k] = line;
  return out;
}
function ins(ls: string[], k: number, line: string): string[] {
  return [...ls.slice(0, k), line, ...ls.slice(k)];
}
function del(ls: string[], k: number): string[] {
  return [...ls.slice(0, k), ...ls.slice(k + 1)];
}

// The committed module must be what the build makes from src/lib.rs (a few seconds: always run where the
// toolchain is; CI installs it and sets HEAPLENS_WASM_REBUILD=1, which makes a missing toolchain a failure).
const toolchain =
  existsSync('/usr/bin/rustc') &&
  existsSync('/usr/lib/rustlib/wasm32-unknown-unknown') &&
  existsSync('/usr/bin/wasm-opt');
const rebuild = toolchain || process.env.HEAPLENS_WASM_REBUILD === '1';
if (!rebuild)
  console.warn(
    'fast-records.test: rebuild check skipped, needs Debian rustc with the wasm32 standard library and binaryen (native-tools/addr2line/apt-packages.txt)',
  );
describe('dump-lines-wasm.ts', () => {
  it.skipIf(!rebuild)(
    'rebuilds byte for byte from native-tools/dump-lines',
    () => {
      const scratch = mkdtempSync(join(tmpdir(), 'heaplens-dump-lines-'));
      try {
        const out = join(scratch, 'rebuilt.ts');
        execFileSync(join(ROOT, 'native-tools', 'dump-lines', 'build.sh'), {
          env: { ...process.env, OUT: out },
          stdio: 'pipe',
        });
        expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(import.meta.dirname, 'dump-lines-wasm.ts'), 'utf8'));
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
