// Where mutation of the fixtures is blind (issue 46): inputs built from their formats' structure (structured.ts),
// inputs larger than any fixture (codec steps, texts of 512 MiB–1 GiB generated while read), and hostile names
// through every export. `npm test` runs a short pass (seconds); `npm run fuzz` (HEAPLENS_FUZZ_FULL=1) runs many
// more cases, the large inputs, and the cases of rows other branches are fixing, which fail until those land.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { Rng } from './mutate.js';
import {
  absurdSnapshot,
  hostileName,
  massifWith,
  pprofWith,
  sharedMemoSnapshot,
  textHead,
  zstdStructured,
} from './structured.js';
import type { LoadPeak } from './load-peak.js';
import type { DecodePeak } from './decode-peak.js';
import { codecOf, DecodeProblem, decodedChunks } from '../../core/formats/decompress.js';
import { sniff, SNIFF_BYTES } from '../../core/formats/sniff.js';
import { inflateLimit, MAX_COUNT } from '../../core/formats/limits.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { loadJob } from '../../core/load/load-job.js';
import { DEFAULT_VIEW, viewSource } from '../../core/frames/view.js';
import { hasControls } from '../../core/model/display-text.js';
import { parseFolded, toFolded } from '../../core/export/folded.js';
import { toSpeedscope } from '../../core/export/speedscope.js';
import { toPprof } from '../../core/export/pprof.js';
import { FIXTURES, findFixture, fixturePath } from '../fixtures.js';

const FULL = process.env.HEAPLENS_FUZZ_FULL === '1';
const SEED = Number(process.env.HEAPLENS_FUZZ_SEED ?? 1);
/** cases per structured generator: a short pass in `npm test`, many in `npm run fuzz` */
const CASES = Number(process.env.HEAPLENS_FUZZ_STRUCTURED_CASES ?? (FULL ? 2000 : 30));
const ROOT = resolve(import.meta.dirname, '..', '..');
const MB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'heaplens-structured-'));
const enc = new TextEncoder();
const mem = (path: string, bytes: Uint8Array): InputFile => ({
  path,
  size: bytes.length,
  mtimeMs: null,
  read: async (o, l) => bytes.subarray(o, o + l),
});

/**
 * A case that generates hundreds of MiB while it is read (minutes on two cores): `npm run fuzz` runs it; the short
 * pass skips it and says why.
 */
function heavy(name: string, fn: () => Promise<void> | void, timeout = 180_000): void {
  if (FULL) {
    it(name, fn, timeout);
    return;
  }
  console.warn(
    `structured fuzz: skipped "${name}": it generates hundreds of MiB as it is read; \`npm run fuzz\` runs it`,
  );
  it.skip(name, fn);
}

