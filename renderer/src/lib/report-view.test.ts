// A reopened report as the app's view data: totals stay whole (stacks + other), the flame tree is consistent,
// noted stacks resolve by their addresses.
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../../analysis/load-job.ts';
import { collectInputFiles } from '../../../node-io/node-files.ts';
import { fixturePath } from '../../../tools/fixtures.ts';
import { processFrameSource } from '../../../export/frames.ts';
import { buildReportData } from '../../../report/build-report.ts';
import { reportToSession } from '../../../report/reopen.ts';
import { emptySession } from '../../../session/schema.ts';
import { createNote, stackTarget } from '../../../session/notes.ts';
import { reportFlame, reportGrowth, reportSeries, reportStackDetail, reportStackTarget, reportSummary, resolveReportStack } from './report-view.ts';

async function report() {
  const job = await loadJob(await collectInputFiles([fixturePath('job')]));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  const last = p.snapshots[p.snapshots.length - 1];
  const leak = last.stackIds[[...last.liveBytes].indexOf(Math.max(...last.liveBytes))];
  const session = { ...emptySession('t'), notes: [createNote(stackTarget(p, leak, 'leak'), 'n', '#e4572e', new Date('2026-11-29T10:00:00Z'))] };
  const { data } = buildReportData(
    job.processes.map((proc) => ({ proc, frames: processFrameSource(proc) })),
    { topN: 3, session },
  );
  return { data, p, leakTarget: stackTarget(p, leak) };
}

describe('report view data', () => {
  it('summary, growth totals, flame totals and series agree with the report', async () => {
    const { data, p } = await report();
    const s = reportSummary(data);
    expect(s.processes.map((x) => x.key)).toEqual(data.processes.map((x) => x.key));
    const pi = data.processes.findIndex((x) => x.key === p.key);
    const rp = data.processes[pi];
    const g = reportGrowth(data, pi);
    expect(g.targetTotal).toBeCloseTo(rp.snapshots[rp.target].liveBytes, 0);
    expect(g.baseTotal).toBeCloseTo(rp.snapshots[rp.base].liveBytes, 0);
    expect(g.stacks.reduce((a, r) => a + r.targetBytes, 0)).toBeCloseTo(g.targetTotal, 0);
    expect(g.stacks.some((r) => r.label.includes('other stacks'))).toBe(rp.other.stacks > 0);
    const f = reportFlame(data, pi, false);
    expect(f.targetGrand).toBeCloseTo(g.targetTotal, 0);
    expect(f.end[0]).toBe(f.size);
    for (let i = 1; i < f.size; i++) {
      expect(f.parent[i]).toBeLessThan(i);
      expect(f.end[i]).toBeLessThanOrEqual(f.end[f.parent[i]]);
      expect(f.frames[f.key[i]]).toBeDefined();
    }
    const d = reportFlame(data, pi, true);
    expect(d.baseGrand).toBeCloseTo(g.baseTotal, 0);
    const series = reportSeries(data, pi, 8);
    expect(series.values.at(-1)).toHaveLength(rp.snapshots.length);
    expect(reportStackDetail(data, pi, 0).frames.length).toBeGreaterThan(0);
  });
  it('noted stacks resolve by their addresses; report → session keeps the note', async () => {
    const { data, leakTarget } = await report();
    const r = resolveReportStack(data, leakTarget);
    expect(r).not.toBeNull();
    expect(reportStackTarget(data, r!.proc, r!.stackId)?.frames).toEqual(leakTarget.frames);
    const session = reportToSession(data);
    expect(session.readOnly).toBe(true);
    expect(session.notes).toHaveLength(1);
  });
});
