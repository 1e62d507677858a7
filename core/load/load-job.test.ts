import { describe, expect, it } from 'vitest';
import { classifyFiles, loadJob, reclassify } from './load-job.js';
import { fixtureFile, fixtureFiles, jeprofTotals } from '../../tools/fixtures.js';
import type { InputFile } from '../formats/input-file.js';

describe("loadJob and the capture library's unfinished files", () => {
  it("a <dump>.<random>.tmp cut by a kill (and a <dump>.pyframes.<random>.tmp, and the older library versions' <dump>.tmp) are left out with a warning; the finished dumps load", async () => {
    const files = fixtureFiles('job').filter((f) => f.path.startsWith('job/exact.'));
    const last = files.find((f) => f.path === 'job/exact.21459.20.f.heap')!;
    const whole = await last.read(0, last.size);
    const cut = whole.subarray(0, Math.floor(whole.length / 2));
    const mem = (path: string, bytes: Uint8Array): InputFile => ({
      path,
      size: bytes.length,
      mtimeMs: null,
      read: (o, n) => Promise.resolve(bytes.subarray(o, o + n)),
    });
    const job = await loadJob([
      ...files,
      mem('job/exact.21459.21.m21.heap.tmp', cut),
      mem('job/exact.21459.21.m21.heap.pyframes.tmp', new TextEncoder().encode('PYFRAMES/1 pid=21459 python=-\nC con')),
      mem('job/exact.21459.22.m22.heap.0f9e8d7c6b5a4f3e.tmp', cut),
      mem(
        'job/exact.21459.22.m22.heap.pyframes.a1b2c3d4e5f60718.tmp',
        new TextEncoder().encode('PYFRAMES/1 pid=21459 python=-\nC con'),
      ),
    ]);
    expect(job.processes).toHaveLength(1);
    expect(job.processes[0].snapshots).toHaveLength(21);
    expect(job.ignoredFiles).toEqual([
      'job/exact.21459.21.m21.heap.tmp',
      'job/exact.21459.21.m21.heap.pyframes.tmp',
      'job/exact.21459.22.m22.heap.0f9e8d7c6b5a4f3e.tmp',
      'job/exact.21459.22.m22.heap.pyframes.a1b2c3d4e5f60718.tmp',
    ]);
    expect(job.warnings.map((w) => w.file)).toEqual(job.ignoredFiles);
    expect(job.warnings[0].message).toMatch(/still writing \(or a kill cut\)/);
  });
});