/** Runs a tools/fuzz child script under a heap limit; its JSON line, or how it died. */
function child<T>(script: string, args: string[], heapMb = 1536): { r: T | null; died: string | null } {
  try {
    const out = execFileSync(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, '--import', 'tsx', join(ROOT, 'tools/fuzz', script), ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 150_000, maxBuffer: 16 * MB, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return { r: JSON.parse(out.trim().split('\n').pop()!) as T, died: null };
  } catch (e) {
    const x = e as { status?: number | null; signal?: string | null; stderr?: string };
    return { r: null, died: `exit ${x.status ?? x.signal}: ${(x.stderr ?? '').slice(-400)}` };
  }
}

/** The row's invariants for a file loaded in a child: no crash, memory bounded, figures within bounds. */
function loadsWithinBounds(name: string, bytes: Uint8Array | null, generate?: [string, number]): LoadPeak {
  const args = generate ? ['--generate', generate[0], String(generate[1])] : [join(dir, name)];
  if (bytes) writeFileSync(join(dir, name), bytes);
  const { r, died } = child<LoadPeak>('load-peak.ts', args);
  expect(died, `${name}: the load died`).toBeNull();
  console.log(
    `${name}: peak RSS +${(r!.peakGrowth / MB).toFixed(0)} MB, ${r!.ms} ms, warnings:`,
    r!.warnings.map((w) => w.message.slice(0, 140)),
  );
  expect(r!.broken, `${name}: figures past their bounds`).toEqual([]);
  // no sum past 2^53 printed in a warning either
  for (const w of r!.warnings)
    for (const n of w.message.match(/\d{16,}/g) ?? [])
      expect(Number(n), `${name}: ${w.message}`).toBeLessThanOrEqual(MAX_COUNT);
  expect(r!.peakGrowth, `${name}: peak memory`).toBeLessThan(512 * MB);
  return r!;
}

describe('structured: codec streams', () => {
  it(`${CASES} zstd streams of random frames and blocks: the output bound holds, only DecodeProblem is thrown`, async () => {
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const bytes = zstdStructured(rng);
      const limit = inflateLimit(bytes.length);
      let out = 0;
      const t0 = performance.now();
      try {
        for await (const c of decodedChunks(mem('x.zst', bytes), 'zstd', { chunkSize: 1 + rng.int(70000) }))
          out += c.length;
      } catch (e) {
        if (!(e instanceof DecodeProblem)) throw new Error(`case ${i} (seed ${SEED}): ${String(e)}`, { cause: e });
      }
      expect(out, `case ${i}`).toBeLessThanOrEqual(limit);
      expect(performance.now() - t0, `case ${i}`).toBeLessThan(5000);
    }
  }, 300_000);

  // larger than any fixture: streams the codecs' own tools make from runs, decoded in a child process whose peak
  // memory is measured (the bound: a few times the limit, whatever the codec's step)
  const bombs: [string, string][] = [
    ['zstd', 'zstd -q -c --no-check'],
    ['bzip2', 'bzip2 -9 -c'],
    ['xz', 'xz -0 -c'],
    ['gzip', 'gzip -9 -c'],
  ];
  for (const [codec, cmd] of bombs)
    (FULL ? it : it.skip)(
      `${codec}: 1 GiB of zeros stops at the limit, memory a few times the limit`,
      () => {
        let bytes: Uint8Array;
        try {
          bytes = new Uint8Array(
            execFileSync('sh', ['-c', `head -c 1073741824 /dev/zero | ${cmd}`], { maxBuffer: 64 * MB }),
          );
        } catch {
          console.warn(`structured fuzz: ${cmd.split(' ')[0]} not installed; the ${codec} bomb is not tried`);
          return;
        }
        expect(codecOf(bytes)).toBe(codec);
        writeFileSync(join(dir, `zeros.${codec}`), bytes);
        const { r, died } = child<DecodePeak>('decode-peak.ts', [join(dir, `zeros.${codec}`)]);
        expect(died).toBeNull();
        const limit = inflateLimit(bytes.length);
        console.log(
          `${codec}: ${bytes.length} B → ${r!.out} B, peak RSS +${(r!.peakGrowth / MB).toFixed(0)} MB, ${r!.ms} ms`,
        );
        expect(r!.out).toBe(limit);
        expect(r!.problem).toMatch(/at the limit of/);
        expect(r!.peakGrowth).toBeLessThan(4 * limit + 64 * MB);
      },
      600_000,
    );
  if (!FULL) console.warn('structured fuzz: the 1 GiB codec bombs run in `npm run fuzz` only (minutes of compression)');
});

describe('structured: heads for the sniffer', () => {
  it(`${CASES} heads of long runs of blanks and format prefixes: each told within 200 ms`, () => {
    // a pattern whose parts overlap (\s* and \n) backtracked exponentially on 30 blank lines
    const rng = new Rng(SEED);
    const enc8 = new TextEncoder();
    for (let i = 0; i < CASES; i++) {
      const head = enc8.encode(textHead(rng, 1 + rng.int(SNIFF_BYTES))).subarray(0, SNIFF_BYTES);
      const t0 = performance.now();
      sniff(head);
      expect(performance.now() - t0, `case ${i} (seed ${SEED})`).toBeLessThan(200);
    }
  });
});

describe('structured: context times and sizes beyond every bound', () => {
  const DUMPS = join(FIXTURES, '..', 'job', 'dumps');
  const name = 'job.7899.0.i0.heap';
  const dump = new Uint8Array(readFileSync(join(DUMPS, `${name}.gz`)));
  const side = readFileSync(join(DUMPS, `${name}.pyframes`), 'utf8');
  const values = ['9223372036854775807', '18446744073709551616', '-1', '9'.repeat(400), '1e20', '0x10', '', 'soon'];
  it('a capture whose C lines hold absurd times and sizes: loaded, every figure within its bound', async () => {
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const key = rng.pick(['time_real_ns', 'start_real_ns', 'time_mono_ns', 'rss_bytes', 'pid']);
      const v = rng.pick(values);
      const text = side.replace(new RegExp(`^C ${key} .*$`, 'm'), `C ${key} ${v}`);
      const job = await loadJob([mem(`c/${name}.gz`, dump), mem(`c/${name}.pyframes`, enc.encode(text))]);
      for (const p of job.processes)
        for (const s of p.snapshots) {
          const c = s.context;
          if (!c) continue;
          for (const ms of [c.timeRealMs, c.startRealMs])
            if (ms !== null && ms !== undefined)
              expect(Math.abs(ms) < 8.64e15 && Number.isFinite(new Date(ms).getTime()), `${key}=${v}: ${ms}`).toBe(
                true,
              );
        }
    }
  });
});

