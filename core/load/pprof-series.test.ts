// A folder of pprof profiles of two processes over time (fixtures/go/make-go-leak-series.sh: two runs of
// src/leak/main.go at once, each writing leaky-<pid>-<NNN>.pb.gz after every step of its leak) is two series:
// by the number the names share (not called a pid: only jeprof's names and the samples' pid labels say one), or by
// the samples' pid labels, or by executable; snapshots in the order of the profiles' time_nanos.
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
  it('is two series by the number the names share (not called a pid), in time order, totals equal to go tool pprof -raw', async () => {
    // handed over in a shuffled order: the profiles' times order them, not the list
    const shuffled = [...NAMES].reverse();
    const job = await loadJob(shuffled.map((n) => mem(`leak-series/${n}`, bytesOf(n))));
    expect(job.warnings).toEqual([]);
    const pids = [...new Set(NAMES.map((n) => /-(\d+)-/.exec(n)![1]))].sort();
    // digits in a file name are a pid only in jeprof's naming: these keep the two series apart, unnamed as pids
    expect(job.processes.map((p) => p.key).sort()).toEqual(pids.map((n) => `leak-series/leaky.${n}`));
    expect(job.processes.map((p) => p.pid)).toEqual([null, null]);
    for (const p of job.processes) {
      const num = /\.(\d+)$/.exec(p.key)![1];
      const mine = NAMES.filter((n) => n.includes(`-${num}-`));
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

  it('profiles of two executables (build-ids) under names that say nothing are two processes; a pid label joins them', async () => {
    // the two runs' profiles renamed profile-<k> in time order, the second run's binary given another name and
    // build-id (as a second build of the service): derived from the real profiles
    const first = /-(\d+)-/.exec(NAMES[0])![1];
    const other = (n: string) => !n.includes(`-${first}-`);
    const build = (withPid: boolean) =>
      NAMES.map((n) => {
        const p = Profile.decode(gunzipSync(bytesOf(n)));
        if (other(n)) {
          const m = p.mapping[0];
          m.buildId = p.stringTable.dedup('0123456789abcdef0123456789abcdef01234567');
          m.filename = p.stringTable.dedup('/srv/leak-v2');
        }
        if (withPid) {
          const key = p.stringTable.dedup('pid');
          for (const s of p.sample) s.label.push(new Label({ key, num: 4242 }));
        }
        return { n, time: Number(p.timeNanos), bytes: p.encode() };
      })
        .sort((a, b) => a.time - b.time)
        .map((x, k) => ({ ...x, file: mem(`scraped/profile-${k}.pb`, x.bytes) }));
    const files = build(false);
    const job = await loadJob(files.map((f) => f.file));
    expect(job.warnings).toEqual([]);
    const sets = job.processes.map((p) => p.snapshots.map((s) => files.find((f) => f.file.path === s.file)!.n).sort());
    expect(sets.sort((a, b) => a.length - b.length)).toEqual(
      [NAMES.filter((n) => other(n)), NAMES.filter((n) => !other(n))].sort((a, b) => a.length - b.length),
    );
    expect(job.processes.every((p) => p.pid === null)).toBe(true);
    expect(job.processes.map((p) => p.key).sort()).toEqual([
      'scraped/(unnamed dumps) [leak 410b14f8bc7184629cb46e94bc25eebfacd3d741]',
      'scraped/(unnamed dumps) [leak-v2 0123456789abcdef0123456789abcdef01234567]',
    ]);
    // the same profiles with one pid label: one process
    const joined = await loadJob(build(true).map((f) => f.file));
    expect(joined.processes.map((p) => [p.pid, p.snapshots.length])).toEqual([[4242, NAMES.length]]);
  });

  it('a number that only one file has orders the files; it is no pid', async () => {
    const picks = [NAMES[0], NAMES[2], NAMES[4]];
    const job = await loadJob(picks.map((n, k) => mem(`x/heap_${[7, 31, 1999][k]}.pb.gz`, bytesOf(n))));
    expect(job.processes.map((p) => [p.pid, p.snapshots.length])).toEqual([[null, 3]]);
  });
});
