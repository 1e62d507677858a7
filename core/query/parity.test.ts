// Parity (issue 18): `heaplens top/diff/growth --json` and what the app's worker answers are the same rows for the
// same fixture and options, so the command line and the app cannot disagree silently. The CLI runs in-process
// (node/cli/main.ts); the app's side is what the worker computes: core/query/rows.ts over the worker's frame catalog
// and view options (core/frames/catalog.ts), the suspects ranking it shows (core/stats/suspects.ts rankJob), and the
// worker's own queries over a QuerySession (summary, suspects).
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runJson } from '../../node/cli/run-captured.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { loadDumps } from '../../node/cli/load-dumps.js';
import type { Job, ProcessSeries } from '../model/model.js';
import { lastCompleteIndex } from '../model/snapshot-status.js';
import { diffRows, snapshotRows, type RowKey } from './rows.js';
import { FrameCatalog } from '../frames/catalog.js';
import { rankJob } from '../stats/suspects.js';
import type { ViewOptions } from '../model/vocab.js';
import { JOB_FIXTURE } from '../../fixtures/job/job-fixture.js';
import { QuerySession } from './session.js';
import { suspectsResult } from './suspects.js';

const DUMPS = join(JOB_FIXTURE, 'dumps');
let job: Job;
beforeAll(async () => {
  // the CLI's own loader over the same folder: the same stack ids
  job = await loadDumps(await collectInputFiles([DUMPS]));
}, 120_000);

const cli = (...argv: string[]) => runJson<{ processes: unknown[]; stacks: Record<string, unknown>[] }>(...argv);

/** The worker's "same visible frames" key: its frame table's keys of the stack in the view. */
function appKey(p: ProcessSeries, view: ViewOptions): RowKey {
  const table = new FrameCatalog(p);
  return (id) => (table.dropped(id, view) ? null : table.stackKeys(id, view).join(','));
}

const members = (s: Record<string, unknown>): number[] => (s.stackIds as number[] | undefined) ?? [s.stackId as number];

// --stacks python: the frames both sides take from the PYFRAMES sidecars alone (no symbolization involved), at the
// CLI's default granularity (lines): the app's frame catalog keeps the lines of one function apart too (pprof's
// granularity=lines; where the two disagreed, lines won — issue 22 item 6).
const VIEW: ViewOptions = { mode: 'python', hideAllocator: true };

/** `top`/`diff` of one process in that view, every row (-n beyond any process's stack count). */
const rowsOf = (command: 'top' | 'diff', p: ProcessSeries) =>
  cli(command, DUMPS, '--pid', String(p.pid), '--stacks', 'python', '--no-symbols', '--json', '-n', '100000');

describe('CLI --json and the app give the same rows (fixtures/job)', () => {
  it('diff: the same rows, members, Δ and σ, in the same order', async () => {
    for (const p of job.processes.slice(0, 3)) {
      const r = await rowsOf('diff', p);
      const app = diffRows(p, 0, lastCompleteIndex(p), { key: appKey(p, VIEW), sigma: true, order: 'growth' }).rows;
      expect(r.stacks.length).toBe(app.length);
      r.stacks.forEach((s, i) => {
        expect(new Set(members(s))).toEqual(new Set(app[i].members));
        expect(s.deltaBytes).toBe(app[i].deltaBytes);
        expect(s.sigmaBytes as number).toBeCloseTo(app[i].sigmaDeltaBytes, 6);
        expect(s.status).toBe(app[i].status);
      });
    }
  });

  it('top: the same rows and live bytes for the last dump', async () => {
    for (const p of job.processes.slice(0, 3)) {
      const r = await rowsOf('top', p);
      const s = p.snapshots[p.snapshots.length - 1];
      const app = snapshotRows(s, s, appKey(p, VIEW)).rows;
      expect(r.stacks.length).toBe(app.length);
      r.stacks.forEach((x, i) => {
        expect(new Set(members(x))).toEqual(new Set(app[i].members));
        expect(x.liveBytes).toBe(app[i].liveBytes);
      });
    }
  });

  it('growth: the same job-wide suspects, in the same order, with the same scores', async () => {
    const r = await cli('growth', DUMPS, '--no-symbols', '--json', '-n', '15');
    // the ranked suspects (score > 0) lead both lists in one order; what follows fills the CLI's per-process listing
    const cliRanked = r.stacks.filter((s) => (s.score as number) > 0);
    const app = rankJob(job).stacks.filter((s) => s.score > 0);
    expect(cliRanked.length).toBeGreaterThan(0);
    expect(cliRanked.map((s) => [s.pid, s.stackId, s.score])).toEqual(
      app.slice(0, cliRanked.length).map((s) => [job.processes[s.processIndex].pid, s.stackId, s.score]),
    );
  });

  it("summary: the app's process table shows the snapshots, times and memory figures `heaplens summary --json` lists", async () => {
    const r = (await cli('summary', DUMPS, '--json')) as unknown as {
      processes: { pid: number; name: string; timeAxis: string; snapshots: Record<string, unknown>[] }[];
    };
    const app = new QuerySession();
    const sum = app.open(job);
    expect(r.processes.map((p) => p.pid)).toEqual(sum.processes.map((p) => p.pid));
    r.processes.forEach((cp, k) => {
      const ap = sum.processes[k];
      expect(ap.name).toBe(cp.name);
      expect(ap.time.axis).toBe(cp.timeAxis);
      expect(ap.snapshots.map((x) => [x.file, x.seq, x.liveBytes, x.liveObjects, x.complete, x.timeMs])).toEqual(
        cp.snapshots.map((x) => [x.file, x.seq, x.liveBytes, x.liveObjects, x.complete, x.timeMs]),
      );
      cp.snapshots.forEach((x, i) => {
        const m = x.memory as { allocated: number | null; rss: number | null; cgroupCurrent: number | null };
        expect(ap.snapshots[i].memory?.allocated ?? null).toBe(m.allocated);
        expect(ap.snapshots[i].memory?.rss ?? null).toBe(m.rss);
      });
    });
  });

  it("growth: the Suspects view's rows are the CLI's job-wide groups, in its order", async () => {
    const r = await cli('growth', DUMPS, '--no-symbols', '--json', '-n', '15');
    const app = suspectsResult(sessionOf(job), 15, VIEW);
    const cliTop = r.stacks.filter((s) => (s.score as number) > 0).map((s) => [s.pid, s.stackId]);
    // each ranked CLI stack is the top member of one Suspects row, in the same order
    const appTop = app.rows.filter((x) => x.score > 0).map((x) => [x.members[0].pid, x.members[0].stackId]);
    expect(appTop.slice(0, cliTop.length)).toEqual(cliTop.slice(0, appTop.length));
    expect(appTop.length).toBeGreaterThan(0);
  });
});

function sessionOf(j: Job): QuerySession {
  const s = new QuerySession();
  s.open(j);
  return s;
}
