// The end of a load ranks the job once: the post-mortem in the summary and the Suspects view's request that follows
// share the session's ranking (core/query/session.ts rankOf), which is rankJob's of the same processes. On a job
// with a teardown dump the post-mortem ranks the job less it, separately, as before. rankJob is counted through a
// module mock; the answers are compared with a session-less post-mortem (plain rankJob).
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { InputFile } from '../formats/input-file.js';
import { nodeInputFile } from '../../node/io/node-files.js';
import { JOB_FIXTURE, jobFiles } from '../../fixtures/job/job-fixture.js';

const calls = vi.hoisted(() => ({ n: 0 }));
vi.mock('../stats/suspects.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../stats/suspects.js')>();
  return {
    ...orig,
    rankJob: (...a: Parameters<typeof orig.rankJob>) => {
      calls.n++;
      return orig.rankJob(...a);
    },
  };
});

const { loadJob } = await import('../load/load-job.js');
const { QuerySession } = await import('./session.js');
const { suspectsResult } = await import('./suspects.js');
const { jobPostmortem } = await import('./job-summary.js');
const { withoutTeardownDumps } = await import('../model/series-end.js');

const VIEW = { mode: 'python-first', hideAllocator: true } as const;
const TIMES = { loadMs: 0, bytesTotal: 0, waitMs: 0 };

function oomFiles(): InputFile[] {
  const here = join(JOB_FIXTURE, '..', 'oom-job');
  const walk = (dir: string): InputFile[] =>
    readdirSync(dir)
      .sort()
      .flatMap((name) => {
        const abs = join(dir, name);
        const rel = relative(here, abs);
        if (rel.startsWith('workload') || /\.(sh|ts|md|json)$/.test(rel)) return [];
        const st = statSync(abs);
        return st.isDirectory() ? walk(abs) : [nodeInputFile(abs, `oom-job/${rel}`, st.size, st.mtimeMs)];
      });
  return walk(here);
}

describe("the load's end ranks the job once", () => {
  it.each([
    ['fixtures/job (no teardown dump)', jobFiles, 1],
    ['fixtures/oom-job (teardown dumps)', oomFiles, 2],
  ] as const)('%s', async (_name, files, rankings) => {
    const job = await loadJob(files());
    const teardown = withoutTeardownDumps(job).teardown.length;
    expect(teardown > 0).toBe(rankings === 2);
    const s = new QuerySession();
    calls.n = 0;
    const summary = s.finishLoad(job, TIMES);
    const suspects = suspectsResult(s, 200, VIEW);
    expect(calls.n).toBe(rankings);
    // the same answers as a post-mortem and a ranking made each on their own
    calls.n = 0;
    expect(summary.postmortem).toEqual(jobPostmortem(job, null));
    const fresh = new QuerySession();
    fresh.open(job);
    expect(suspectsResult(fresh, 200, VIEW)).toEqual(suspects);
    expect(summary.postmortem?.verdict).toBeTruthy();
    // a typed limit makes the post-mortem again without ranking again (no teardown dump)
    calls.n = 0;
    const limited = s.setLimit({ bytes: 8 * 2 ** 30, source: 'typed' });
    expect(calls.n).toBe(rankings - 1);
    expect(limited).toEqual(jobPostmortem(job, { bytes: 8 * 2 ** 30, source: 'typed' }));
  });
});

describe("a one-question session (the CLI's report) ranks before the symbols are read", () => {
  it.each([
    ['fixtures/job (no teardown dump)', jobFiles],
    ['fixtures/oom-job (teardown dumps)', oomFiles],
  ] as const)('%s: ranked once, ahead; the verdict then reads that ranking', async (_name, files) => {
    const job = await loadJob(files());
    const s = new QuerySession();
    s.attach(job);
    calls.n = 0;
    s.rankBeforeSymbols();
    expect(calls.n).toBe(1);
    // the report's verdict (read once the job is symbolized) ranks nothing again, and equals a session-less one
    const pm = s.postmortem();
    expect(calls.n).toBe(1);
    expect(pm).toEqual(jobPostmortem(job, null));
    expect(pm?.verdict).toBeTruthy();
    // dropped: the next question ranks anew
    calls.n = 0;
    s.dropRankings();
    s.postmortem();
    expect(calls.n).toBe(1);
  });
});

describe('a loading job ranked process by process', () => {
  it("the load's end merges the parts made ahead, and a process timed anew after its part is ranked again", async () => {
    const job = await loadJob(jobFiles());
    const s = new QuerySession();
    // as core/engine/progressive-load.ts does with each process read whole
    for (const p of job.processes) s.rankAhead(p);
    // the load then times one process's dumps from a log (core/load/evidence-load.ts timeDumpsFromLogs): its rates
    // follow the new times, so its part is made again
    const p = job.processes.find((q) => q.snapshots.length >= 4)!;
    const shifted = p.snapshots.map((snap) => ({ ...snap }));
    const before = structuredClone(jobPostmortem(job, null));
    shifted.forEach((snap, i) => {
      snap.context = null;
      snap.mtimeMs = null;
      snap.logTime = { ms: 1_700_000_000_000 + i * 60_000, file: 'job.log', line: i + 1 }; // one dump a minute
    });
    p.snapshots = shifted;
    const fresh = jobPostmortem(job, null);
    expect(fresh).not.toEqual(before);
    const summary = s.finishLoad(job, TIMES);
    expect(summary.postmortem).toEqual(fresh);
  });
});
