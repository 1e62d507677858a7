import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { parseLimit, postmortem } from './postmortem.js';
import { fixtureFile, fixtureFiles } from '../../tools/fixtures.js';
import type { InputFile } from '../formats/input-file.js';

const LEAK_PER_DUMP = 3 * 16384; // leaky.c: one 16 KiB leak per step, a dump every 3 steps

/** The exact run's m0…m19, then a copy of its final dump cut in its stacks as a later dump (killed mid-write). */
function killedSeries(): InputFile[] {
  const files = fixtureFiles('job').filter((f) => /exact\.\d+\.\d+\.m\d+\.heap$/.test(f.path));
  const pid = /exact\.(\d+)\./.exec(files[0].path)![1];
  const cut = fixtureFile('damaged/truncated-in-stacks.heap');
  return [...files, { ...cut, path: `job/exact.${pid}.21.i0.heap` }];
}

describe('postmortem', () => {
  it('a process whose last dump is cut: killed, last complete snapshot before it, total from the cut header', async () => {
    const job = await loadJob(killedSeries());
    const pm = postmortem(job);
    const p = pm.processes[0];
    expect(pm.died).toEqual([0]);
    expect(p.fate.killed).toBe(true);
    expect(p.fate.evidence.join(' ')).toMatch(/cut off/);
    expect(p.fate.lastCompleteSeq).toBe(19);
    expect(p.lastKnownFromHeader).toBe(true);
    expect(p.lastKnownBytes).toBe(job.processes[0].snapshots[20].headerLiveBytes);
    // the total grew by exactly one leak step per dump
    expect(p.rate!.perSnapshot).toBe(LEAK_PER_DUMP);
    expect(p.rate!.perSnapshotLo).toBe(LEAK_PER_DUMP);
    expect(p.rate!.perSnapshotHi).toBe(LEAK_PER_DUMP);
  });

  it('--limit: time to the limit from the end rate, with its interval; per second when dumps have usable times', async () => {
    const job = await loadJob(killedSeries());
    job.processes[0].snapshots.forEach((s, i) => (s.mtimeMs = 1_700_000_000_000 + i * 30_000));
    const last = job.processes[0].snapshots[20].headerLiveBytes!;
    const pm = postmortem(job, last + 10 * LEAK_PER_DUMP);
    const pr = pm.processes[0].projection!;
    expect(pr.headroomBytes).toBe(10 * LEAK_PER_DUMP);
    expect(pr.snapshots).toBeCloseTo(10, 9);
    expect(pr.snapshotsLo).toBeCloseTo(10, 9);
    expect(pr.snapshotsHi).toBeCloseTo(10, 9);
    expect(pr.seconds).toBeCloseTo(300, 6); // 10 dumps × 30 s
    expect(pm.job.projection!.seconds).toBeCloseTo(300, 6);
  });

  it('the job folder: exact exited; sampled and pygrow (no final dump while exact wrote one) died; a sampled interval is wider', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const pm = postmortem(job, 64 * 1024 ** 3);
    const names = pm.died.map((i) => job.processes[i].prefix).sort();
    expect(names).toEqual(['pygrow', 'sampled']);
    const s = pm.processes.find((p) => job.processes[p.processIndex].prefix === 'sampled')!;
    expect(s.rate!.perSnapshotLo).toBeLessThan(s.rate!.perSnapshot);
    expect(s.rate!.perSnapshotHi).toBeGreaterThan(s.rate!.perSnapshot);
    expect(s.projection!.snapshotsLo!).toBeLessThan(s.projection!.snapshots!);
    expect(s.projection!.snapshotsHi!).toBeGreaterThan(s.projection!.snapshots!);
    expect(s.lastCompleteSigmaBytes).toBeGreaterThan(0);
    // fixture mtimes are equal: no job-wide rate per second, and a note says why
    expect(pm.job.perSecond).toBeNull();
    expect(pm.job.note).toMatch(
      /needs a rate per second from every process \(0 of 3 have one; pid \d+: no per-second slopes: files share a modification time/,
    );
  });
});

describe('ended before its siblings', () => {
  it('dumps 30 s apart from one start: the process whose dumps stop > 3 intervals before the last one is named', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const t0 = 1_700_000_000_000;
    for (const p of job.processes) p.snapshots.forEach((s, i) => (s.mtimeMs = t0 + i * 30_000));
    // exact: 21 dumps (ends at 600 s), sampled: 24 (690 s), pygrow: 16 (450 s)
    const pm = postmortem(job);
    const fate = (prefix: string) => pm.processes.find((p) => job.processes[p.processIndex].prefix === prefix)!.fate;
    expect(fate('pygrow').evidence.join(' ')).toMatch(/stopped 240 s before the job's last dump/);
    expect(fate('exact').evidence.join(' ')).not.toMatch(/stopped/); // 90 s = 3 intervals: not more than 3
    expect(fate('sampled').evidence.join(' ')).not.toMatch(/stopped/);
    expect(pm.died[0]).toBe(job.processes.findIndex((p) => p.prefix === 'pygrow')); // most evidence first
    // per-second rates now exist, and the job's rate is their sum
    const sum = pm.processes.reduce((a, p) => a + p.rate!.perSecond!, 0);
    expect(pm.job.perSecond).toBeCloseTo(sum, 6);
  });
});

describe('parseLimit', () => {
  it('numbers with binary (memparse) or decimal units, and cgroup memory.max contents', () => {
    expect(parseLimit('8589934592\n')).toEqual({ ok: true, bytes: 8589934592, note: null });
    expect(parseLimit('8G')).toMatchObject({ bytes: 8 * 1024 ** 3 });
    expect(parseLimit('8GiB')).toMatchObject({ bytes: 8 * 1024 ** 3 });
    expect(parseLimit('7.5 GB')).toMatchObject({ bytes: 7.5e9 });
    expect(parseLimit('512M')).toMatchObject({ bytes: 512 * 1024 ** 2 });
    expect(parseLimit('max\n')).toMatchObject({ ok: true, bytes: null });
    expect(parseLimit('8 parsecs')).toMatchObject({ ok: false });
    expect(parseLimit('-1')).toMatchObject({ ok: false });
    expect(parseLimit('0')).toMatchObject({ ok: false });
  });
  it('refuses counts that are not a real limit (issue 24 item 10)', () => {
    expect(parseLimit('9'.repeat(400))).toMatchObject({ ok: false });
    expect(parseLimit('1e30')).toMatchObject({ ok: false });
    expect(parseLimit('1000000000000000000000000000000')).toMatchObject({ ok: false });
    expect(parseLimit('1e-10')).toMatchObject({ ok: false });
    expect(parseLimit('0.5')).toMatchObject({ ok: false });
    expect(parseLimit('1.5')).toMatchObject({ ok: false });
    expect(parseLimit('0.0001K')).toMatchObject({ ok: false });
    expect(parseLimit('1.5K')).toMatchObject({ ok: true, bytes: 1536 });
    // The largest value the kernel writes back for a page-aligned memory.max on 64-bit is still refused as absurd
    // only past 8 PiB; 4 PiB is accepted as given.
    expect(parseLimit('4503599627370496')).toMatchObject({ ok: true, bytes: 2 ** 52 });
  });
});
