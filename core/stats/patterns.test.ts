import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { classifySeries, processPatterns, type GrowthPattern } from './patterns.js';
import { theilSen } from './robust-slope.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import type { ProcessSeries } from '../model/model.js';

// leaky.c's pattern (fixtures/jemalloc/src/leaky.c): usable sizes are size classes, so bytes are exact
const LEAK = 16384;
const PLATEAU = 16 * 65536;
const WORKER = 100 * 8192;
const CHURN = 40960;

/** The stack whose values are `bytes` in the first complete snapshot (the plateau and worker are allocated before any dump). */
function _stackAt(p: ProcessSeries, pred: (bytes: number) => boolean): number[] {
  const s = p.snapshots[0];
  return [...s.stackIds].filter((_, i) => pred(s.liveBytes[i]));
}

describe('patterns on leaky.c (exact run, 20 manual dumps of 3 steps each + final)', () => {
  it('the leak is steady at 3 × 16,384 B per snapshot, the plateau and the worker are flat', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const r = processPatterns(exact);
    const leak = r.stacks.find((s) => s.firstBytes === 3 * LEAK)!;
    expect(leak.pattern).toBe('steady');
    expect(leak.slopePerSnapshot).toBe(3 * LEAK);
    expect(leak.lateSlopePerSnapshot).toBe(3 * LEAK);
    // period 1: no sampling error, so the score is the whole growth
    expect(leak.sigmaBytes).toBe(0);
    expect(leak.score).toBe(leak.lastBytes - leak.firstBytes);
    for (const b of [PLATEAU, WORKER]) {
      const s = r.stacks.find((x) => x.firstBytes === b)!;
      expect(s.pattern, String(b)).toBe('flat');
      expect(s.score).toBe(0);
    }
  });
});

describe('patterns on leaky.c sampled 1 in 16 KiB (24 interval dumps, no final dump)', () => {
  it('leak steady, plateau and worker flat despite sampling noise, churn (live only mid-step) fluctuating', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const p = job.processes.find((x) => x.prefix === 'sampled')!;
    const r = processPatterns(p);
    const byScore = [...r.stacks].sort((a, b) => b.score - a.score);
    expect(byScore[0].pattern).toBe('steady');
    // the plateau (1 MiB) and the worker (800 KiB) were allocated before the first dump and never freed
    const plateau = r.stacks.filter((s) => Math.abs(s.firstBytes - PLATEAU) < 0.2 * PLATEAU);
    const worker = r.stacks.filter((s) => Math.abs(s.firstBytes - WORKER) < 0.2 * WORKER);
    expect(plateau).toHaveLength(1);
    expect(worker).toHaveLength(1);
    for (const s of [...plateau, ...worker]) {
      expect(s.pattern).toBe('flat');
      expect(s.score).toBe(0);
      expect(s.sigmaBytes).toBeGreaterThan(0); // sampled: a σ is known
    }
    // the churn path's 8 × 40 KiB are live only while a step runs: at an interval dump 0–7 of them
    const churn = r.stacks.filter(
      (s) => s.peakBytes < 9 * CHURN && s.peakBytes > CHURN && s.pattern !== 'flat' && s !== byScore[0],
    );
    expect(churn.map((s) => s.pattern)).toEqual(['fluctuating']);
    expect(churn[0].score).toBe(0);
  });
});

describe('patterns on grow.py (a rollout buffer of 2,000 × 1 KiB per step, kept)', () => {
  it('the buffer rows are the top steady stack, with most of the memory', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const p = job.processes.find((x) => x.prefix === 'pygrow')!;
    const r = processPatterns(p);
    const top = [...r.stacks].sort((a, b) => b.score - a.score)[0];
    expect(top.pattern).toBe('steady');
    expect(top.lastBytes / p.snapshots[p.snapshots.length - 1].live.bytes).toBeGreaterThan(0.5);
    expect(top.z).toBeGreaterThan(2);
  });
});