describe('structured: every export with hostile names', () => {
  const name = findFixture('job', /^exact\.\d+\.20\.f\.heap$/);
  const text = readFileSync(fixturePath(name), 'utf8');
  it(`${CASES} dumps whose module paths hold controls, bidi marks, separators: no export lets one through`, async () => {
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const hostile = hostileName(rng);
      const bytes = enc.encode(text.replaceAll('/tmp/heaplens-lab/leaky', `/tmp/heaplens-lab/${hostile}`));
      const job = await loadJob([mem(name.split('/').pop()!, bytes)]);
      const inputs = job.processes.map((p) => ({
        proc: p,
        snapshotIndex: p.snapshots.length - 1,
        frames: viewSource(p, DEFAULT_VIEW),
      }));
      const id = `case ${i} (seed ${SEED}) ${JSON.stringify(hostile)}`;
      const folded = toFolded(inputs);
      expect(hasControls(folded), id).toBe(false);
      const lines = parseFolded(folded);
      expect(lines.length, id).toBe(folded.split('\n').length - 1);
      for (const l of lines) expect(Number.isInteger(l.weight) && l.weight > 0, id).toBe(true);
      const doc = toSpeedscope(inputs);
      for (const f of doc.shared.frames) expect(hasControls(f.name) || /[\t\n]/.test(f.name), id).toBe(false);
      for (const p of doc.profiles) expect(hasControls(p.name), id).toBe(false);
      expect(hasControls(JSON.stringify(doc)), id).toBe(false);
      const prof = Profile.decode(toPprof(inputs));
      for (const s of prof.stringTable.strings) expect(hasControls(s), `${id}: ${JSON.stringify(s)}`).toBe(false);
    }
  }, 120_000);
});

describe("structured: the readers issue 46's fourth review bounded", () => {
  it('a 15 KB pickle of 1,000 × 1,000 × 1,000 shared memo references', () => {
    const r = loadsWithinBounds('shared-memo.pickle', sharedMemoSnapshot(1000));
    // refused with the offset of the shared container, or read within the bounds above
    if (r.processes === 0) expect(r.warnings.some((w) => w.byteOffset !== undefined)).toBe(true);
  });
  const rng = new Rng(SEED);
  const absurd = Array.from({ length: FULL ? CASES : 6 }, () => absurdSnapshot(rng));
  it(`${absurd.length} snapshots with a size, device or time past its bound`, () => {
    for (const [i, a] of absurd.entries()) loadsWithinBounds(`absurd-${i} (${a.what}).pickle`, a.bytes);
  });
  it('a pprof profile dated 2^63−1 ns', () => {
    loadsWithinBounds('time.pb', pprofWith('time'));
  });
  it("a pprof sample's packed field claiming 65,535 bytes inside 5", () => {
    const r = loadsWithinBounds('packed.pb', pprofWith('packed length'));
    expect(r.warnings.some((w) => w.byteOffset !== undefined)).toBe(true);
  });
  it('massif tree nodes of 1e29 and of 400 digits', () => {
    loadsWithinBounds('massif.out.29', massifWith('1' + '0'.repeat(29)));
    loadsWithinBounds('massif.out.400', massifWith('9'.repeat(400)));
  });
  heavy('a memleak log of 513 MiB, generated while read', () => {
    const r = loadsWithinBounds('memleak.txt (513 MiB)', null, ['memleak', 513]);
    expect(r.processes + r.warnings.length).toBeGreaterThan(0);
  });
  heavy('a massif file of 1 GiB, generated while read', () => {
    const r = loadsWithinBounds('massif.out (1 GiB)', null, ['massif', 1024]);
    expect(r.warnings.map((w) => w.message).join('\n')).not.toMatch(/no snapshot/);
  });
});
