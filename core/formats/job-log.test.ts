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
    const kills = log.events.filter((e) => e.kind !== 'exit');
    expect(kills).toHaveLength(1);
    const e = kills[0];
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

  it("the watchdog-job fixture: the watchdog's kill line, the launcher's exit codes, the workers' roles", () => {
    const wd = new URL('../../fixtures/watchdog-job/', import.meta.url);
    const ex = JSON.parse(readFileSync(new URL('expected.json', wd), 'utf8')) as {
      limitBytes: number;
      kill: { pid: number; role: string; vmrssBytes: number; jobBytes: number; watchdogLine: number };
      workers: { role: string; pid: number; exitcode: number; exitLine: number; startedLine: number }[];
    };
    const dog = parseJobLog(readFileSync(new URL('logs/watchdog.log', wd), 'utf8'))!;
    expect(dog.events).toEqual([
      expect.objectContaining({
        source: 'watchdog',
        kind: 'oom',
        line: ex.kill.watchdogLine,
        pids: [ex.kill.pid],
        name: ex.kill.role,
        rssBytes: ex.kill.vmrssBytes,
        jobBytes: ex.kill.jobBytes,
        limitBytes: ex.limitBytes,
      }),
    ]);
    const launcher = parseJobLog(readFileSync(new URL('logs/launcher.log', wd), 'utf8'))!;
    for (const w of ex.workers) {
      const e = launcher.events.find((x) => x.line === w.exitLine)!;
      expect(e).toMatchObject({
        source: 'launcher',
        pids: [w.pid],
        exitCode: w.exitcode,
        signal: -w.exitcode,
        name: w.role,
      });
      expect(e.kind).toBe(w.exitcode === -9 ? 'signal' : 'teardown');
      expect(launcher.roles).toContainEqual(expect.objectContaining({ pid: w.pid, role: w.role, line: w.startedLine }));
    }
    const workers = parseJobLog(readFileSync(new URL('logs/job.log', wd), 'utf8'))!;
    expect(workers.events).toEqual([]);
    expect(new Map(workers.roles.map((r) => [r.pid, r.role]))).toEqual(new Map(ex.workers.map((w) => [w.pid, w.role])));
  });

  it("launchers' lines as their code writes them: multiprocessing's repr, torchrun's failure and teardown, Ray's worker death", () => {
    // multiprocessing/process.py BaseProcess.__repr__; torch/distributed/elastic/multiprocessing/api.py
    // ("failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s", "Sending process %s closing signal %s") and
    // errors/__init__.py (the summary's "exitcode  : {exitcode} (pid: {pid})", "Signal {n} ({name}) received by PID
    // {pid}"); the raylet's worker-death message
    const text = [
      "<Process name='rollout-1' pid=11649 parent=11640 stopped exitcode=-SIGKILL>",
      '[2026-12-01 20:37:30,001] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 5101) of binary: /usr/bin/python3',
      '[2026-12-01 20:37:30,002] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 5102 closing signal SIGTERM',
      '  exitcode  : -9 (pid: 5101)',
      '  traceback : Signal 9 (SIGKILL) received by PID 5101',
      '(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker PID: 7001 Worker exit type: SYSTEM_ERROR Worker exit detail: The leased worker has unrecoverable failure. (1) The process is killed by SIGKILL by OOM killer due to high memory usage.',
      'worker loader-1 pid=42 exited with exit code 0',
    ].join('\n');
    const log = parseJobLog(text)!;
    expect(log.events.map((e) => [e.source, e.kind, e.pids, e.exitCode ?? null, e.signal ?? null])).toEqual([
      ['launcher', 'signal', [11649], -9, 9],
      ['torchrun', 'signal', [5101], -9, 9],
      ['torchrun', 'teardown', [5102], null, 15],
      ['torchrun', 'signal', [5101], -9, 9],
      ['torchrun', 'signal', [5101], null, 9],
      ['ray', 'oom', [7001], null, null],
      ['launcher', 'exit', [42], 0, null],
    ]);
    expect(log.events[1].atMs).toBe(Date.UTC(2026, 11, 1, 20, 37, 30, 1));
    expect(log.roles).toContainEqual({ pid: 11649, role: 'rollout-1', line: 1, count: 1 });
  });

  it('a line of a format not known with kill words: kept with every number that could be a pid; other lines are not', () => {
    const text = [
      '[node-b] 12:00:01 supervisor: sent SIGKILL to 31337 after 120 s over budget (4096 MiB)',
      'step 100 loss 0.25',
      'Memory cgroup out of memory: Killed process 23054 (actor-2) total-vm:1kB', // the kernel reader's line
    ].join('\n');
    const log = parseJobLog(text)!;
    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({ source: 'unknown', kind: 'unknown', line: 1 });
    expect(log.events[0].pids).toContain(31337);
    expect(log.events[0].pids).not.toContain(4096);
    expect(log.events[0].pids).not.toContain(12);
    expect(parseJobLog('step 1 loss 0.3\nepoch 2 done\n')).toBeNull();
    // "oom" inside a name or a path is no word of a kill (the oom-job's own cgroup, in dmesg -T's stats line)
    expect(parseJobLog('[Tue Dec  1 20:37:29 2026] Memory cgroup stats for /heaplens-oom-job-28289:\n')).toBeNull();
    expect(parseJobLog('copied /usr/bin/kill.1234 to the node\n')).toBeNull();
  });

  it("dump times: a line naming a dump's file with a time (a job's own line, a listing), compressed or not, in any folder", () => {
    const log = parseJobLog(
      [
        '2026-12-07 05:08:10,152 INFO wrote heap profile /scratch/dumps/train.4242.3.m3.heap (step 300)',
        '2026-12-07T05:08:11.5+01:00 123 ./train.4242.4.m4.heap.gz',
        'no time: train.4242.5.m5.heap',
      ].join('\n'),
    )!;
    expect(log.dumpTimes).toEqual([
      { name: 'train.4242.3.m3.heap', atMs: Date.UTC(2026, 11, 7, 5, 8, 10, 152), line: 1 },
      { name: 'train.4242.4.m4.heap', atMs: Date.UTC(2026, 11, 7, 4, 8, 11, 500), line: 2 },
    ]);
  });
});