describe('a process with one dump still gets a ranking, patterns unknown, with a note', () => {
  it('one dump', async () => {
    const job = await loadJob(fixtureFiles('job').filter((f) => /exact\.\d+\.5\.m5\.heap$/.test(f.path)));
    const r = processPatterns(job.processes[0]);
    expect(r.stacks.length).toBeGreaterThan(0);
    for (const s of r.stacks) expect(s.pattern).toBe('unknown');
    expect(r.notes.join(' ')).toMatch(/1 complete snapshot: patterns need 3/);
  });
  it('mtimes not usable: per-second slopes are null, with a note', async () => {
    const files = fixtureFiles('job')
      .filter((f) => f.path.includes('exact'))
      .map((f) => ({ ...f, mtimeMs: 1000 }));
    const r = processPatterns((await loadJob(files)).processes[0]);
    expect(r.seconds).toBeNull();
    expect(r.notes.join(' ')).toMatch(/no per-second slopes/);
    for (const s of r.stacks) expect(s.slopePerSecond).toBeNull();
  });
  it('usable mtimes (distinct, increasing): per-second slope = per-snapshot slope / interval', async () => {
    const files = fixtureFiles('job').filter((f) => f.path.includes('exact'));
    const job = await loadJob(files.map((f) => ({ ...f, mtimeMs: 0 })));
    // give the ordered snapshots mtimes 30 s apart
    job.processes[0].snapshots.forEach((s, i) => (s.mtimeMs = 1_700_000_000_000 + i * 30_000));
    const r = processPatterns(job.processes[0]);
    const leak = r.stacks.find((s) => s.firstBytes === 3 * LEAK)!;
    expect(leak.slopePerSecond).toBeCloseTo((3 * LEAK) / 30, 9);
  });
});

describe('classification rules (series built from their definition; σ from the sampling model)', () => {
  const R = 512 * 1024;
  // K samples of small objects: B̂ = K·R, Var = R²·K
  const sampled = (ks: number[]) => ({ y: ks.map((k) => k * R), v: ks.map((k) => R * R * k), t: null });
  const cases: [string, number[], GrowthPattern][] = [
    ['a leak of 40 samples per dump', [40, 80, 120, 160, 200, 240, 280, 320, 360, 400], 'steady'],
    [
      'a buffer that fills in 4 dumps and stays full',
      [50, 150, 250, 350, 400, 400, 400, 400, 400, 400, 400, 400],
      'plateau',
    ],
    ['one allocation between dumps 3 and 4', [100, 100, 100, 900, 900, 900, 900, 900], 'step'],
    ['a buffer filled and cleared', [0, 300, 600, 0, 300, 600, 0, 300, 600, 0], 'fluctuating'],
    ['a cache draining', [400, 360, 320, 280, 240, 200, 160], 'declining'],
    ['the same 100 objects, sampled every time', [100, 100, 100, 100, 100, 100], 'flat'],
    ['two samples', [10, 20], 'unknown'],
  ];
  for (const [what, ks, want] of cases) {
    it(`${what}: ${want}`, () => expect(classifySeries(sampled(ks)).pattern).toBe(want));
  }

  it('noise is not growth: a stack of ~100 samples redrawn independently (±10 %) stays flat, with score 0', () => {
    // 100 ± √100 samples: within 2σ of each other in every pair
    const v = classifySeries(sampled([100, 108, 95, 104, 92, 101, 97, 106, 99]));
    expect(v.pattern).toBe('flat');
    expect(v.score).toBe(0);
    expect(v.withinNoise).toBe(true);
  });

  it('plateaus and steps score ~0 against a leak of the same size: the score is late growth beyond 2σ', () => {
    const leak = classifySeries(sampled([40, 80, 120, 160, 200, 240, 280, 320, 360, 400]));
    const plateau = classifySeries(sampled([50, 150, 250, 350, 400, 400, 400, 400, 400, 400]));
    const step = classifySeries(sampled([0, 0, 0, 400, 400, 400, 400, 400, 400, 400]));
    expect(leak.score).toBeGreaterThan(0.8 * 360 * R - 2 * Math.sqrt(440) * R);
    expect(plateau.score).toBe(0);
    expect(step.score).toBe(0);
  });
});

