// core/query/rows.ts on the real job fixture (fixtures/job), without a browser: what the worker answers for the
// Growth table and what `heaplens top`/`diff` print. Expected figures are the workload's own counters
// (expected.json) and jemalloc's sampling formula (fixtures/job/job-fixture.ts), not our output.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job, ProcessSeries } from '../model/model.js';
import { lastCompleteIndex } from '../model/snapshot-status.js';
import { diffRows, snapshotRows, type RowKey } from './rows.js';
import {
  dumpName,
  expectedJob,
  innermostPython,
  jobFiles,
  siteEstimate,
  type ExpectedJob,
} from '../../fixtures/job/job-fixture.js';

let job: Job;
let expected: ExpectedJob;
beforeAll(async () => {
  job = await loadJob(jobFiles());
  expected = expectedJob();
}, 120_000);

function byRole(role: string): ProcessSeries {
  const pid = expected.processes.find((e) => e.role === role)!.pid;
  return job.processes.find((p) => p.pid === pid)!;
}

/** One row per allocation site: the stack's innermost Python frame (an independent notion of "the same row"). */
const siteKey =
  (p: ProcessSeries): RowKey =>
  (id) => {
    const f = innermostPython(p, id);
    return f ? `${f.function}:${f.line}` : `native:${id}`;
  };

describe('core/query rows on fixtures/job', () => {
  it('diff: the leak of rollout-0 is one row whose Δ and σ are the site sums, within 3σ of the workload', () => {
    const p = byRole('rollout-0');
    const leak = expected.sites.leak;
    const base = 0;
    const target = lastCompleteIndex(p);
    const { rows, totals } = diffRows(p, base, target, { key: siteKey(p), sigma: true, order: 'growth' });
    const row = rows.find((r) => {
      const f = innermostPython(p, r.stackId);
      return f?.function === leak.function && f.line === leak.line;
    })!;
    expect(row).toBeDefined();
    // the leak grows most of all in this process
    expect(rows[0]).toBe(row);
    const b = siteEstimate(p, p.snapshots[base], leak.function, leak.line);
    const t = siteEstimate(p, p.snapshots[target], leak.function, leak.line);
    expect(row.deltaBytes).toBe(t.bytes - b.bytes);
    // σ of the row: the members' variances added (the formula, recomputed independently of sampling-error.ts)
    expect(row.sigmaDeltaBytes).toBeCloseTo(Math.sqrt(b.sigma ** 2 + t.sigma ** 2), 0);
    const e = expected.processes.find((x) => x.pid === p.pid)!;
    const first = e.dumps.find((d) => d.file === dumpName(p.snapshots[base].file))!;
    const truth = e.end!.sites.leak - (first.sites.leak[0] + first.sites.leak[1]) / 2;
    expect(Math.abs(row.deltaBytes - truth)).toBeLessThan(3 * row.sigmaDeltaBytes + 1);
    expect(row.withinNoise).toBe(false);
    expect(row.status).toBe('grown');
    // every stack that changed is in exactly one row, and the rows add up to the totals
    const members = rows.flatMap((r) => r.members);
    expect(new Set(members).size).toBe(members.length);
    expect(rows.reduce((a, r) => a + r.deltaBytes, 0)).toBe(totals.deltaBytes);
  });

  it('diff: the optimizer state (allocated at step 80) is a new row in the trainer; magnitude order puts |Δ| first', () => {
    const p = byRole('trainer');
    const opt = expected.sites.optimizer;
    const { rows } = diffRows(p, 0, lastCompleteIndex(p), { key: siteKey(p), sigma: true, order: 'magnitude' });
    const row = rows.find((r) => innermostPython(p, r.stackId)?.function === opt.function)!;
    expect(row.status).toBe('new');
    expect(row.baseBytes).toBe(0);
    // 2 × 8 MiB, sampled with p ≈ 1
    expect(Math.abs(row.targetBytes - 16_777_216)).toBeLessThan(3 * row.sigmaDeltaBytes + 0.01 * 16_777_216);
    for (let i = 1; i < rows.length; i++)
      expect(Math.abs(rows[i - 1].deltaBytes)).toBeGreaterThanOrEqual(Math.abs(rows[i].deltaBytes));
  });

  it('diff without σ (other sample types): no row is within noise', () => {
    const p = byRole('rollout-0');
    const { rows } = diffRows(p, 0, 1, { key: siteKey(p), sigma: false, order: 'growth' });
    expect(rows.every((r) => r.sigmaDeltaBytes === 0 && !r.withinNoise)).toBe(true);
  });

  it('top: rows of a snapshot add up to its records; the weights site is one row of ≈ 8 MiB', () => {
    const p = byRole('trainer');
    const s = p.snapshots[lastCompleteIndex(p)];
    const { rows, shownTotal } = snapshotRows(s, s, siteKey(p));
    expect(shownTotal).toBe(s.live.bytes);
    expect(rows.reduce((a, r) => a + r.records.length, 0)).toBe(s.stackIds.length);
    const w = expected.sites.weights;
    const row = rows.find((r) => innermostPython(p, r.stackId)?.function === w.function)!;
    expect(row.liveBytes).toBe(siteEstimate(p, s, w.function, w.line).bytes);
    expect(Math.abs(row.liveBytes - 8_388_608) / 8_388_608).toBeLessThan(0.05);
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].value).toBeGreaterThanOrEqual(rows[i].value);
  });

  it('a null key drops the stack from the rows and from the shown total', () => {
    const p = byRole('trainer');
    const s = p.snapshots[lastCompleteIndex(p)];
    const w = expected.sites.weights;
    const key = siteKey(p);
    const { rows, shownTotal } = snapshotRows(s, s, (id) =>
      innermostPython(p, id)?.function === w.function ? null : key(id),
    );
    const weights = siteEstimate(p, s, w.function, w.line).bytes;
    expect(weights).toBeGreaterThan(0);
    expect(shownTotal).toBeCloseTo(s.live.bytes - weights, 3);
    expect(rows.some((r) => innermostPython(p, r.stackId)?.function === w.function)).toBe(false);
  });
});