describe('loadJob on the real fixture job', () => {
  it('groups the job folder into its three processes, each ordered by sequence number', async () => {
    const job = await loadJob(fixtureFiles('job'));
    expect(job.processes.map((p) => p.prefix)).toEqual(['exact', 'pygrow', 'sampled']);
    const [exact, pygrow, sampled] = job.processes;
    expect(exact.snapshots).toHaveLength(21);
    expect(exact.snapshots.map((s) => s.seq)).toEqual([...Array(21).keys()]);
    expect(exact.snapshots.slice(0, 20).every((s) => s.trigger === 'manual')).toBe(true);
    expect(exact.snapshots[20].trigger).toBe('final');
    expect(exact.endedWithoutFinalDump).toBe(false);
    expect(sampled.endedWithoutFinalDump).toBe(true);
    expect(pygrow.endedWithoutFinalDump).toBe(true);
    expect(sampled.snapshots.every((s) => s.trigger === 'interval' && s.samplePeriod === 16384)).toBe(true);
    expect(job.warnings).toEqual([]);
  });

  it("unbiased snapshot totals equal jeprof's Total on every fixture dump (bytes and objects)", async () => {
    const ref = jeprofTotals();
    const files = [...fixtureFiles('job'), ...fixtureFiles('other')];
    const job = await loadJob(files);
    const snaps = new Map(job.processes.flatMap((p) => p.snapshots.map((s) => [s.file, s] as const)));
    let compared = 0;
    for (const [file, r] of ref) {
      if (file === 'other/empty-backtrace.heap') continue; // below: jeprof drops the empty record
      const s = snaps.get(file);
      expect(s, file).toBeDefined();
      // jeprof prints whole bytes (and rounds objects); ours are the unrounded estimates
      expect(Math.abs(s!.live.bytes - r.inuseSpace), file).toBeLessThanOrEqual(1);
      expect(Math.abs(s!.live.objects - r.inuseObjects), file).toBeLessThanOrEqual(1);
      if (r.allocSpace !== null) expect(Math.abs(s!.accumulated.bytes - r.allocSpace), file).toBeLessThanOrEqual(1);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(60);
  });

  it('keeps the empty-backtrace record that jeprof drops: ours = jeprof + 8 × 5,120 B', async () => {
    const job = await loadJob([fixtureFile('other/empty-backtrace.heap')]);
    const s = job.processes[0].snapshots[0];
    expect(s.live.bytes).toBe(jeprofTotals().get('other/empty-backtrace.heap')!.inuseSpace + 8 * 5120);
    expect(job.processes[0].stacks.offsets[1] - job.processes[0].stacks.offsets[0]).toBe(0);
  });

  it('exact run: the known pattern per snapshot (leak grows 3 × 16,384 B per manual dump)', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes[0];
    exact.snapshots.slice(0, 20).forEach((s, k) => {
      const values = [...s.liveBytes];
      expect(values).toContain((k + 1) * 3 * 16384); // leak_steady
      expect(values).toContain(16 * 65536); // plateau
      expect(values).toContain(100 * 8192); // worker thread
      const worker = s.threads.find((t) => t.name === 'worker one');
      expect(worker?.live.bytes).toBe(819200);
    });
  });

  it('interns stacks once per process across snapshots and marks the jemalloc frames', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes[0];
    const distinct = new Set<number>();
    for (const s of exact.snapshots) for (const id of s.stackIds) distinct.add(id);
    expect(exact.stacks.count).toBe(distinct.size);
    // Debian's 5.3.0 with the libgcc unwinder: the first 4 frames of every stack are in libjemalloc.so.2
    const depths = new Set(exact.stacks.allocatorDepth);
    expect([...depths]).toEqual([4]);
  });

  it('one bad file does not stop the folder: warnings name file and line/offset, the rest loads', async () => {
    const job = await loadJob([...fixtureFiles('damaged'), fixtureFile('other/gperf.0001.heap')]);
    const byFile = (f: string) => job.warnings.filter((w) => w.file === f);
    expect(byFile('damaged/zero-length.heap')[0].message).toMatch(/empty file/);
    expect(byFile('damaged/not-a-dump.heap')[0]).toMatchObject({ line: 1, byteOffset: 0 });
    const trunc = byFile('damaged/truncated-in-stacks.heap')[0];
    expect(trunc.message).toMatch(/^truncated: file ends at byte [\d,]+; .* from byte [\d,]+ \(line \d+\)/);
    expect(trunc.byteOffset).toBeGreaterThan(0);
    expect(byFile('damaged/bad-count-line.heap').every((w) => typeof w.line === 'number')).toBe(true);
    const loaded = job.processes.flatMap((p) => p.snapshots.map((s) => s.file));
    expect(loaded).toContain('damaged/gzip-copy.heap.gz');
    expect(loaded).toContain('damaged/crlf.heap');
    expect(loaded).toContain('other/gperf.0001.heap');
    expect(loaded).not.toContain('damaged/zero-length.heap');
    const truncated = job.processes.flatMap((p) => p.snapshots).filter((s) => s.truncated);
    expect(truncated.map((s) => s.file).sort()).toEqual([
      'damaged/truncated-in-header.heap',
      'damaged/truncated-in-maps.heap',
      'damaged/truncated-in-stacks.heap',
    ]);
  });

  it('a gzip copy reads the same as the original', async () => {
    const src = (await import('node:fs'))
      .readFileSync(new URL('../../fixtures/jemalloc/damaged/SOURCE', import.meta.url), 'utf8')
      .trim();
    const job = await loadJob([fixtureFile('damaged/gzip-copy.heap.gz'), fixtureFile(`job/${src}`)]);
    const [a, b] = job.processes.flatMap((p) => p.snapshots);
    expect(a.live).toEqual(b.live);
    expect(a.stackIds.length).toBe(b.stackIds.length);
  });

  it('uses a standalone maps file matched by pid where the dump has none', async () => {
    const src = fixtureFile('damaged/no-maps-section.heap');
    const full = await loadJob([
      fixtureFile(
        'job/' +
          (await import('node:fs'))
            .readFileSync(new URL('../../fixtures/jemalloc/damaged/SOURCE', import.meta.url), 'utf8')
            .trim(),
      ),
    ]);
    const mapsText = (await full.processes[0].maps)!.length;
    expect(mapsText).toBeGreaterThan(10);
    // rename the dump so it has a pid, and give its maps as maps.<pid>
    const pid = full.processes[0].pid!;
    const renamed: InputFile = { ...src, path: `x/exact.${pid}.5.m5.heap` };
    const mapsBytes = new TextEncoder().encode(
      full.processes[0]
        .maps!.map(
          (m) =>
            `${m.start.toString(16)}-${m.end.toString(16)} ${m.perms} ${m.offset.toString(16).padStart(8, '0')} ${m.dev} ${m.inode} ${m.path}`,
        )
        .join('\n') + '\n',
    );
    const mapsFile: InputFile = {
      path: `x/maps.${pid}`,
      size: mapsBytes.length,
      mtimeMs: null,
      read: async (o, l) => mapsBytes.subarray(o, o + l),
    };
    const withMaps = await loadJob([renamed, mapsFile]);
    expect(withMaps.processes[0].maps).toHaveLength(full.processes[0].maps!.length);
    expect(withMaps.processes[0].snapshots[0].mapsSource).toBe('file');
    expect(withMaps.warnings).toEqual([]);
    const without = await loadJob([renamed]);
    expect(without.warnings[0].message).toMatch(/no maps/);
  });

  it('reports progress and can be cancelled', async () => {
    const seen: number[] = [];
    const job = await loadJob(fixtureFiles('job'), { onProgress: (p) => seen.push(p.filesDone) });
    expect(seen[seen.length - 1]).toBe(61);
    expect(job.processes).toHaveLength(3);
    const ac = new AbortController();
    ac.abort();
    await expect(loadJob(fixtureFiles('job'), { signal: ac.signal })).rejects.toThrow();
  });
});

