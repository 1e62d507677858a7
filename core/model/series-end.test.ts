// The one rule of where a series ends (series-end.ts), on the real kernel-OOM job (fixtures/oom-job): the trainer
// and the two loaders the trainer stopped wrote their final dumps at exit, after Python freed their objects; the
// loader the kernel killed wrote none. Every consumer reads the series without those dumps and marks them: the
// app's summary, Suspects sparklines, stack panel and Growth table, and the CLI's `top`, `diff` and `summary`.
// Expected figures from the workload's arithmetic (expected.json: 256 KiB of history a step, its rate, the kill's
// time and step), never from our own output.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from './model.js';
import { seriesEndIndex, seriesIndexes, teardownIndex } from './series-end.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { runCaptured, runJson } from '../../node/cli/run-captured.js';
import { QuerySession } from '../query/session.js';
import { suspectsResult } from '../query/suspects.js';
import { stackDetail } from '../query/series.js';
import { growthTable } from '../query/growth-table.js';
import type { ViewOptions } from './vocab.js';
import { buildReport } from '../report/build-report.js';

const HERE = resolve(import.meta.dirname, '..', '..', 'fixtures', 'oom-job');
const DUMPS = join(HERE, 'dumps');
const VIEW: ViewOptions = { mode: 'python-first', hideAllocator: true };

interface Expected {
  kill: { pid: number; seenByTrainerAt: { realtime: number }; trainerStep: number };
  leak: { function: string; stepBytes: number; historyBytes: number; bytesPerSecond: number };
  trainer: { pid: number };
  processes: { role: string; pid: number; fate: string; exit: unknown }[];
}

let job: Job;
let e: Expected;
beforeAll(async () => {
  job = await loadJob(await collectInputFiles([DUMPS]));
  e = JSON.parse(readFileSync(join(HERE, 'expected.json'), 'utf8')) as Expected;
}, 120_000);

const proc = (pid: number) => job.processes.find((p) => p.pid === pid)!;
const trainerIndex = () => job.processes.findIndex((p) => p.pid === e.trainer.pid);

/**
 * The history StepLog.add held at a moment before the kill, by the workload's arithmetic: at the kill it held
 * trainerStep + 1 steps of stepBytes, and it grew at bytesPerSecond before.
 */
const historyAt = (realtimeS: number): number =>
  (e.kill.trainerStep + 1) * e.leak.stepBytes - e.leak.bytesPerSecond * (e.kill.seenByTrainerAt.realtime - realtimeS);

