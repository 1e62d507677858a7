import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { parseDumpName } from '../formats/dump-filename.js';
import { QuerySession } from './session.js';
import { suspectsResult } from './suspects.js';
import { OPENING_VIEW, provisionalRanking, type ProvisionalRanking } from './provisional.js';

describe('the provisional ranking of a job while it loads', () => {
  it('ranks the dumps read so far of the process being read, with its final stack ids; the job loaded is the same', async () => {
    const files = fixtureFiles('job');
    // each process's dumps, counted from the file names (prefix.pid.seq…heap)
    const perProcess = new Map<string, number>();
    for (const f of files) {
      const n = parseDumpName(f.path);
      if (n) perProcess.set(`${n.prefix}.${n.pid}`, (perProcess.get(`${n.prefix}.${n.pid}`) ?? 0) + 1);
    }
    const total = [...perProcess.values()].reduce((a, b) => a + b, 0);
    const calls: { read: number; dumps: number; ranking: ProvisionalRanking; frames: Map<number, number[]> }[] = [];
    const job = await loadJob(files, {
      onDump(processes, dumps, soFar) {
        const reading = soFar();
        const ranking = provisionalRanking(processes, reading, total, 16);
        // the frames of each ranked stack of the process read in part, as they were then
        const frames = new Map<number, number[]>();
        for (const r of ranking.suspects.rows)
          for (const m of r.members)
            if (m.proc === processes.length) {
              const { offsets, frames: f } = reading.stacks;
              frames.set(m.stackId, Array.from(f.subarray(offsets[m.stackId], offsets[m.stackId + 1])));
            }
        calls.push({ read: processes.length, dumps, ranking, frames });
      },
    });
    const counts = job.processes.map((p) => p.snapshots.length);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    expect(sorted(counts)).toEqual(sorted([...perProcess.values()]));
    // every dump of a process but its last, in order, with the processes before it complete
    const expected = counts.flatMap((n, k) => Array.from({ length: n - 1 }, (_, i) => ({ read: k, dumps: i + 1 })));
    expect(calls.map(({ read, dumps }) => ({ read, dumps }))).toEqual(expected);
    for (const c of calls) {
      const done = counts.slice(0, c.read).reduce((a, b) => a + b, 0);
      expect(c.ranking.dumps).toBe(done + c.dumps);
      expect(c.ranking.dumpsTotal).toBe(total);
      expect(c.ranking.processes).toHaveLength(c.read + 1);
      expect(c.ranking.processes[c.read].snapshots).toHaveLength(c.dumps);
      // a ranked stack of the process read in part is the same stack in the process read whole
      const p = job.processes[c.read];
      for (const [id, f] of c.frames)
        expect(Array.from(p.stacks.frames.subarray(p.stacks.offsets[id], p.stacks.offsets[id + 1]))).toEqual(f);
    }
    // the ranking from every dump of the first process but its last ranks stacks (the fixture's leak grows early)
    expect(calls.some((c) => c.ranking.suspects.rows.length > 0)).toBe(true);
    // loading with provisional rankings along the way gives the job a load without them gives
    const plain = await loadJob(fixtureFiles('job'));
    const rank = (j: typeof job) => {
      const s = new QuerySession();
      s.open(j);
      return suspectsResult(s, 200, OPENING_VIEW);
    };
    expect(rank(job)).toEqual(rank(plain));
    expect(job.warnings).toEqual(plain.warnings);
    expect(job.processes.map((p) => [p.key, p.stacks.count, p.snapshots.map((s) => s.mapsSource)])).toEqual(
      plain.processes.map((p) => [p.key, p.stacks.count, p.snapshots.map((s) => s.mapsSource)]),
    );
  });
});