describe('theilSen', () => {
  it('median of pairwise slopes, robust to one outlier; Sen bounds contain it', () => {
    // y = 2x except one wild point: least squares would be pulled, the median of slopes is not
    const y = [0, 2, 4, 6, 100, 10, 12, 14, 16, 18];
    const r = theilSen(y, null, 0, y.length, true);
    expect(r.slope).toBe(2);
    expect(r.lo).toBeLessThanOrEqual(2);
    expect(r.hi).toBeGreaterThanOrEqual(2);
    // long series are thinned but stay exact on a line
    const line = Array.from({ length: 200 }, (_, i) => 5 * i + 7);
    expect(theilSen(line, null).slope).toBe(5);
  });
});

// Issue 48 item 7: no rate from a series too short or too close in time to carry one, and no pattern from two
// points. fixtures/oom-job's trainer wrote its first dumps tens of milliseconds apart while it loaded its dataset
// (interval dumps fire on allocation volume): its series cut to those dumps is such a series. The spans expected
// are the capture library's own clock in each dump's context.
describe('rates only from series that carry one (fixtures/oom-job, the trainer while it loads)', () => {
  const OOM = new URL('../../fixtures/oom-job/dumps', import.meta.url).pathname;
  const cut = (p: ProcessSeries, from: number, to: number): ProcessSeries => ({
    ...p,
    snapshots: p.snapshots.slice(from, to),
  });
  const spanMs = (p: ProcessSeries): number =>
    Math.round(p.snapshots[p.snapshots.length - 1].context!.timeRealMs! - p.snapshots[0].context!.timeRealMs!);

  it('two dumps: a change, no rate and no pattern; three dumps within a tenth of a second: no rate per second', async () => {
    const { collectInputFiles } = await import('../../node/io/node-files.js');
    const { endRate } = await import('./postmortem.js');
    const job = await loadJob(await collectInputFiles([OOM]));
    const trainer = job.processes.reduce((a, b) => (b.snapshots.length > a.snapshots.length ? b : a));
    // the first pair 40–60 ms apart, and three dumps under 100 ms, as the dumps' contexts say
    const first = [0, 1, 2, 3].map((i) => trainer.snapshots[i].context!.timeRealMs!);
    const three = first[3] - first[1] < 100 ? 1 : 0;
    expect(first[3 + three - 1] - first[three]).toBeLessThan(100);

    const two = cut(trainer, 0, 2);
    const ms = spanMs(two);
    expect(ms).toBeLessThan(100);
    // the dataset being loaded: the heap grew between the two dumps (3.05 → 5.33 MiB)
    expect(two.snapshots[1].live.bytes).toBeGreaterThan(two.snapshots[0].live.bytes + 2 ** 20);
    for (const s of processPatterns(two).stacks) {
      expect(s.pattern).toBe('unknown');
      expect(s.hasRate).toBe(false);
      expect(s.slopePerSecond).toBeNull();
      expect(s.lateSlopePerSecond).toBeNull();
      expect(s.rateNote).toBe(`2 dumps in ${ms} ms: no rate`);
    }
    const end2 = endRate(two);
    expect(end2.rate).toBeNull();
    expect(end2.note).toBe(`2 dumps in ${ms} ms: no rate`);

    const burst = cut(trainer, three, three + 3);
    const ms3 = spanMs(burst);
    const moved = processPatterns(burst).stacks.filter((s) => s.pattern !== 'flat' && s.pattern !== 'unknown');
    expect(moved.length).toBeGreaterThan(0);
    for (const s of moved) {
      expect(s.hasRate).toBe(true); // per dump: three points carry a slope
      expect(s.slopePerSecond).toBeNull();
      expect(s.lateSlopePerSecond).toBeNull();
      expect(s.rateNote).toBe(`3 dumps in ${ms3} ms: no rate per second`);
    }
    const end3 = endRate(burst);
    expect(end3.rate!.perSecond).toBeNull();
    expect(end3.note).toBe(`3 dumps in ${ms3} ms: no rate per second`);

    // the whole series (38 dumps over 26 s) carries its rate per second
    const whole = endRate({ ...trainer, snapshots: trainer.snapshots.slice(0, -1) });
    expect(whole.rate!.perSecond).not.toBeNull();
  });
});