describe('the series ends before an exit dump after teardown (fixtures/oom-job)', () => {
  it('finds the exit dumps of the processes that ran Python to its exit, and none for the killed loader', () => {
    for (const w of e.processes) {
      const p = proc(w.pid);
      const t = teardownIndex(p);
      // processes that exited (the trainer, the loaders it stopped with SIGTERM) finalized Python before the dump
      if (w.exit !== null) {
        expect(t, w.role).toBe(p.snapshots.length - 1);
        expect(p.snapshots[t].trigger).toBe('final');
        expect(seriesEndIndex(p), w.role).toBe(t - 1);
        expect(seriesIndexes(p)).not.toContain(t);
      } else {
        expect(w.pid).toBe(e.kill.pid);
        expect(t, w.role).toBe(-1);
        expect(seriesEndIndex(p)).toBe(p.snapshots.length - 1);
      }
    }
  });

  it("the app's figures read the series: the process table, the Suspects sparklines, the stack panel, the Growth table", () => {
    const s = new QuerySession();
    const sum = s.open(job);
    const ti = trainerIndex();
    const trainer = job.processes[ti];
    const end = seriesEndIndex(trainer);
    const row = sum.processes[ti];
    expect(row.seriesEnd).toBe(end);
    // live at the end and growth: the last interval dump's, not the exit dump's 0.5 MiB
    expect(row.lastLiveBytes).toBe(trainer.snapshots[end].live.bytes);
    expect(row.lastLiveBytes - row.firstLiveBytes).toBeGreaterThan(100 * 2 ** 20);
    expect(row.snapshots.filter((x) => x.afterTeardown).map((x) => x.index)).toEqual([end + 1]);

    const top = suspectsResult(s, 5, VIEW).rows[0];
    expect(top.label).toBe(e.leak.function);
    const m = top.members[0];
    expect(m.pid).toBe(e.trainer.pid);
    expect(m.exitDump).toBe(end + 1);
    // the member's figures end at the series' end: its last bytes are the sparkline's point there
    expect(m.lastBytes).toBeCloseTo(m.series[end], 0);
    const t = trainer.snapshots[end].context!.timeRealMs! / 1000;
    const want = historyAt(t);
    expect(Math.abs(m.lastBytes - want)).toBeLessThan(3 * m.sigmaBytes);
    expect(m.series[end + 1]).toBe(0); // Python freed the history: the marked point, not the end

    const panel = stackDetail(s, { proc: ti, stackId: m.stackId, base: 0, target: end, view: VIEW });
    expect(panel.exitDump).toBe(end + 1);
    expect(panel.targetBytes).toBeCloseTo(m.lastBytes, 0);

    // the Growth table's steadiness is over the series: the leak grew in every interval, so it is positive (an
    // exit dump read as the end made it 0: "ended lower")
    const g = growthTable(s, { proc: ti, base: 0, target: end, view: VIEW, limit: 50 });
    const leak = g.stacks.find((r) => r.members.includes(m.stackId))!;
    expect(leak.steadiness).toBeGreaterThan(0);
  });

  it("the report's default target is each process's series end", () => {
    const { job: header } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 3 },
    );
    job.processes.forEach((p, k) => expect(header.processes[k].target, p.key).toBe(seriesEndIndex(p)));
    const ti = trainerIndex();
    expect(header.processes[ti].target).toBe(teardownIndex(job.processes[ti]) - 1);
  });

  it('`top`, `diff` and `binaries` default to the series end and say so; --snapshot/--target name the exit dump; `summary` marks it', async () => {
    const trainer = proc(e.trainer.pid);
    const end = trainer.snapshots[seriesEndIndex(trainer)];
    const exit = trainer.snapshots[teardownIndex(trainer)];
    type Top = { processes: { pid: number; snapshot: { seq: number } }[]; stacks: StackOut[] };
    type StackOut = { pid: number; liveBytes: number; frames: { function: string | null }[] };
    const top = await runJson<Top>('top', DUMPS, '--pid', String(e.trainer.pid), '-n', '3', '--json');
    expect(top.processes[0].snapshot.seq).toBe(end.seq);
    const leak = top.stacks.find((x) => x.frames.some((f) => f.function === e.leak.function))!;
    const want = historyAt(end.context!.timeRealMs! / 1000);
    // σ of a sampled record of 256 KiB objects at jemalloc's 512 KiB sampling: well within 10 % of ~108 MiB
    expect(Math.abs(leak.liveBytes - want) / want).toBeLessThan(0.1);
    const text = await runCaptured('top', DUMPS, '--pid', String(e.trainer.pid), '-n', '1');
    expect(text.out).toContain(`the exit dump after teardown, ${exit.file}, is left out: --snapshot ${exit.seq}`);
    const asked = await runJson<Top>(
      'top',
      DUMPS,
      '--pid',
      String(e.trainer.pid),
      '--snapshot',
      String(exit.seq),
      '--json',
    );
    expect(asked.processes[0].snapshot.seq).toBe(exit.seq);
    expect(asked.stacks.some((x) => x.frames.some((f) => f.function === e.leak.function))).toBe(false);

    type Diff = {
      processes: { target: { seq: number } }[];
      stacks: (StackOut & { deltaBytes: number; sigmaBytes: number })[];
    };
    const diff = await runJson<Diff>('diff', DUMPS, '--pid', String(e.trainer.pid), '-n', '3', '--json');
    expect(diff.processes[0].target.seq).toBe(end.seq);
    expect(diff.stacks[0].frames.some((f) => f.function === e.leak.function)).toBe(true);
    expect(Math.abs(diff.stacks[0].deltaBytes - want)).toBeLessThan(3 * diff.stacks[0].sigmaBytes);

    type Summary = { processes: { pid: number; snapshots: { seq: number; afterTeardown?: boolean }[] }[] };
    const sum = await runJson<Summary>('summary', DUMPS, '--json');
    for (const w of e.processes) {
      const marked = sum.processes.find((p) => p.pid === w.pid)!.snapshots.filter((x) => x.afterTeardown);
      expect(marked.length, w.role).toBe(w.exit !== null ? 1 : 0);
    }
    type Bin = { processes: { snapshot: { seq: number } }[] };
    const bin = await runJson<Bin>('binaries', DUMPS, '--pid', String(e.trainer.pid), '--json');
    expect(bin.processes[0].snapshot.seq).toBe(end.seq);
    const plain = await runCaptured('summary', DUMPS, '--pid', String(e.trainer.pid));
    expect(plain.out).toMatch(/exit\s+dump after teardown: not in the series/);
  }, 120_000);
});
