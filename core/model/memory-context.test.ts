// The heap estimate beside jemalloc's and the kernel's figures, the gap's split and the process tree,
// on the real fixture runs (fixtures/python/py3XX: the workload forks one child).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { loadJob } from '../load/load-job.js';
import { memoryGap, memoryPoint, processLimit, processParents, processTreeOrder } from './memory-context.js';
import { commandName } from './process-name.js';
import { PY_FIXTURES } from '../../fixtures/python/fixture-helpers.js';

describe('memory context on the real job run (fixtures/job)', () => {
  it("the trainer holds calloc'd weights never written: RSS below allocated, and the gap says why", async () => {
    const { jobFiles, expectedJob } = await import('../../fixtures/job/job-fixture.js');
    const job = await loadJob(jobFiles());
    const trainer = expectedJob().processes.find((e) => e.role === 'trainer')!;
    const p = job.processes.find((q) => q.pid === trainer.pid)!;
    const last = memoryPoint(p.snapshots[p.snapshots.length - 1]);
    const g = memoryGap(last)!;
    // the workload's own count of what it holds at the end (weights, replay, optimizer state: bytes(),
    // i.e. calloc, of fresh large extents); jemalloc's allocated includes at least that
    const held = Object.values(trainer.end!.sites).reduce((a, b) => a + b, 0);
    expect(last.allocated as number).toBeGreaterThan(held);
    expect(last.rss as number).toBeLessThan(held);
    expect(g.gap).toBeLessThan(0);
    expect(g.message).toMatch(/not resident/);
  });
});

describe('memory context on the real py312 run', () => {
  it('the forked child hangs under its parent; the tree puts the parent first', async () => {
    const job = await loadJob(await collectInputFiles([join(PY_FIXTURES, 'py312')]));
    // the workload's own record of each process's pid and parent pid
    const rows = readFileSync(join(PY_FIXTURES, 'py312', 'context-expected.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pid: number; ppid: number });
    const childPid = rows.find((r) => rows.some((q) => q.pid === r.ppid))!.pid;
    const parents = processParents(job.processes);
    const child = job.processes.find((p) => p.pid === childPid)!;
    const parent = job.processes.find((p) => p.pid !== childPid)!;
    expect(parents.get(child.key)).toBe(parent.key);
    expect(parents.get(parent.key)).toBeNull();
    const order = processTreeOrder(job.processes);
    expect(order.map((o) => [o.process.key, o.depth])).toEqual([
      [parent.key, 0],
      [child.key, 1],
    ]);
    expect(commandName(['/usr/bin/python3.12', '-W', 'ignore', '/srv/x.py', '--steps', '3'])).toBe('python3.12 x.py');
  });

  it('the gap RSS − allocated splits into fragmentation, unpurged and outside parts that add up', async () => {
    const job = await loadJob(await collectInputFiles([join(PY_FIXTURES, 'py312')]));
    for (const p of job.processes) {
      for (const s of p.snapshots) {
        const m = memoryPoint(s);
        expect(m.heapEstimate).toBe(s.live.bytes);
        const g = memoryGap(m)!;
        expect(g.gap).toBe((m.rss as number) - (m.allocated as number));
        // jemalloc's invariants allocated ≤ active ≤ resident hold, and RSS (which includes the
        // interpreter's own pages) exceeds resident, so no part was clamped and they add up exactly
        expect(m.allocated as number).toBeLessThanOrEqual(m.active as number);
        expect(m.active as number).toBeLessThanOrEqual(m.resident as number);
        expect((g.parts.fragmentation as number) + (g.parts.unpurged as number) + (g.parts.outside as number)).toBe(
          g.gap,
        );
        expect(g.message).toMatch(/^RSS .* − allocated .* = /);
      }
      // this machine's cgroup has no memory limit ("max"): no limit line
      expect(processLimit(p)).toBeNull();
    }
  });
});