describe('loadJob with the files already classified (the app tells them once, then reads through wrappers)', () => {
  it('reads each dump from its start one time fewer, and loads the same job as telling them itself', async () => {
    const direct = fixtureFiles('job');
    // wrappers that count reads from the start of each file, as the app's timed read-ahead copies wrap
    const counted = (starts: Map<string, number>) =>
      new Map(
        direct.map((f) => [
          f,
          {
            ...f,
            read: (o: number, n: number) => {
              if (o === 0) starts.set(f.path, (starts.get(f.path) ?? 0) + 1);
              return f.read(o, n);
            },
          } satisfies InputFile,
        ]),
      );
    const told = await classifyFiles(direct);
    const onceStarts = new Map<string, number>();
    const onceFiles = counted(onceStarts);
    const once = await loadJob([...onceFiles.values()], {
      classified: reclassify(told, (f) => onceFiles.get(f) ?? f),
    });
    const selfStarts = new Map<string, number>();
    const selfTold = await loadJob([...counted(selfStarts).values()]);
    for (const d of told.dumps)
      expect(onceStarts.get(d.file.path), d.file.path).toBe((selfStarts.get(d.file.path) ?? 0) - 1);
    expect(once.processes.map((p) => [p.prefix, p.pid, p.snapshots.length])).toEqual(
      selfTold.processes.map((p) => [p.prefix, p.pid, p.snapshots.length]),
    );
    expect(once.processes.map((p) => p.snapshots.map((s) => s.live.bytes))).toEqual(
      selfTold.processes.map((p) => p.snapshots.map((s) => s.live.bytes)),
    );
    expect(once.warnings).toEqual(selfTold.warnings);
    expect(once.ignoredFiles).toEqual(selfTold.ignoredFiles);
  });
});
