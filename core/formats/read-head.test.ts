import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readDumpHead } from './read-head.js';
import { webInflater } from './inflate.js';
import { nodeInflater } from '../../node/io/gunzip.js';
import type { InputFile } from './input-file.js';
import { fixtureFiles, fixturePath } from '../../tools/fixtures.js';
import { previewJob } from '../load/job-preview.js';
import { classifyFiles, loadJob } from '../load/load-job.js';

function memFile(path: string, bytes: Uint8Array): InputFile {
  return { path, size: bytes.length, mtimeMs: null, read: async (o, l) => bytes.subarray(o, o + l) };
}

/** The header totals as the file's own text says them (the first "t*:" line, or the "heap profile:" line). */
function textHeader(bytes: Buffer): number[] | null {
  const text = bytes.subarray(0, 65536).toString('latin1');
  const m =
    /^\s*t\*:\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]/m.exec(text) ??
    /^heap profile:\s*(-?\d+):\s*(-?\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]/m.exec(text);
  return m ? m.slice(1, 5).map(Number) : null;
}

describe('readDumpHead', () => {
  it("gives every fixture dump's header totals as its text has them, plain and gzipped (native and pako inflate)", async () => {
    const files = [...fixtureFiles('job'), ...fixtureFiles('other')].filter((f) => /\.heap$/.test(f.path));
    let compared = 0;
    for (const f of files) {
      const bytes = readFileSync(fixturePath(f.path));
      const want = textHeader(bytes);
      if (want === null) continue;
      for (const [file, inflate] of [
        [memFile(f.path, bytes), null],
        [memFile(f.path + '.gz', gzipSync(bytes)), webInflater()],
        [memFile(f.path + '.gz', gzipSync(bytes)), nodeInflater],
        [memFile(f.path + '.gz', gzipSync(bytes)), null],
      ] as const) {
        const h = await readDumpHead(file, inflate);
        expect(
          h.header && [h.header.liveObjects, h.header.liveBytes, h.header.accumObjects, h.header.accumBytes],
          file.path,
        ).toEqual(want);
      }
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(60);
  });

  it("a gzipped head whose header lies past the first compressed KiB is read from the rest (node's head inflate)", async () => {
    const f = fixtureFiles('job').find((x) => /\.heap$/.test(x.path))!;
    const bytes = readFileSync(fixturePath(f.path));
    // jemalloc's own messages ahead of the header, incompressible enough to push it past 1 KiB of gzip
    let seed = 7;
    const noise = Array.from({ length: 120 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return `<jemalloc>: message ${seed.toString(36)}${(seed * 7).toString(36)}\n`;
    }).join('');
    const gz = gzipSync(Buffer.concat([Buffer.from(noise), bytes]));
    const firstKiB = gunzipSync(gz.subarray(0, 1024), { finishFlush: 2 }).toString('latin1');
    expect(firstKiB).not.toMatch(/t\*:/);
    const h = await readDumpHead(memFile('noisy.heap.gz', gz), nodeInflater);
    expect(h.header && [h.header.liveObjects, h.header.liveBytes, h.header.accumObjects, h.header.accumBytes]).toEqual(
      textHeader(bytes),
    );
  });

  it('a cut gzip copy still shows its head', async () => {
    const gz = readFileSync(fixturePath('damaged/gzip-copy.heap.gz'));
    const want = textHeader(gunzipSync(gz));
    const h = await readDumpHead(memFile('cut.heap.gz', gz.subarray(0, 200)), webInflater());
    expect(h.header && [h.header.liveObjects, h.header.liveBytes, h.header.accumObjects, h.header.accumBytes]).toEqual(
      want,
    );
  });
});

describe('previewJob', () => {
  it('groups and orders processes and snapshots as loadJob does; header totals as Snapshot.headerLiveBytes', async () => {
    const files = fixtureFiles('job');
    const [preview, job] = await Promise.all([previewJob(files, { inflate: webInflater() }), loadJob(files)]);
    expect(preview.processes.map((p) => p.key)).toEqual(job.processes.map((p) => p.key));
    for (const [i, p] of preview.processes.entries()) {
      const snaps = job.processes[i].snapshots;
      expect(p.snapshots.map((s) => s.file)).toEqual(snaps.map((s) => s.file));
      expect(p.snapshots.map((s) => s.headerLiveBytes)).toEqual(snaps.map((s) => s.headerLiveBytes));
    }
  });

  it('reads each dump from its start once: the classify step’s first bytes are its head (same totals)', async () => {
    const direct = [...fixtureFiles('job'), ...fixtureFiles('other')];
    const starts = new Map<string, number>();
    const files = direct.map((f): InputFile => ({
      ...f,
      read: (o, n) => {
        if (o === 0) starts.set(f.path, (starts.get(f.path) ?? 0) + 1);
        return f.read(o, n);
      },
    }));
    const classified = await classifyFiles(files);
    const preview = await previewJob(files, { inflate: webInflater(), classified });
    const fresh = await previewJob(direct, { inflate: webInflater() });
    expect(preview).toEqual(fresh);
    const dumps = classified.dumps.filter((d) => d.file.size > 0 && d.kind === undefined);
    expect(dumps.length).toBeGreaterThanOrEqual(60);
    // a head past the first 4 KiB (rare: long thread lists) is a second, larger read; every other dump one
    const twice = dumps.filter((d) => (starts.get(d.file.path) ?? 0) > 1);
    expect(twice.length, twice.map((d) => d.file.path).join(', ')).toBeLessThanOrEqual(dumps.length / 10);
  });
});
