// A folder of pprof profiles of two processes over time (fixtures/go/make-go-leak-series.sh: two runs of
// src/leak/main.go at once, each writing leaky-<pid>-<NNN>.pb.gz after every step of its leak) is two series:
// pids from the names (or from the samples' pid labels), snapshots in the order of the profiles' time_nanos.
// Expected figures: go tool pprof -raw of each file, and the workload's arithmetic (MemProfileRate 1: the leak
// holds n·perStep·4,096 B after step n, 64 per step in the run of 5 steps, 16 in the run of 4).
import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Label, Profile } from 'pprof-format';
import { FIXTURES } from '../../tools/fixtures.js';
import type { InputFile } from '../formats/input-file.js';
import type { ProcessSeries } from '../model/model.js';
import { loadJob } from './load-job.js';

const DIR = join(FIXTURES, '..', 'go', 'leak-series');
const NAMES = readdirSync(DIR)
  .filter((f) => f.endsWith('.pb.gz'))
  .sort();
const mem = (path: string, b: Uint8Array): InputFile => ({
  path,
  size: b.length,
  mtimeMs: null,
  read: async (o, l) => b.subarray(o, o + l),
});
const bytesOf = (name: string) => new Uint8Array(readFileSync(join(DIR, name)));

/** go tool pprof -raw: the summed inuse_space (4th value) and the profile's time line */
function raw(name: string): { inuse: number; time: string } {
  const text = readFileSync(join(DIR, name.replace(/\.pb\.gz$/, '.pprof-raw.txt')), 'utf8');
  const inuse = [...text.matchAll(/^\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+):/gm)].reduce(
    (s, m) => s + Number(m[4]),
    0,
  );
  return { inuse, time: /^Time: (.*)$/m.exec(text)![1] };
}

/** the leak's live bytes in a snapshot: the stacks whose leaf is main.leakStep (named by the profile) */
function leakBytes(p: ProcessSeries, i: number): number {
  const s = p.snapshots[i];
  let sum = 0;
  s.stackIds.forEach((id, r) => {
    const leaf = p.addresses.hex[p.stacks.frames[p.stacks.offsets[id]]];
    if (p.profileSymbols?.get(leaf)?.[0]?.function === 'main.leakStep') sum += s.liveBytes[r];
  });
  return sum;
}

describe('a folder of pprof profiles of two processes', () => {
  it('is two series by the pids in the names, in time order, totals equal to go tool pprof -raw', async () => {
    // handed over in a shuffled order: the profiles' times order them, not the list
    const shuffled = [...NAMES].reverse();
    const job = await loadJob(shuffled.map((n) => mem(`leak-series/${n}`, bytesOf(n))));
    expect(job.warnings).toEqual([]);
    const pids = [...new Set(NAMES.map((n) => Number(/-(\d+)-/.exec(n)![1])))].sort();
    expect(job.processes.map((p) => p.pid).sort()).toEqual(pids);
    for (const p of job.processes) {
      const mine = NAMES.filter((n) => n.includes(`-${p.pid}-`));
      expect(p.snapshots.map((s) => s.file)).toEqual(mine.map((n) => `leak-series/${n}`));
      expect(p.snapshots.map((s) => s.live.bytes)).toEqual(mine.map((n) => raw(n).inuse));
      expect(p.snapshots.map((s) => s.seq)).toEqual(mine.map((n) => Number(/-(\d+)\.pb\.gz$/.exec(n)![1])));
      const t = p.snapshots.map((s) => s.mtimeMs!);
      for (let k = 1; k < t.length; k++) expect(t[k]).toBeGreaterThan(t[k - 1]);
      mine.forEach((n, k) => expect(raw(n).time).toContain(new Date(t[k]).toISOString().slice(11, 23)));
      // the binary's GNU build-id (readelf's word, stored by the script) carried into the model's maps
      const readelf = readFileSync(join(DIR, '..', 'leak.readelf-build-id.txt'), 'utf8');
      const id = /Build ID: ([0-9a-f]+)/.exec(readelf)![1];
      expect(p.maps?.filter((m) => m.buildId).map((m) => [m.path.replace(/.*\//, ''), m.buildId])).toEqual([
        ['leak', id],
      ]);
      // the workload's arithmetic: 5 steps of 64 blocks, or 4 of 16
      const perStep = mine.length === 5 ? 64 : 16;
      expect(p.snapshots.map((_, k) => leakBytes(p, k))).toEqual(mine.map((_, k) => (k + 1) * perStep * 4096));
    }
  });

  it("is grouped by the samples' pid labels when the names say nothing", async () => {
    // the same real profiles with a `pid` label on every sample (as perf_to_profile writes one), renamed
    // heap.pb.gz-style without a pid, in subfolders by nothing: derived inputs, the labels are the only clue
    const files = NAMES.map((n, k) => {
      const p = Profile.decode(gunzipSync(bytesOf(n)));
      const key = p.stringTable.dedup('pid');
      const pid = Number(/-(\d+)-/.exec(n)![1]);
      for (const s of p.sample) s.label.push(new Label({ key, num: pid }));
      return mem(`scraped/profile-${String.fromCharCode(97 + k)}.pb`, p.encode());
    });
    const job = await loadJob(files.reverse());
    expect(job.warnings).toEqual([]);
    expect(job.processes.map((p) => [p.pid, p.snapshots.length]).sort()).toEqual(
      [...new Set(NAMES.map((n) => Number(/-(\d+)-/.exec(n)![1])))]
        .sort()
        .map((pid) => [pid, NAMES.filter((n) => n.includes(`-${pid}-`)).length]),
    );
    for (const p of job.processes) {
      const t = p.snapshots.map((s) => s.mtimeMs!);
      for (let k = 1; k < t.length; k++) expect(t[k]).toBeGreaterThan(t[k - 1]);
      expect(p.snapshots.map((s) => s.seq)).toEqual(p.snapshots.map((_, k) => k + 1));
    }
  });

  it('a profile whose samples name several pids is read as one snapshot, with a warning saying so', async () => {
    const p = Profile.decode(gunzipSync(bytesOf(NAMES[0])));
    const key = p.stringTable.dedup('process_id');
    p.sample.forEach((s, k) => s.label.push(new Label({ key, str: p.stringTable.dedup(String(100 + (k % 3))) })));
    const job = await loadJob([mem('all.pb', p.encode())]);
    expect(job.processes).toHaveLength(1);
    expect(job.processes[0].pid).toBeNull();
    expect(job.warnings.map((w) => w.message)).toEqual([
      'its samples name 3 processes (pid labels): read as one snapshot of one process',
    ]);
  });
});
