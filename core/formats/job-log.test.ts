// Kill lines of job logs. The PyTorch line is the fixture's real job.log (fixtures/oom-job: the trainer
// prints PyTorch's wording when waitpid reports the kernel's SIGKILL); the others are the tools' own
// examples: Ray's docs (doc/source/ray-core/scheduling/ray-oom-prevention.rst), SLURM sites' user docs
// quoting slurmstepd, `kubectl describe pod` / `kubectl get pod -o json` as Kubernetes' docs print them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lineTime, looksLikeJobLog, parseJobLog } from './job-log.js';

const dir = new URL('../../fixtures/oom-job/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as {
  kill: { pid: number; seenByTrainerAt: { realtime: number } };
};

describe('job logs', () => {
  it("the fixture's job.log: PyTorch's DataLoader line names the killed pid, at the trainer's time", () => {
    const log = parseJobLog(readFileSync(new URL('logs/job.log', dir), 'utf8'))!;
    expect(log.events).toHaveLength(1);
    const e = log.events[0];
    expect(e).toMatchObject({ source: 'pytorch', kind: 'signal', pids: [expected.kill.pid] });
    expect(Math.abs(e.atMs! - expected.kill.seenByTrainerAt.realtime * 1000)).toBeLessThan(1000);
  });

  it("Ray's memory monitor: the task's pid, kind oom; the raylet's summary: a count", () => {
    const text =
      'ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n' +
      'Memory on the node (IP: 10.0.62.231, ID: e5d953ef03e55e26f13973ea1b5a0fd0ecc729cd820bc89e4aa50451) where the task (task ID: 43534ce9375fa8e4cd0d0ec285d9974a6a95897401000000, name=allocate_memory, pid=11362, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 6f2ec5c8b0d5f5a66572859faf192d36743536c2e9702ea58084b037) because it was the most recently scheduled task\n' +
      '(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 10 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: e5d9, IP: 10.0.62.231) over the last time period.\n';
    const log = parseJobLog(text)!;
    expect(log.events.map((e) => [e.source, e.kind, e.pids, e.count])).toEqual([
      ['ray', 'oom', [], null],
      ['ray', 'oom', [11362], null],
      ['ray', 'oom', [], 10],
    ]);
    expect(log.events[1].name).toBe('allocate_memory');
    expect(log.events[2].atMs).toBe(Date.UTC(2023, 3, 9, 7, 23, 59, 445));
  });

  it("SLURM's slurmstepd lines, old and new wording, and the shell's Killed line", () => {
    const text =
      '/var/spool/slurmd/job997857/slurm_script: line 11: 33333 Killed                  ./mybinary\n' +
      'slurmstepd: error: Detected 1 oom-kill event(s) in step 997857.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\n' +
      '[2026-02-24T23:34:12.229] error: Detected 2 oom_kill events in StepId=1538853.0. Some of the step tasks have been OOM Killed.\n' +
      'srun: error: curie-gpu003: task 1: Out Of Memory\n';
    const log = parseJobLog(text)!;
    expect(log.events.map((e) => [e.source, e.kind, e.pids, e.count])).toEqual([
      ['shell', 'signal', [33333], null],
      ['slurm', 'oom', [], 1],
      ['slurm', 'oom', [], 2],
      ['slurm', 'oom', [], null],
    ]);
    expect(log.events[2].atMs).toBe(Date.UTC(2026, 1, 24, 23, 34, 12, 229));
  });

  it('Kubernetes: describe text and pod JSON (OOMKilled, exit code 137)', () => {
    const describe =
      'Name:         trainer-0\nContainers:\n  trainer:\n    Container ID:  containerd://ab\n    State:          Running\n' +
      '    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n' +
      '      Started:      Mon, 01 Dec 2026 20:30:00 +0000\n      Finished:     Mon, 01 Dec 2026 20:37:30 +0000\n';
    const d = parseJobLog(describe)!;
    expect(d.events).toHaveLength(1);
    expect(d.events[0]).toMatchObject({
      source: 'kubernetes',
      kind: 'oom',
      name: 'trainer',
      atMs: Date.UTC(2026, 11, 1, 20, 37, 30),
    });
    const pod = JSON.stringify(
      {
        kind: 'Pod',
        status: {
          containerStatuses: [
            {
              name: 'trainer',
              lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2026-12-01T20:37:30Z' } },
            },
            { name: 'sidecar', state: { running: {} } },
          ],
        },
      },
      null,
      1,
    );
    const j = parseJobLog(pod)!;
    expect(j.events).toHaveLength(1);
    expect(j.events[0]).toMatchObject({
      source: 'kubernetes',
      kind: 'oom',
      name: 'trainer',
      atMs: Date.UTC(2026, 11, 1, 20, 37, 30),
    });
    expect(j.events[0].line).toBeGreaterThan(1);
  });

  it('other text is no job log; hostile lines are bounded and named', () => {
    expect(looksLikeJobLog('step 1 loss 0.3\n')).toBe(false);
    expect(parseJobLog('nothing here')).toBeNull();
    const long =
      'x'.repeat(20000) +
      ' DataLoader worker (pid 5) is killed by signal: Killed.\n' +
      'DataLoader worker (pid 6) is killed by signal: Killed.\n';
    const log = parseJobLog(long)!;
    expect(log.warnings[0]).toMatchObject({ line: 1 });
    expect(log.events.map((e) => e.pids)).toEqual([[6]]); // the cut line's pid is past the read part
    expect(parseJobLog('{"reason": "OOMKilled", "broken": ')!.warnings[0].message).toMatch(/not valid JSON/);
    expect(lineTime('2026-12-01T21:00:00+01:00')).toBe(Date.UTC(2026, 11, 1, 20, 0, 0));
  });
});
